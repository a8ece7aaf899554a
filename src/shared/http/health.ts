import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * Why the service is not ready, by name (`migrating`: its migrations run), each with what it says
 * of itself (progress): `/readyz` answers 503 with them while any is set.
 */
export class Readiness {
  readonly #reasons = new Map<string, unknown>();

  set(reason: string, detail: unknown = true): void {
    this.#reasons.set(reason, detail);
  }

  clear(reason: string): void {
    this.#reasons.delete(reason);
  }

  /** The reasons set now (a null-prototype object), or undefined when there are none. */
  reasons(): Record<string, unknown> | undefined {
    if (this.#reasons.size === 0) return undefined;
    return Object.assign(Object.create(null) as Record<string, unknown>, Object.fromEntries(this.#reasons));
  }
}

export interface HealthOptions {
  /** False when the process is broken in a way only a restart mends (default: always alive). */
  alive?: () => boolean;
  /** Throws when the service cannot serve (database unreachable). */
  ready: () => Promise<void>;
  /** Reasons the service holds itself back for (checked before `ready`). */
  readiness?: Readiness;
  render: (healthy: boolean, request: FastifyRequest, reply: FastifyReply) => unknown;
}

/**
 * `/healthz`: the process answers and is alive. `/readyz`: no readiness reason is set and its
 * dependencies answer (503 otherwise; the reasons, if any, under `reasons`).
 */
export function registerHealthRoutes(app: FastifyInstance, { alive = () => true, ready, readiness, render }: HealthOptions): void {
  const hide = { hide: true };
  app.get('/healthz', { schema: hide, logLevel: 'warn' }, async (request, reply) => {
    const healthy = alive();
    return render(healthy, request, reply.status(healthy ? 200 : 503));
  });
  app.get('/readyz', { schema: hide, logLevel: 'warn' }, async (request, reply) => {
    const reasons = readiness?.reasons();
    if (reasons) return { ...(render(false, request, reply.status(503)) as object), reasons };
    try {
      await ready();
      return render(true, request, reply.status(200));
    } catch (error) {
      request.log.warn({ err: error }, 'not ready');
      return render(false, request, reply.status(503));
    }
  });
}
