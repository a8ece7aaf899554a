import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';

/** Swagger UI under /api/v1/swagger, with its scripts and styles from the service itself (works with no outside network). */
export const SWAGGER_UI_PREFIX = '/api/v1/swagger';

/** Only our own origin; Swagger UI sets inline styles, and shows images as data: URLs. */
const UI_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'self'; frame-ancestors 'none'; form-action 'self'";

function indexHtml(title: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<title>${title}</title>
<link rel="stylesheet" type="text/css" href="${SWAGGER_UI_PREFIX}/static/swagger-ui.css">
<link rel="stylesheet" type="text/css" href="${SWAGGER_UI_PREFIX}/static/index.css">
<link rel="icon" type="image/png" href="${SWAGGER_UI_PREFIX}/static/favicon-32x32.png" sizes="32x32">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${SWAGGER_UI_PREFIX}/static/swagger-ui-bundle.js" charset="UTF-8"></script>
<script src="${SWAGGER_UI_PREFIX}/static/swagger-ui-standalone-preset.js" charset="UTF-8"></script>
<script src="${SWAGGER_UI_PREFIX}/gerbang-init.js" charset="UTF-8"></script>
</body>
</html>
`;
}

// No validator (it would call validator.swagger.io); the token typed into "Authorize" is kept
// across reloads of this tab only.
function initJs(specUrl: string): string {
  return `window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: '${specUrl}',
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    persistAuthorization: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    plugins: [SwaggerUIBundle.plugins.DownloadUrl],
    layout: 'StandaloneLayout'
  });
};
`;
}

export interface SwaggerUiOptions {
  title: string;
  /** Where the page loads the OpenAPI document from. */
  specUrl: string;
  /** What the plugin's own page and /json show (default: the service's own document). */
  transformSpecification?: (own: Readonly<Record<string, unknown>>) => Record<string, unknown>;
}

/** GET /api/v1/swagger/index.html and the assets under /api/v1/swagger/static/, for both services. */
export async function registerSwaggerUi(app: FastifyInstance, options: SwaggerUiOptions): Promise<void> {
  const html = indexHtml(options.title);
  const init = initJs(options.specUrl);
  app.get(`${SWAGGER_UI_PREFIX}/index.html`, { schema: { hide: true }, config: { htmlPage: true } }, async (_request, reply) => {
    reply.header('content-security-policy', UI_CSP).type('text/html; charset=utf-8');
    return html;
  });
  app.get(`${SWAGGER_UI_PREFIX}/gerbang-init.js`, { schema: { hide: true } }, async (_request, reply) => {
    reply.type('application/javascript; charset=utf-8');
    return init;
  });
  await app.register(swaggerUi, {
    routePrefix: SWAGGER_UI_PREFIX,
    staticCSP: UI_CSP.replace("frame-ancestors 'none'", "frame-ancestors 'self'"),
    uiConfig: { validatorUrl: null },
    ...(options.transformSpecification ? { transformSpecification: options.transformSpecification } : {}),
  });
}
