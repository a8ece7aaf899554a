import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  /** The raw body, as signed. */
  body: string;
  json: any;
}

/**
 * A real HTTP server on 127.0.0.1 standing in for a chat or paging system's webhook endpoint.
 * `respond` decides each answer (default 200); `hold` keeps requests open until `release()`.
 */
export async function startWebhookReceiver() {
  const received: ReceivedWebhook[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const held: ServerResponse[] = [];
  const state = { respond: (_index: number): number => 200, hold: false };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const index = received.length;
      received.push({ headers: request.headers, body, json: JSON.parse(body) });
      for (const waiter of waiters.filter((w) => received.length >= w.count)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
      if (state.hold) {
        held.push(response);
        return;
      }
      response.statusCode = state.respond(index);
      response.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    state,
    /** Resolves once `count` requests have arrived in all. */
    waitFor(count: number): Promise<void> {
      if (received.length >= count) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ count, resolve }));
    },
    release(status = 200): void {
      for (const response of held.splice(0)) {
        response.statusCode = status;
        response.end('ok');
      }
    },
    close(): Promise<void> {
      this.release(503);
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
