import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { NotReadyReason, Readiness } from './readiness.js';

export interface HealthOptions {
  /** False when the process is broken in a way only a restart mends (default: always alive). */
  alive?: () => boolean;
  /** The reasons parts of the service raised (draining, storage, ...). */
  readiness: Readiness;
  /** Throws when the service cannot serve (database unreachable): the reason `database`. */
  ready: () => Promise<void>;
  /** The body; `reasons` is empty when healthy (and for `/healthz`). */
  render: (healthy: boolean, reasons: NotReadyReason[], request: FastifyRequest, reply: FastifyReply) => unknown;
}

/**
 * `/healthz`: the process answers and is alive. `/readyz`: no part raised a reason not to get
 * traffic and the dependencies answer; otherwise 503 with the reasons.
 */
export function registerHealthRoutes(app: FastifyInstance, { alive = () => true, readiness, ready, render }: HealthOptions): void {
  const hide = { hide: true };
  app.get('/healthz', { schema: hide, logLevel: 'warn' }, async (request, reply) => {
    const healthy = alive();
    return render(healthy, [], request, reply.status(healthy ? 200 : 503));
  });
  app.get('/readyz', { schema: hide, logLevel: 'warn' }, async (request, reply) => {
    // The dependencies first: their check may clear a reason whose cause is gone.
    let databaseAnswers = true;
    try {
      await ready();
    } catch (error) {
      request.log.warn({ err: error }, 'not ready: the database does not answer');
      databaseAnswers = false;
    }
    const reasons = readiness.reasons();
    if (!databaseAnswers) reasons.push({ reason: 'database', since: Date.now() });
    const healthy = reasons.length === 0;
    return render(healthy, reasons, request, reply.status(healthy ? 200 : 503));
  });
}
