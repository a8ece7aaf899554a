import type { FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';

/** Listens on a free port of 127.0.0.1 (tests send traffic nowhere else) and returns the port. */
export async function listenOnLoopback(app: FastifyInstance): Promise<number> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  return (app.server.address() as AddressInfo).port;
}
