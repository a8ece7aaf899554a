import type { FastifyInstance } from 'fastify';

/**
 * Node's request timeout stops counting once the headers are in (Node 20): a client that sends the
 * headers and then the body a byte at a time, or never, holds its socket and descriptor for ever (a
 * slow-body slowloris). This gives the body the same timeout from the moment the headers arrived;
 * past it the connection is closed (the stalled client would not read a 408 in the middle of its upload).
 */
export function bodyDeadline(app: FastifyInstance, requestTimeoutMs: number): void {
  if (requestTimeoutMs <= 0) return;
  app.addHook('onRequest', (request, _reply, done) => {
    const raw = request.raw;
    if (!raw.complete) {
      const timer = setTimeout(() => {
        if (!raw.complete) raw.socket?.destroy();
      }, requestTimeoutMs);
      timer.unref();
      const clear = () => clearTimeout(timer);
      raw.once('end', clear);
      raw.once('close', clear);
    }
    done();
  });
}
