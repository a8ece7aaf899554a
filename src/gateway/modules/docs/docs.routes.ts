import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import type { DocsService } from './docs.service.js';
import type { OpenApiDocument } from './docs-merger.js';

const UI_PREFIX = '/api/v1/swagger';

/** Swagger UI, with its scripts and styles from the gateway itself (works with no outside network). */
const INDEX_HTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<title>Gerbang API</title>
<link rel="stylesheet" type="text/css" href="${UI_PREFIX}/static/swagger-ui.css">
<link rel="stylesheet" type="text/css" href="${UI_PREFIX}/static/index.css">
<link rel="icon" type="image/png" href="${UI_PREFIX}/static/favicon-32x32.png" sizes="32x32">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${UI_PREFIX}/static/swagger-ui-bundle.js" charset="UTF-8"></script>
<script src="${UI_PREFIX}/static/swagger-ui-standalone-preset.js" charset="UTF-8"></script>
<script src="${UI_PREFIX}/gerbang-init.js" charset="UTF-8"></script>
</body>
</html>
`;

// No validator (it would call validator.swagger.io); the token typed into "Authorize" is kept
// across reloads of this tab only.
const INIT_JS = `window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: '/api/v1/docs.json',
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

/** Only our own origin; Swagger UI sets inline styles, and shows images as data: URLs. */
const UI_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'self'; frame-ancestors 'none'; form-action 'self'";

export interface DocsDeps {
  docs: DocsService;
  ownDocument: () => unknown;
}

/** GET /api/v1/docs.json (merged OpenAPI 3) and GET /api/v1/swagger/index.html (Swagger UI). */
export function docsRoutes(deps: DocsDeps) {
  return async function (app: FastifyInstance) {
    app.get('/api/v1/docs.json', { schema: { hide: true } }, async (_request, reply) => {
      reply.header('cache-control', 'no-cache');
      return deps.docs.merged(deps.ownDocument() as OpenApiDocument);
    });
    app.get(`${UI_PREFIX}/index.html`, { schema: { hide: true }, config: { htmlPage: true } }, async (_request, reply) => {
      reply.header('content-security-policy', UI_CSP).type('text/html; charset=utf-8');
      return INDEX_HTML;
    });
    app.get(`${UI_PREFIX}/gerbang-init.js`, { schema: { hide: true } }, async (_request, reply) => {
      reply.type('application/javascript; charset=utf-8');
      return INIT_JS;
    });
    // The plugin serves the Swagger UI assets from the npm package under /api/v1/swagger/static/.
    // Its own page (/api/v1/swagger/) and /json show the latest merged document too.
    await app.register(swaggerUi, {
      routePrefix: UI_PREFIX,
      staticCSP: UI_CSP.replace("frame-ancestors 'none'", "frame-ancestors 'self'"),
      uiConfig: { validatorUrl: null },
      transformSpecification: (own: Record<string, unknown>) => deps.docs.last ?? own,
    });
  };
}
