import { timingSafeEqual, createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors/app-error.js';
import { Registry } from 'prom-client';

const digest = (text: string) => createHash('sha256').update(text).digest();

/**
 * GET /metrics in the Prometheus text format (`render`: a service's registry, or the sum over the
 * gateway's workers); behind a bearer token when one is set (GATEWAY_METRICS_TOKEN, LOGS_METRICS_TOKEN).
 */
export function metricsRoutes(render: () => Promise<string>, token: string | undefined) {
  const expected = token === undefined ? undefined : digest(`Bearer ${token}`);
  return async function (app: FastifyInstance) {
    app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
      if (expected && !timingSafeEqual(digest(request.headers.authorization ?? ''), expected)) throw new AppError('METRICS_TOKEN_INVALID');
      reply.header('content-type', Registry.PROMETHEUS_CONTENT_TYPE);
      return render();
    });
  };
}
