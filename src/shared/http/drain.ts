import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { ShutdownSettings } from '../config/env.js';
import type { Readiness } from './readiness.js';

/**
 * After the drain, the service's parts (the gateway's last telemetry, pools, databases) have this
 * long to close; past it the process exits 1 anyway.
 */
export const CLOSE_TIMEOUT_MS = 10_000;

/** The longest a service takes to stop after SIGTERM: past it, it exits 1 on its own. */
export function stopDeadlineMs(settings: ShutdownSettings): number {
  return settings.readinessDelayMs + settings.drainTimeoutMs + CLOSE_TIMEOUT_MS;
}

/** How long a supervisor (`all`) waits after SIGTERM before SIGKILL: the service's own deadline and time to exit. */
export function killAfterMs(settings: ShutdownSettings): number {
  return stopDeadlineMs(settings) + 5_000;
}

/** A request cut at the end of the drain, as its log line shows it: no query string, no headers. */
export interface CutRequest {
  method: string;
  path: string;
  runningMs: number;
  /** Bytes of the answer that left on the connection (its headers included). */
  bytesSent: number;
}

/** A request in flight: a link of the tracker's list, kept on its response. */
interface Tracked {
  res: ServerResponse;
  req: IncomingMessage;
  started: number;
  bytesBefore: number;
  prev: Tracked | undefined;
  next: Tracked | undefined;
}

const TRACKED = Symbol('in-flight request');

const MAX_PATH_LENGTH = 200;

/** Bytes the socket handed to the kernel so far (`bytesWritten` counts what still waits in its buffer too). */
function bytesOut(res: ServerResponse): number {
  const socket = res.socket ?? res.req.socket;
  return Math.max(0, socket.bytesWritten - socket.writableLength);
}

/**
 * The requests a server is answering, at the raw HTTP level (so the gateway's proxy and Fastify's
 * routes alike), and how it stops: no new connections, each answer then closes its connection,
 * idle keep-alive connections close at once, and whatever is still running at the deadline is cut.
 */
export class InFlightRequests {
  /**
   * The requests in flight as a list linked through themselves, not a Map keyed by response: a
   * long-lived Map's table, rebuilt as entries come and go, is left in the old generation still
   * pointing at the requests it held, and every scavenge until the next full collection kept those
   * requests (and all they reference) alive: a quarter of the gateway's allocations survived each
   * scavenge and its pauses were four times longer (docs/performance-notes.md, "Gateway").
   */
  #first: Tracked | undefined = undefined;
  #size = 0;
  #server: Server | undefined;
  #draining = false;
  #idle: (() => void) | undefined;

  constructor(private readonly now: () => number = () => performance.now()) {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the listener's own `this` is the response
    const tracker = this;
    this.#onClose = function (this: ServerResponse) {
      tracker.#closed(this);
    };
  }

  /**
   * One 'close' listener for every response (a response emits 'close' once, with itself as `this`):
   * no closure or once-wrapper made per request on the hot path.
   */
  readonly #onClose: (this: ServerResponse) => void;

  #closed(res: ServerResponse): void {
    const tracked = (res as ServerResponse & { [TRACKED]?: Tracked })[TRACKED];
    if (tracked !== undefined) {
      // Unlinked once, whatever calls this again.
      (res as ServerResponse & { [TRACKED]?: Tracked })[TRACKED] = undefined;
      if (tracked.prev === undefined) this.#first = tracked.next;
      else tracked.prev.next = tracked.next;
      if (tracked.next !== undefined) tracked.next.prev = tracked.prev;
      tracked.prev = tracked.next = undefined;
      this.#size -= 1;
    }
    if (!this.#draining) return;
    // A keep-alive connection whose answer went out before the drain began is idle now.
    setImmediate(() => this.#server?.closeIdleConnections());
    if (this.#size === 0) this.#idle?.();
  }

  /** Called by the server factory (create-server.ts) for every request it receives. */
  watch(server: Server): void {
    this.#server = server;
    // First, before the service's own listener writes anything.
    server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
      // Answered during the drain: the connection closes after it, so the client reconnects elsewhere.
      if (this.#draining) res.shouldKeepAlive = false;
      const tracked: Tracked = { res, req, started: this.now(), bytesBefore: bytesOut(res), prev: undefined, next: this.#first };
      if (this.#first !== undefined) this.#first.prev = tracked;
      this.#first = tracked;
      this.#size += 1;
      (res as ServerResponse & { [TRACKED]?: Tracked })[TRACKED] = tracked;
      res.on('close', this.#onClose);
    });
  }

  /** The requests in flight, oldest last. */
  *#tracked(): Generator<Tracked> {
    for (let tracked = this.#first; tracked !== undefined; tracked = tracked.next) yield tracked;
  }

  get size(): number {
    return this.#size;
  }

  /** Stops accepting connections and closes the idle ones; each answer still running closes its connection after it. */
  stopAccepting(): void {
    this.#draining = true;
    for (const { res } of this.#tracked()) res.shouldKeepAlive = false;
    // Node's close() also closes the idle keep-alive connections.
    if (this.#server?.listening) this.#server.close();
    this.#server?.closeIdleConnections();
  }

  /** Resolves once no request is in flight (after stopAccepting). */
  idle(): Promise<void> {
    if (this.#size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const previous = this.#idle;
      this.#idle = () => {
        previous?.();
        resolve();
      };
    });
  }

  /** Destroys the connection of every request still running, and every other connection; returns what was cut. */
  cutAll(): CutRequest[] {
    const now = this.now();
    const cut = [...this.#tracked()].map(({ res, req, started, bytesBefore }) => {
      res.socket?.destroy();
      return {
        method: req.method ?? '',
        path: (req.url ?? '').split('?')[0]!.slice(0, MAX_PATH_LENGTH),
        runningMs: Math.round(now - started),
        bytesSent: Math.max(0, bytesOut(res) - bytesBefore),
      };
    });
    this.#server?.closeAllConnections();
    return cut;
  }
}

/** What a service hands its stop: the app, its readiness, its requests in flight. */
export interface DrainableService {
  app: FastifyInstance;
  readiness: Readiness;
  inFlight: InFlightRequests;
}

/**
 * The stop of a production server (docs/operations.md, "Stopping and deploys"): `/readyz` answers
 * 503 `draining` at once while the server still serves for `readinessDelayMs` (a load balancer
 * takes that long to stop sending); then it accepts no more connections and waits up to
 * `drainTimeoutMs` for the requests in flight; what is left is cut, one log line each; then the
 * app closes (its parts, the database).
 */
export async function drainAndClose(
  { app, readiness, inFlight }: DrainableService,
  settings: ShutdownSettings,
  signal: string,
  log: FastifyBaseLogger = app.log,
): Promise<void> {
  readiness.set('draining', { signal });
  log.info(
    { signal, readinessDelayMs: settings.readinessDelayMs, drainTimeoutMs: settings.drainTimeoutMs, inFlight: inFlight.size },
    'shutting down: /readyz answers 503, still serving during the readiness delay',
  );
  if (settings.readinessDelayMs > 0) await delay(settings.readinessDelayMs);
  inFlight.stopAccepting();
  log.info(
    { inFlight: inFlight.size, drainTimeoutMs: settings.drainTimeoutMs },
    'no longer accepting connections; draining requests in flight',
  );
  const deadline = new AbortController();
  const drained = await Promise.race([
    inFlight.idle().then(() => true),
    delay(settings.drainTimeoutMs, false, { signal: deadline.signal }).catch(() => false),
  ]);
  deadline.abort();
  if (!drained) {
    for (const cut of inFlight.cutAll())
      log.warn({ ...cut, drainTimeoutMs: settings.drainTimeoutMs }, 'request cut at the end of the drain');
  }
  await app.close();
}
