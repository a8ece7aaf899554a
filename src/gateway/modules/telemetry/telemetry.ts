import { context as otelContext, SpanKind, SpanStatusCode, trace, type Span, type Tracer } from '@opentelemetry/api';
import { SeverityNumber, type Logger } from '@opentelemetry/api-logs';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { JsonLogsSerializer, JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { LoggerProvider, type LogRecordProcessor, type ReadableLogRecord } from '@opentelemetry/sdk-logs';
import { BasicTracerProvider, ParentBasedSampler, TraceIdRatioBasedSampler, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import { Gauge, type Registry } from 'prom-client';
import { BoundedBatcher, type BatcherStats } from '../../../shared/telemetry/bounded-batcher.js';
import type { AuditLogTable } from '../../db/schema.js';

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
  logs: BatcherStats;
  traces: BatcherStats;
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

/**
 * The gateway's own access logs, audit events and traces, shipped to the logs service as OTLP/HTTP
 * (OpenTelemetry SDK records, official serializers) through bounded background queues: a request never waits for the
 * logs service and never fails because of it; what does not fit is dropped and counted.
 */
export interface GatewayTelemetry {
  readonly enabled: boolean;
  /** Starts the server span of a request (continuing a client's `traceparent`). */
  startRequest(request: RequestFacts): Span | undefined;
  /** Ends the span and ships the access log line. */
  endRequest(span: Span | undefined, request: RequestFacts, response: ResponseFacts): void;
  /** A child span for a call to an upstream; its `traceparent` goes into `headers`. */
  startUpstreamCall(parent: Span | undefined, method: string, service: string, headers: Record<string, string>): Span | undefined;
  audit(row: AuditLogTable): void;
  stats(): TelemetryStats;
  close(): Promise<void>;
}

declare module 'fastify' {
  interface FastifyRequest {
    telemetrySpan?: Span | undefined;
  }
}

/** Traces and access logs of the requests Fastify serves (the proxy records its own). */
export function watchFastifyRequests(app: FastifyInstance, telemetry: GatewayTelemetry, unwatchedRoutes: ReadonlySet<string>): void {
  const factsOf = (request: FastifyRequest): RequestFacts => ({ method: request.method, url: request.url, route: request.routeOptions.url ?? '', headers: request.headers });
  const watched = (request: FastifyRequest) => !unwatchedRoutes.has(request.routeOptions.url ?? '');
  app.addHook('onRequest', async (request) => {
    if (watched(request)) request.telemetrySpan = telemetry.startRequest(factsOf(request));
  });
  app.addHook('onResponse', async (request, reply) => {
    if (!watched(request)) return;
    telemetry.endRequest(request.telemetrySpan, factsOf(request), {
      status: reply.statusCode, durationMs: reply.elapsedTime, requestId: request.id, clientAddress: request.ip, userId: request.auth?.userId,
    });
  });
  app.addHook('onClose', async () => telemetry.close());
}

/** Feeds finished items of an SDK pipeline into a bounded batcher instead of the SDK's own queue. */
function batchingProcessor<T>(batcher: BoundedBatcher<T>) {
  return {
    onEmit: (item: T) => batcher.push(item),
    onStart: () => {},
    onEnd: (item: T) => batcher.push(item),
    forceFlush: () => batcher.flush(),
    shutdown: () => batcher.close(),
  };
}

const propagator = new W3CTraceContextPropagator();

export function createGatewayTelemetry(config: TelemetryConfig, log: FastifyBaseLogger): GatewayTelemetry {
  if (!config.url) return disabledTelemetry;
  const headers: Record<string, string> = config.key
    ? { authorization: `Bearer ${config.key}` }
    : config.username && config.password ? { authorization: `Basic ${Buffer.from(`${config.username}:${config.password}`).toString('base64')}` } : {};
  const base = config.url.replace(/\/+$/, '');
  const resource = resourceFromAttributes({ 'service.name': config.serviceName, 'service.namespace': 'gerbang' });
  let lastWarning = 0;
  const onError = (kind: string) => (error: unknown) => {
    // One line a minute at most: a down logs service must not flood the gateway's own log.
    if (Date.now() - lastWarning < 60_000) return;
    lastWarning = Date.now();
    log.warn({ kind, err: error instanceof Error ? error.message : String(error) }, 'telemetry shipping failed; buffering, then dropping');
  };

  // OTLP/JSON bodies made by the official serializers; sent with fetch so that every send has a
  // timeout and shutdown can cancel what is in flight (the SDK exporters retry on their own timers).
  const inFlight = new AbortController();
  const post = async (path: string, body: Uint8Array | undefined) => {
    if (!body) throw new Error('nothing serialised');
    const response = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: body as unknown as BodyInit,
      signal: AbortSignal.any([inFlight.signal, AbortSignal.timeout(10_000)]),
    });
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`logs service answered ${response.status}`);
  };
  const logBatcher = new BoundedBatcher<ReadableLogRecord>({
    maxQueue: config.maxQueue, maxBatch: config.maxBatch ?? 512, intervalMs: config.intervalMs, onError: onError('logs'),
    send: (batch) => post('/v1/logs', JsonLogsSerializer.serializeRequest(batch)),
  });
  const spanBatcher = new BoundedBatcher<ReadableSpan>({
    maxQueue: config.maxQueue, maxBatch: config.maxBatch ?? 512, intervalMs: config.intervalMs, onError: onError('traces'),
    send: (batch) => post('/v1/traces', JsonTraceSerializer.serializeRequest(batch)),
  });

  const loggerProvider = new LoggerProvider({ resource, processors: [batchingProcessor<ReadableLogRecord>(logBatcher) as unknown as LogRecordProcessor] });
  // Parent-based: a client's sampled flag is followed, and the spans of one request share its
  // root's decision, so a shipped trace is whole (the upstream sees the flag in `traceparent`).
  const sampler = new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.sampleRatio ?? 1) });
  const tracerProvider = new BasicTracerProvider({ resource, sampler, spanProcessors: [batchingProcessor<ReadableSpan>(spanBatcher) as unknown as SpanProcessor] });
  const logger: Logger = loggerProvider.getLogger('gerbang-gateway');
  const tracer: Tracer = tracerProvider.getTracer('gerbang-gateway');

  return {
    enabled: true,
    startRequest(request) {
      const parent = propagator.extract(otelContext.active(), request.headers, {
        get: (carrier, key) => carrier[key] as string | undefined,
        keys: (carrier) => Object.keys(carrier),
      });
      return tracer.startSpan(
        `${request.method} ${request.route || 'unmatched'}`,
        { kind: SpanKind.SERVER, attributes: { 'http.request.method': request.method, 'url.path': request.url.split('?')[0], 'http.route': request.route } },
        parent,
      );
    },
    endRequest(span, request, response) {
      const { status } = response;
      if (span) {
        span.setAttribute('http.response.status_code', status);
        if (response.service) span.setAttribute('gerbang.service', response.service);
        if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      }
      const path = request.url.split('?')[0]!;
      logger.emit({
        severityNumber: status >= 500 ? SeverityNumber.ERROR : status >= 400 ? SeverityNumber.WARN : SeverityNumber.INFO,
        severityText: status >= 500 ? 'ERROR' : status >= 400 ? 'WARN' : 'INFO',
        body: `${request.method} ${path} ${status}`,
        attributes: {
          'log.type': 'access',
          'http.request.method': request.method,
          'url.path': path,
          'http.route': request.route,
          'http.response.status_code': status,
          'duration_ms': Math.round(response.durationMs * 1000) / 1000,
          'request_id': response.requestId,
          ...(response.clientAddress ? { 'client.address': response.clientAddress } : {}),
          ...(response.userId ? { 'user.id': response.userId } : {}),
          ...(response.service ? { 'gerbang.service': response.service } : {}),
        },
        ...(span ? { context: trace.setSpan(otelContext.active(), span) } : {}),
      });
    },
    startUpstreamCall(parentSpan, method, service, outgoing) {
      const parent = parentSpan ? trace.setSpan(otelContext.active(), parentSpan) : otelContext.active();
      const span = tracer.startSpan(`${method} ${service}`, { kind: SpanKind.CLIENT, attributes: { 'peer.service': service, 'http.request.method': method } }, parent);
      propagator.inject(trace.setSpan(parent, span), outgoing, { set: (carrier, key, value) => (carrier[key] = value) });
      return span;
    },
    audit(row) {
      logger.emit({
        severityNumber: row.outcome === 'failure' ? SeverityNumber.WARN : SeverityNumber.INFO,
        severityText: row.outcome === 'failure' ? 'WARN' : 'INFO',
        body: `${row.action} ${row.outcome}`,
        timestamp: new Date(row.at),
        attributes: {
          'log.type': 'audit',
          'event.action': row.action,
          'event.outcome': row.outcome,
          ...(row.actor ? { 'audit.actor': row.actor } : {}),
          ...(row.actor_id ? { 'audit.actor_id': row.actor_id } : {}),
          ...(row.target_type ? { 'audit.target_type': row.target_type } : {}),
          ...(row.target_id ? { 'audit.target_id': row.target_id } : {}),
          ...(row.ip ? { 'client.address': row.ip } : {}),
          ...(row.request_id ? { request_id: row.request_id } : {}),
        },
      });
    },
    stats: () => ({ logs: logBatcher.stats(), traces: spanBatcher.stats() }),
    async close() {
      // A last send of what is queued, but shutdown never waits long on a slow logs service.
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, 2_000)));
      await Promise.race([Promise.allSettled([loggerProvider.shutdown(), tracerProvider.shutdown()]), deadline]);
      clearTimeout(timer);
      inFlight.abort();
    },
  };
}

const emptyStats = (): BatcherStats => ({ queued: 0, sent: 0, dropped: 0, failedBatches: 0 });

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
      for (const [kind, stats] of Object.entries(telemetry.stats())) {
        this.set({ kind, state: 'queued' }, stats.queued);
        this.set({ kind, state: 'sent' }, stats.sent);
        this.set({ kind, state: 'dropped' }, stats.dropped);
        this.set({ kind, state: 'failed_batches' }, stats.failedBatches);
      }
    },
  });
}
