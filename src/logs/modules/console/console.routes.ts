// The web console (docs/console.md): static files built from web/ by scripts/build-console.mjs
// into `console/` beside the compiled service (dist/console, or each `npm start` build). Hashed
// assets are cached for a year; index.html is never cached. The console talks only to the public API.
import { existsSync, readFileSync } from 'node:fs';
import { join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { dict } from '../../../shared/dict.js';
import { chosenEncoding, compressAsset, MIN_COMPRESSED_BYTES, type Encoding } from '../../http/compression.js';

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; " +
  "form-action 'self'; base-uri 'none'; frame-ancestors 'none'";
const TYPES = dict<string>({
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.ico': 'image/x-icon',
});

export function consoleDirectory(): string {
  return process.env.LOGS_CONSOLE_DIR ?? fileURLToPath(new URL('../../../console/', import.meta.url));
}

export function consoleRoutes(directory = consoleDirectory()) {
  return async function routes(app: FastifyInstance): Promise<void> {
    const index = () => join(directory, 'index.html');
    app.get('/', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/console/'));
    app.get('/console/', { schema: { hide: true } }, async (_request, reply) => {
      reply.header('content-security-policy', CSP).header('cache-control', 'no-cache');
      if (!existsSync(index())) return reply.code(503).type('text/plain; charset=utf-8').send('console not built (npm run build)');
      return reply.type('text/html; charset=utf-8').send(readFileSync(index()));
    });
    // Hashed assets compressed once per encoding, on first request (their content never changes).
    const compressed = new Map<string, Buffer>();
    const encoded = (path: string, body: Buffer, encoding: Encoding): Buffer => {
      const key = `${encoding}:${path}`;
      let out = compressed.get(key);
      if (!out) compressed.set(key, (out = compressAsset(body, encoding)));
      return out;
    };
    app.get<{ Params: { file: string } }>('/console/assets/:file', { schema: { hide: true } }, async (request, reply) => {
      const name = normalize(request.params.file);
      const extension = name.slice(name.lastIndexOf('.'));
      const path = join(directory, 'assets', name);
      reply.header('content-security-policy', CSP);
      if (name.includes('/') || name.startsWith('.') || !TYPES[extension] || !existsSync(path))
        return reply.code(404).send({ error: 'not found' });
      reply.header('cache-control', 'public, max-age=31536000, immutable').header('vary', 'accept-encoding').type(TYPES[extension]);
      const body = readFileSync(path);
      const encoding =
        extension === '.png' || body.length < MIN_COMPRESSED_BYTES ? null : chosenEncoding(request.headers['accept-encoding']);
      if (encoding === null) return reply.send(body);
      return reply.header('content-encoding', encoding).send(encoded(path, body, encoding));
    });
    // The browser asks for /favicon.ico by itself: the console's icon, not a 404 in its log.
    app.get('/favicon.ico', { schema: { hide: true } }, async (_request, reply) => {
      const path = join(directory, 'assets', 'favicon.svg');
      if (!existsSync(path)) return reply.code(404).send({ error: 'not found' });
      return reply.header('cache-control', 'public, max-age=86400').type('image/svg+xml').send(readFileSync(path));
    });
  };
}
