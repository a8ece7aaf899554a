import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import { Gauge, type Registry } from 'prom-client';
import { Pool } from 'undici';
import { AUDIT_ATTRIBUTES, GATEWAY_SERVICE_NAME, LOG_TYPE, LOG_TYPES } from '../../../shared/telemetry/gateway-records.js';
import type { AuditLogTable } from '../../db/schema.js';
import {
  dateNanos,
  exportEnvelope,
  logRecordJson,
  nowNanos,
  SEVERITY,
  SPAN_KIND,
  spanJson,
  STATUS_ERROR,
  type AttributeValue,
  type Attributes,
} from './otlp-json.js';
import { RecordQueue, type QueueStats } from './record-queue.js';
import { formatTraceparent, newSpanId, newTraceId, parseTraceparent, sampledByRatio } from './trace-context.js';

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
  readonly maxBatch?: number;
  readonly intervalMs: number;
  /** Share of traces recorded (0-1), decided at the root: a trace is shipped whole or not at all. */
  readonly sampleRatio?: number;
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
}

/** A span as the proxy and the Fastify hooks hold it; ended exactly once, shipped only when sampled. */
export interface TelemetrySpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly sampled: boolean;
  setAttribute(key: string, value: AttributeValue): void;
  setStatus(status: { code: number; message?: string }): void;
  end(): void;
}

/** The span status of a failed call (OTLP's STATUS_CODE_ERROR). */
export const SPAN_STATUS_ERROR = STATUS_ERROR;

/**
 * The gateway's own access logs, audit events and traces, shipped to the logs service as OTLP/JSON
 * over HTTP through bounded background queues: a request never waits for the logs service and
 * never fails because of it; what does not fit is dropped and counted. Each record is encoded once,
 * when it ends (otlp-json.ts), which keeps the cost per request small (docs/benchmarks.md).
 */
export interface GatewayTelemetry {
  readonly enabled: boolean;
  /** Starts the server span of a request (continuing a client's `traceparent`). */
  startRequest(request: RequestFacts): TelemetrySpan | undefined;
  /** Ends the span and ships the access log line. */
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

class GatewaySpan implements TelemetrySpan {
  private readonly startNanos: string;
  private status: { code: number; message?: string } = { code: 0 };
  private ended = false;

  constructor(
    readonly traceId: string,
    readonly spanId: string,
    readonly parentSpanId: string | undefined,
    readonly sampled: boolean,
    readonly traceState: string | undefined,
    private readonly name: string,
    private readonly kind: (typeof SPAN_KIND)[keyof typeof SPAN_KIND],
    private readonly attributes: Attributes,
    private readonly ship: (span: string) => void,
  ) {
    // An unsampled span only carries ids: nothing else is recorded for it.
    this.startNanos = sampled ? nowNanos() : '';
  }

  setAttribute(key: string, value: AttributeValue): void {
    if (this.sampled) this.attributes[key] = value;
  }

  setStatus(status: { code: number; message?: string }): void {
    this.status = status;
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    if (!this.sampled) return;
    this.ship(
      spanJson({
        traceId: this.traceId,
        spanId: this.spanId,
        parentSpanId: this.parentSpanId,
        name: this.name,
        kind: this.kind,
        startNanos: this.startNanos,
        endNanos: nowNanos(),
        attributes: this.attributes,
        status: this.status,
      }),
    );
  }
}

const severityOf = (status: number) => (status >= 500 ? SEVERITY.ERROR : status >= 400 ? SEVERITY.WARN : SEVERITY.INFO);

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
  const sampleRatio = config.sampleRatio ?? 1;
  let lastWarning = 0;
  const onError = (kind: string) => (error: unknown) => {
    // One line a minute at most: a down logs service must not flood the gateway's own log.
    if (Date.now() - lastWarning < 60_000) return;
    lastWarning = Date.now();
    log.warn({ kind, err: error instanceof Error ? error.message : String(error) }, 'telemetry shipping failed; buffering, then dropping');
  };

  // One keep-alive connection to the logs service; every send has a timeout, and shutdown cancels
  // what is in flight.
  const logsService = new Pool(origin, { connections: 2 });
  const inFlight = new AbortController();
  const post = async (path: string, body: Buffer) => {
    const response = await logsService.request({
      method: 'POST',
      path: `${prefix}${path}`,
      headers: { ...headers, 'content-type': 'application/json' },
      body,
      signal: AbortSignal.any([inFlight.signal, AbortSignal.timeout(10_000)]),
    });
    await response.body.dump();
    if (response.statusCode >= 300) throw new Error(`logs service answered ${response.statusCode}`);
  };
  const queue = (signal: 'logs' | 'spans', path: string) =>
    new RecordQueue({
      maxQueue: config.maxQueue,
      maxBatch: config.maxBatch ?? 512,
      intervalMs: config.intervalMs,
      onError: onError(signal === 'logs' ? 'logs' : 'traces'),
      envelope: exportEnvelope(signal, resource, GATEWAY_SERVICE_NAME),
      send: (body) => post(path, body),
    });
  const logQueue = queue('logs', '/v1/logs');
  const spanQueue = queue('spans', '/v1/traces');
  const shipSpan = (span: string) => spanQueue.push(span);

  return {
    enabled: true,
    startRequest(request) {
      // A client's sampled flag is followed (parent-based); a new trace is decided by its id, and
      // the spans of one request share that decision, so a shipped trace is whole.
      const parent = parseTraceparent(request.headers.traceparent, request.headers.tracestate);
      const traceId = parent?.traceId ?? newTraceId();
      const sampled = parent ? parent.sampled : sampledByRatio(traceId, sampleRatio);
      const attributes: Attributes = sampled
        ? { 'http.request.method': request.method, 'url.path': request.url.split('?')[0], 'http.route': request.route }
        : {};
      return new GatewaySpan(
        traceId,
        newSpanId(),
        parent?.spanId,
        sampled,
        parent?.traceState,
        `${request.method} ${request.route || 'unmatched'}`,
        SPAN_KIND.server,
        attributes,
        shipSpan,
      );
    },
    endRequest(span, request, response) {
      const { status } = response;
      if (span) {
        span.setAttribute('http.response.status_code', status);
        if (response.service) span.setAttribute('gerbang.service', response.service);
        if (status >= 500) span.setStatus({ code: STATUS_ERROR });
        span.end();
      }
      const path = request.url.split('?')[0]!;
      logQueue.push(
        logRecordJson({
          timeNanos: nowNanos(),
          severity: severityOf(status),
          body: `${request.method} ${path} ${status}`,
          attributes: {
            [LOG_TYPE]: LOG_TYPES.access,
            'http.request.method': request.method,
            'url.path': path,
            'http.route': request.route,
            'http.response.status_code': status,
            duration_ms: Math.round(response.durationMs * 1000) / 1000,
            request_id: response.requestId,
            'client.address': response.clientAddress || undefined,
            'user.id': response.userId || undefined,
            'gerbang.service': response.service || undefined,
          },
          trace: span,
        }),
      );
    },
    startUpstreamCall(parent, method, service, outgoing) {
      const traceId = parent?.traceId ?? newTraceId();
      const sampled = parent ? parent.sampled : sampledByRatio(traceId, sampleRatio);
      const traceState = parent instanceof GatewaySpan ? parent.traceState : undefined;
      const span = new GatewaySpan(
        traceId,
        newSpanId(),
        parent?.spanId,
        sampled,
        traceState,
        `${method} ${service}`,
        SPAN_KIND.client,
        sampled ? { 'peer.service': service, 'http.request.method': method } : {},
        shipSpan,
      );
      outgoing.traceparent = formatTraceparent(traceId, span.spanId, sampled);
      if (traceState) outgoing.tracestate = traceState;
      return span;
    },
    audit(row) {
      const failed = row.outcome === 'failure';
      logQueue.push(
        logRecordJson({
          timeNanos: dateNanos(new Date(row.at)),
          severity: failed ? SEVERITY.WARN : SEVERITY.INFO,
          body: `${row.action} ${row.outcome}`,
          attributes: {
            [LOG_TYPE]: LOG_TYPES.audit,
            [AUDIT_ATTRIBUTES.action]: row.action,
            [AUDIT_ATTRIBUTES.outcome]: row.outcome,
            [AUDIT_ATTRIBUTES.actor]: row.actor || undefined,
            [AUDIT_ATTRIBUTES.actorId]: row.actor_id || undefined,
            [AUDIT_ATTRIBUTES.targetType]: row.target_type || undefined,
            [AUDIT_ATTRIBUTES.targetId]: row.target_id || undefined,
            [AUDIT_ATTRIBUTES.clientAddress]: row.ip || undefined,
            [AUDIT_ATTRIBUTES.requestId]: row.request_id || undefined,
          },
        }),
      );
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

/** Shipping counters on the gateway's `/metrics`, read at scrape time. */
export function registerTelemetryMetrics(registry: Registry, telemetry: GatewayTelemetry): void {
  new Gauge({
    name: 'gateway_telemetry_items',
    help: 'Telemetry shipped to the logs service, by kind (logs, traces) and state (queued now; sent, dropped, failed_batches since start)',
    labelNames: ['kind', 'state'] as const,
    registers: [registry],
    collect() {
      for (const [kind, stats] of Object.entries(telemetry.stats()) as [string, QueueStats][]) {
        this.set({ kind, state: 'queued' }, stats.queued);
        this.set({ kind, state: 'sent' }, stats.sent);
        this.set({ kind, state: 'dropped' }, stats.dropped);
        this.set({ kind, state: 'failed_batches' }, stats.failedBatches);
      }
    },
  });
}
