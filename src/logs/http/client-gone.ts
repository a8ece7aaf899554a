import type { ServerResponse } from 'node:http';
import type { RouteHandlerMethod, RouteOptions } from 'fastify';
import { whileClientWaits, type WaitingClient } from '../modules/store/read-budget.js';

/**
 * An `onRoute` hook: every handler runs for a client that may leave (whileClientWaits). When the
 * connection closes before the response was sent (a closed browser tab, a dashboard's refresh that
 * abandons its previous request), the store's reads of the request stop: no further statement, and
 * the read worker running one is stopped, instead of holding it until the read's budget (30 s).
 */
export function stopReadsWhenClientLeaves(route: RouteOptions): void {
  const handler = route.handler as RouteHandlerMethod;
  route.handler = function (request, reply) {
    return whileClientWaits(new ResponseClient(reply.raw), () => handler.call(this, request, reply));
  };
}

/** The client of a response: gone once the connection closed before the response was written out. */
class ResponseClient implements WaitingClient {
  constructor(private readonly response: ServerResponse) {}

  get gone(): boolean {
    return this.response.destroyed && !this.response.writableFinished;
  }

  onGone(listener: () => void): () => void {
    const closed = () => {
      if (!this.response.writableFinished) listener();
    };
    this.response.once('close', closed);
    return () => this.response.off('close', closed);
  }
}
