import type { FastifyInstance } from 'fastify';
import type { DocsService } from './docs.service.js';
import type { OpenApiDocument } from './docs-merger.js';
import { registerSwaggerUi } from '../../../shared/http/swagger-ui.js';

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
    // Its own page (/api/v1/swagger/) and /json show the latest merged document too.
    await registerSwaggerUi(app, {
      title: 'Gerbang API',
      specUrl: '/api/v1/docs.json',
      transformSpecification: (own) => deps.docs.last ?? own,
    });
  };
}
