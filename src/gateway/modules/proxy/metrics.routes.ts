import { timingSafeEqual, createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../../../shared/errors/app-error.js';
import type { ProxyMetrics } from './proxy.metrics.js';

const digest = (text: string) => createHash('sha256').update(text).digest();

/** GET /metrics in the Prometheus text format; behind a bearer token when GATEWAY_METRICS_TOKEN is set. */
export function metricsRoutes(metrics: ProxyMetrics, token: string | undefined) {
  const expected = token === undefined ? undefined : digest(`Bearer ${token}`);
  return async function (app: FastifyInstance) {
    app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
      if (expected && !timingSafeEqual(digest(request.headers.authorization ?? ''), expected)) throw new AppError('METRICS_TOKEN_INVALID');
      reply.header('content-type', metrics.registry.contentType);
      return metrics.registry.metrics();
    });
  };
}
