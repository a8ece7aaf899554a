import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

export interface HealthOptions {
  /** False when the process is broken in a way only a restart mends (default: always alive). */
  alive?: () => boolean;
  /** Throws when the service cannot serve (database unreachable). */
  ready: () => Promise<void>;
  render: (healthy: boolean, request: FastifyRequest, reply: FastifyReply) => unknown;
}

/** `/healthz`: the process answers and is alive. `/readyz`: its dependencies answer too (503 otherwise). */
export function registerHealthRoutes(app: FastifyInstance, { alive = () => true, ready, render }: HealthOptions): void {
  const hide = { hide: true };
  app.get('/healthz', { schema: hide, logLevel: 'warn' }, async (request, reply) => {
    const healthy = alive();
    return render(healthy, request, reply.status(healthy ? 200 : 503));
  });
  app.get('/readyz', { schema: hide, logLevel: 'warn' }, async (request, reply) => {
    try {
      await ready();
      return render(true, request, reply.status(200));
    } catch (error) {
      request.log.warn({ err: error }, 'not ready');
      return render(false, request, reply.status(503));
    }
  });
}
