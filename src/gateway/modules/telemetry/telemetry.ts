import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import { Counter, Gauge, type Registry } from 'prom-client';
import { Pool } from 'undici';
import { AUDIT_ATTRIBUTES, GATEWAY_SERVICE_NAME, LOG_TYPE, LOG_TYPES } from '../../../shared/telemetry/gateway-records.js';
import type { AuditLogTable } from '../../db/schema.js';
import {
  accessLineBound,
  logRecordBound,
  otlpEnvelope,
  SEVERITY,
  SPAN_KIND,
  spanBound,
  writeAccessLine,
  writeLogRecord,
  writeSpan,
  type Attributes,
  type SpanKind,
  type SpanRecord,
} from './otlp-records.js';
import { RecordQueue, type QueueStats } from './record-queue.js';
import { hexWord, parseTraceparent, randomWord, sampledByWords, samplingOf, traceparentOf, type Sampling } from './trace-context.js';

export interface TelemetryConfig {
  /** Base URL of the logs service; unset = telemetry off. */
  readonly url: string | undefined;
  readonly username: string | undefined;
  readonly password: string | undefined;
  /** The logs service's LOGS_GATEWAY_SHIPPER_KEY, sent as a bearer credential (nobody can lock it). */
  readonly key?: string | undefined;
  readonly serviceName: string;
  /** Records (and, separately, spans) held at most while the logs service is slow or down. */
  readonly maxQueue: number;
  /** Records (or spans) sent in one request at most. */
  readonly maxBatch: number;
  readonly intervalMs: number;
  /**
   * Share of traces recorded (0-1), decided at the root: a trace is shipped whole or not at all,
   * except that the spans of a failed request are always shipped.
   */
  readonly sampleRatio: number;
}

export interface TelemetryStats {
  logs: QueueStats;
  traces: QueueStats;
}

/** What telemetry records of a request: the Fastify hooks and the proxy (outside Fastify) each build it. */
export interface RequestFacts {
  readonly method: string;
  /** Path and query as sent; only the path is recorded. */
  readonly url: string;
  /** The route pattern (`/api/v1/pengguna/:id`), '' when nothing matched. */
  readonly route: string;
  readonly headers: IncomingHttpHeaders;
}

export interface ResponseFacts {
  readonly status: number;
  readonly durationMs: number;
  readonly requestId: string;
  readonly clientAddress: string | undefined;
  readonly userId?: string | undefined;
  /** The proxied service the request went to. */
  readonly service?: string | undefined;
  /** performance.now() when the answer ended, if the caller has read the clock already. */
  readonly endAt?: number | undefined;
}

/** A span as the proxy holds it; shipped only when sampled. */
export interface TelemetrySpan {
  readonly sampled: boolean;
  /**
   * Ends the span of an upstream call (once; later calls do nothing): with the HTTP status the
   * upstream answered (5xx marks it failed), or with 0 and why there was no answer. `at`:
   * performance.now() at the end, when the caller has read the clock already. A request's own
   * span is ended by endRequest.
   */
  end(status: number, failure?: string, at?: number): void;
}

/**
 * The gateway's own access logs, audit events and traces, shipped to the logs service as
 * OTLP/protobuf over HTTP through bounded background queues: a request never waits for the logs
 * service and never fails because of it; what does not fit is dropped and counted. Each record is
 * written once, when it ends, straight into the body of the next export request (otlp-records.ts),
 * which keeps the cost per request small (docs/benchmarks.md).
 */
export interface GatewayTelemetry {
  readonly enabled: boolean;
  /**
   * Starts the server span of a request (continuing a client's `traceparent`); `startAt`:
   * performance.now() when the request arrived, if the caller has read the clock already.
   */
  startRequest(request: RequestFacts, startAt?: number): TelemetrySpan | undefined;
  /** Ends the span and ships the access line (its time is the span's end). */
  endRequest(span: TelemetrySpan | undefined, request: RequestFacts, response: ResponseFacts): void;
  /** A child span for a call to an upstream; its `traceparent` (and the client's `tracestate`) go into `headers`. */
  startUpstreamCall(
    parent: TelemetrySpan | undefined,
    method: string,
    service: string,
    headers: Record<string, string>,
  ): TelemetrySpan | undefined;
  audit(row: AuditLogTable): void;
  stats(): TelemetryStats;
  close(): Promise<void>;
}

declare module 'fastify' {
  interface FastifyRequest {
    telemetrySpan?: TelemetrySpan | undefined;
  }
}

/** Traces and access logs of the requests Fastify serves (the proxy records its own). */
export function watchFastifyRequests(app: FastifyInstance, telemetry: GatewayTelemetry, unwatchedRoutes: ReadonlySet<string>): void {
  const factsOf = (request: FastifyRequest): RequestFacts => ({
    method: request.method,
    url: request.url,
    route: request.routeOptions.url ?? '',
    headers: request.headers,
  });
  const watched = (request: FastifyRequest) => !unwatchedRoutes.has(request.routeOptions.url ?? '');
  app.addHook('onRequest', async (request) => {
    if (watched(request)) request.telemetrySpan = telemetry.startRequest(factsOf(request));
  });
  app.addHook('onResponse', async (request, reply) => {
    if (!watched(request)) return;
    telemetry.endRequest(request.telemetrySpan, factsOf(request), {
      status: reply.statusCode,
      durationMs: reply.elapsedTime,
      requestId: request.id,
      clientAddress: request.ip,
      userId: request.auth?.userId,
    });
  });
}

const pathOf = (url: string): string => {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
};

/**
 * A span: its ids as 32-bit words (trace-context.ts) and the request's own strings and numbers,
 * written out as protobuf when it ends (otlp-records.ts). Nothing else is made for it.
 */
class GatewaySpan implements TelemetrySpan, SpanRecord {
  t0 = 0;
  t1 = 0;
  t2 = 0;
  t3 = 0;
  s0 = 0;
  s1 = 0;
  /** The parent span's id; 0, 0 for a root span. */
  p0 = 0;
  p1 = 0;
  sampled = true;
  /** The client's `tracestate`, passed on to the upstreams. */
  traceState: string | undefined = undefined;
  /**
   * The span's own trace state as shipped: the sampling threshold it was recorded by (`ot=th:...`,
   * trace-context.ts), or the client's `tracestate` when the client decided. The logs service counts a
   * span as 1 / its sampling probability from it.
   */
  recordedState: string | undefined = undefined;
  /** An upstream call's span: the request span it belongs to, which decides whether both are shipped. */
  private parent: GatewaySpan | undefined = undefined;
  /** A request span: its upstream call, shipped with it. */
  private child: GatewaySpan | undefined = undefined;
  statusCode = 0;
  failed = false;
  failure: string | undefined = undefined;
  endAt = -1;

  constructor(
    readonly kind: SpanKind,
    readonly method: string,
    readonly route: string,
    readonly path: string,
    public service: string | undefined,
    readonly startAt: number,
    private readonly ship: (span: GatewaySpan) => void,
  ) {
    do {
      this.s0 = randomWord();
      this.s1 = randomWord();
    } while ((this.s0 | this.s1) === 0);
  }

  /** A new trace, recorded or not by its id. */
  startTrace(sampling: Sampling): void {
    do {
      this.t0 = randomWord();
      this.t1 = randomWord();
      this.t2 = randomWord();
      this.t3 = randomWord();
    } while ((this.t0 | this.t1 | this.t2 | this.t3) === 0);
    this.sampled = sampledByWords(this.t2, sampling);
    this.recordedState = sampling.traceState;
  }

  /** Continues a trace: the parent's id and decision. */
  continueTrace(parent: GatewaySpan): void {
    this.t0 = parent.t0;
    this.t1 = parent.t1;
    this.t2 = parent.t2;
    this.t3 = parent.t3;
    this.p0 = parent.s0;
    this.p1 = parent.s1;
    this.sampled = parent.sampled;
    this.traceState = parent.traceState;
    this.recordedState = parent.recordedState;
    this.parent = parent;
    parent.child = this;
  }

  end(status: number, failure?: string, at?: number): void {
    if (this.endAt >= 0) return;
    this.endAt = at ?? performance.now();
    this.statusCode = status;
    if (status >= 500 || failure !== undefined) {
      this.failed = true;
      this.failure = failure;
    }
    const parent = this.parent;
    // An upstream call ends before its request span (unless the client went away first): that one decides for both.
    if (parent === undefined) this.decide();
    else if (parent.endAt >= 0 && parent.sampled) this.ship(this);
  }

  /**
   * Whether a request span and its upstream call are shipped: when the trace is sampled, and also
   * when the request failed (a 5xx, or an upstream call that failed), whatever the sampling decision,
   * as SkyWalking's forceSampleErrorSegment does: with a ratio below 1 the traces an operator looks
   * for are still there. Every failed request is recorded, so its spans count once (no sampling
   * threshold in their trace state), and the access line says its trace was recorded. An unsampled
   * span only carries ids: nothing is recorded of it.
   */
  private decide(): void {
    const child = this.child;
    const childEnded = child !== undefined && child.endAt >= 0;
    if (this.failed || (childEnded && child.failed)) {
      this.sampled = true;
      this.recordedState = undefined;
      if (child !== undefined) child.recordedState = undefined;
    }
    if (!this.sampled) return;
    this.ship(this);
    if (childEnded) this.ship(child);
  }
}

export function createGatewayTelemetry(config: TelemetryConfig, log: FastifyBaseLogger): GatewayTelemetry {
  if (!config.url) return disabledTelemetry;
  const headers: Record<string, string> = config.key
    ? { authorization: `Bearer ${config.key}` }
    : config.username && config.password
      ? { authorization: `Basic ${Buffer.from(`${config.username}:${config.password}`).toString('base64')}` }
      : {};
  const { origin, pathname } = new URL(config.url);
  const prefix = pathname.replace(/\/+$/, '');
  const resource: Attributes = { 'service.name': config.serviceName, 'service.namespace': 'gerbang' };
  const sampling = samplingOf(config.sampleRatio);
  let lastWarning = 0;
  const onError = (kind: string) => (error: unknown) => {
    // One line a minute at most: a down logs service must not flood the gateway's own log.
    if (Date.now() - lastWarning < 60_000) return;
    lastWarning = Date.now();
    log.warn({ kind, err: error instanceof Error ? error.message : String(error) }, 'telemetry shipping failed; buffering, then dropping');
  };

  // Keep-alive connections to the logs service; every send times out after 10 s without an answer
  // or a byte of it (undici's own timers: a timeout signal combined with AbortSignal.any cost a
  // quarter of a send's CPU), and shutdown cancels what is in flight.
  const logsService = new Pool(origin, { connections: 2, headersTimeout: 10_000, bodyTimeout: 10_000 });
  const inFlight = new AbortController();
  const post = async (path: string, body: Buffer) => {
    const response = await logsService.request({
      method: 'POST',
      path: `${prefix}${path}`,
      headers: { ...headers, 'content-type': 'application/x-protobuf' },
      body,
      signal: inFlight.signal,
    });
    await response.body.dump();
    if (response.statusCode >= 300) throw new Error(`logs service answered ${response.statusCode}`);
  };
  const envelope = otlpEnvelope(resource, GATEWAY_SERVICE_NAME);
  const queue = (kind: 'logs' | 'traces', path: string) =>
    new RecordQueue({
      maxQueue: config.maxQueue,
      maxBatch: config.maxBatch,
      intervalMs: config.intervalMs,
      onError: onError(kind),
      envelope,
      send: (body) => post(path, body),
    });
  const logQueue = queue('logs', '/v1/logs');
  const spanQueue = queue('traces', '/v1/traces');
  // Encoding never fails a request: a record that cannot be written is dropped, counted and reported.
  const encodingFailed = onError('encoding');
  const shipSpan = (span: GatewaySpan) => {
    const w = spanQueue.write(spanBound(span));
    if (w === undefined) return;
    try {
      writeSpan(w, span);
      spanQueue.commit();
    } catch (error) {
      spanQueue.abandon();
      encodingFailed(error);
    }
  };

  return {
    enabled: true,
    startRequest(request, startAt) {
      const span = new GatewaySpan(
        SPAN_KIND.server,
        request.method,
        request.route,
        pathOf(request.url),
        undefined,
        startAt ?? performance.now(),
        shipSpan,
      );
      // A client's sampled flag is followed (parent-based); a new trace is decided by its id, and
      // the spans of one request share that decision, so a shipped trace is whole.
      const parent = parseTraceparent(request.headers.traceparent, request.headers.tracestate);
      if (parent === undefined) span.startTrace(sampling);
      else {
        span.t0 = hexWord(parent.traceId, 0);
        span.t1 = hexWord(parent.traceId, 1);
        span.t2 = hexWord(parent.traceId, 2);
        span.t3 = hexWord(parent.traceId, 3);
        span.p0 = hexWord(parent.spanId, 0);
        span.p1 = hexWord(parent.spanId, 1);
        span.sampled = parent.sampled;
        span.traceState = parent.traceState;
        span.recordedState = parent.traceState;
      }
      return span;
    },
    endRequest(span, request, response) {
      // One clock reading: the span's end is the access line's time.
      const at = response.endAt ?? performance.now();
      const own = span instanceof GatewaySpan ? span : undefined;
      if (own) {
        own.service = response.service;
        own.end(response.status, undefined, at);
      }
      const path = own ? own.path : pathOf(request.url);
      const w = logQueue.write(accessLineBound(request, path, response));
      if (w === undefined) return;
      try {
        writeAccessLine(w, request, path, response, at, own);
        logQueue.commit();
      } catch (error) {
        logQueue.abandon();
        encodingFailed(error);
      }
    },
    startUpstreamCall(parent, method, service, outgoing) {
      const span = new GatewaySpan(SPAN_KIND.client, method, '', '', service, performance.now(), shipSpan);
      if (parent instanceof GatewaySpan) span.continueTrace(parent);
      else span.startTrace(sampling);
      outgoing.traceparent = traceparentOf(span);
      if (span.traceState) outgoing.tracestate = span.traceState;
      return span;
    },
    audit(row) {
      const attributes: Attributes = {
        [LOG_TYPE]: LOG_TYPES.audit,
        [AUDIT_ATTRIBUTES.action]: row.action,
        [AUDIT_ATTRIBUTES.outcome]: row.outcome,
        [AUDIT_ATTRIBUTES.actor]: row.actor || undefined,
        [AUDIT_ATTRIBUTES.actorId]: row.actor_id || undefined,
        [AUDIT_ATTRIBUTES.targetType]: row.target_type || undefined,
        [AUDIT_ATTRIBUTES.targetId]: row.target_id || undefined,
        [AUDIT_ATTRIBUTES.clientAddress]: row.ip || undefined,
        [AUDIT_ATTRIBUTES.requestId]: row.request_id || undefined,
      };
      const body = `${row.action} ${row.outcome}`;
      const w = logQueue.write(logRecordBound(body, attributes));
      if (w === undefined) return;
      try {
        writeLogRecord(w, new Date(row.at).getTime(), row.outcome === 'failure' ? SEVERITY.WARN : SEVERITY.INFO, body, attributes);
        logQueue.commit();
      } catch (error) {
        logQueue.abandon();
        encodingFailed(error);
      }
    },
    stats: () => ({ logs: logQueue.stats(), traces: spanQueue.stats() }),
    async close() {
      // A last send of what is queued, but shutdown never waits long on a slow logs service.
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, 2_000)));
      await Promise.race([Promise.allSettled([logQueue.close(), spanQueue.close()]), deadline]);
      clearTimeout(timer);
      inFlight.abort();
      await logsService.destroy();
    },
  };
}

const emptyStats = (): QueueStats => ({ queued: 0, sent: 0, dropped: 0, failedBatches: 0 });

const disabledTelemetry: GatewayTelemetry = {
  enabled: false,
  startRequest: () => undefined,
  endRequest: () => {},
  startUpstreamCall: () => undefined,
  audit: () => {},
  stats: () => ({ logs: emptyStats(), traces: emptyStats() }),
  close: async () => {},
};

/**
 * Shipping metrics on the gateway's `/metrics`, read at scrape time: what waits in the queues now (a
 * gauge), and since start what was sent or dropped and the batches the logs service refused
 * (counters, summed across workers).
 */
export function registerTelemetryMetrics(registry: Registry, telemetry: GatewayTelemetry): void {
  const byKind = () => Object.entries(telemetry.stats()) as [string, QueueStats][];
  new Gauge({
    name: 'gateway_telemetry_queued_items',
    help: 'Log records and spans waiting to be shipped to the logs service, by kind (logs, traces)',
    labelNames: ['kind'] as const,
    registers: [registry],
    collect() {
      for (const [kind, stats] of byKind()) this.set({ kind }, stats.queued);
    },
  });
  new Counter({
    name: 'gateway_telemetry_items_total',
    help: 'Log records and spans shipped to the logs service (sent) or dropped (queue full, record unencodable), by kind and outcome',
    labelNames: ['kind', 'outcome'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [kind, stats] of byKind()) {
        this.inc({ kind, outcome: 'sent' }, stats.sent);
        this.inc({ kind, outcome: 'dropped' }, stats.dropped);
      }
    },
  });
  new Counter({
    name: 'gateway_telemetry_failed_batches_total',
    help: 'Shipments the logs service did not accept (unreachable, refused), by kind',
    labelNames: ['kind'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [kind, stats] of byKind()) this.inc({ kind }, stats.failedBatches);
    },
  });
}
