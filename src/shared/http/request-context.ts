import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Accepts a well-formed X-Request-Id from the client, otherwise makes one. */
export const genReqId: NonNullable<FastifyServerOptions['genReqId']> = (req) => {
  const sent = req.headers['x-request-id'];
  return typeof sent === 'string' && CLIENT_REQUEST_ID.test(sent) ? sent : randomUUID();
};

/** On every response the service itself makes (not on answers relayed from upstreams). */
// Iterated on every response of the proxy's hot path, never looked up by a name from a request.
// eslint-disable-next-line gerbang/client-keys
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'cross-origin-opener-policy': 'same-origin',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
};

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Responses relayed from another server keep their own headers (spec 4.4). */
    passThroughHeaders?: boolean;
    /** A page (Swagger UI) that loads its own scripts and styles. */
    htmlPage?: boolean;
  }
}

/** Echoes the request id and adds security headers to every response the service itself makes. */
export function registerRequestContext(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  app.addHook('onSend', async (request, reply, payload) => {
    const config = request.routeOptions.config;
    if (config?.passThroughHeaders) return payload;
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) {
      if (name === 'content-security-policy' && config?.htmlPage) continue;
      if (!reply.hasHeader(name)) reply.header(name, value);
    }
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    return payload;
  });
}
