import type { FastifyReply, RouteHandlerMethod, RouteOptions } from 'fastify';
import { whileClientWaits } from '../modules/store/read-budget.js';

/**
 * An `onRoute` hook: every handler runs for a client that may leave (whileClientWaits). When the
 * connection closes before the response was sent (a closed browser tab, a dashboard's refresh that
 * abandons its previous request), the store's reads of the request stop: no further statement, and
 * the read worker running one is stopped, instead of holding it until the read's budget (30 s).
 */
export function stopReadsWhenClientLeaves(route: RouteOptions): void {
  const handler = route.handler as RouteHandlerMethod;
  route.handler = function (request, reply) {
    return whileClientWaits(clientSignal(reply), () => handler.call(this, request, reply));
  };
}

/** Aborted when the response's connection closes before the response was written out. */
function clientSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}
