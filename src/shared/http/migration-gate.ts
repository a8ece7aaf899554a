import type { FastifyBaseLogger } from 'fastify';
import type { AddressInfo } from 'node:net';
import type { AppError } from '../errors/app-error.js';
import { createServer } from './create-server.js';
import { registerHealthRoutes } from './health.js';
import { Readiness, shownReasons } from './readiness.js';

/** What a client is told to wait before it tries again, in seconds. */
export const MIGRATING_RETRY_AFTER_SECONDS = 10;

export interface MigrationGateOptions {
  host: string;
  port: number;
  logLevel: string;
  trustProxy: boolean | number | string;
  requestTimeoutMs: number;
  /** The service's error body, for requests Node's parser refuses. */
  renderClientError: (error: AppError) => unknown;
  /** The service's 503 body for every other route (its documented error shape). */
  unavailable: unknown;
}

/** The port while migrations run: probes answered, every other request refused for now. */
export interface MigrationGate {
  readonly readiness: Readiness;
  /** The server's logger (the migrations log through it). */
  readonly log: FastifyBaseLogger;
  /** The port it listens on (the one asked for, or the one given for port 0). */
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Listens before the migrations run, so that a liveness probe finds the process alive while a long
 * one rewrites the data: `/healthz` answers 200, `/readyz` 503 with reason `migrating` (and the
 * progress set in `readiness`), every other request 503 with `Retry-After`. Closed once they are
 * done; the service then listens on the same port.
 */
export async function openMigrationGate(options: MigrationGateOptions): Promise<MigrationGate> {
  const readiness = new Readiness();
  readiness.set('migrating', { migration: null, done: 0, total: 0 });
  const app = createServer({
    logLevel: options.logLevel,
    bodyLimit: 1_024,
    trustProxy: options.trustProxy,
    requestTimeoutMs: options.requestTimeoutMs,
    renderClientError: options.renderClientError,
  });
  registerHealthRoutes(app, {
    ready: async () => undefined,
    readiness,
    render: (healthy, reasons) => ({
      status: healthy ? 'ok' : 'unavailable',
      ...(reasons.length > 0 ? { reasons: shownReasons(reasons) } : {}),
    }),
  });
  const refuse = (reply: { status(code: number): { header(name: string, value: string): { send(body: unknown): unknown } } }) =>
    reply.status(503).header('retry-after', String(MIGRATING_RETRY_AFTER_SECONDS)).send(options.unavailable);
  app.setNotFoundHandler((_request, reply) => refuse(reply));
  // A body the gate cannot parse (it parses none it keeps) is refused the same way.
  app.setErrorHandler((_error, _request, reply) => refuse(reply));
  await app.listen({
    host: options.host,
    port: options.port,
    listenTextResolver: (address) => `answering probes at ${address} while migrations run`,
  });
  return {
    readiness,
    log: app.log,
    port: (app.server.address() as AddressInfo).port,
    close: () => app.close(),
  };
}
