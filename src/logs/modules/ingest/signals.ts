import type { FastifyRequest } from 'fastify';
import type { SpanRecord } from '../apm/span-record.js';
import type { SpansRepository } from '../apm/spans.repository.js';
import type { MetricsRepository } from '../infra/metrics.repository.js';
import type { MetricPoint } from '../infra/metric-point.js';
import { mapOtlpMetrics } from './otlp-metrics.js';
import { mapOtlpTraces } from './otlp-traces.js';
import type { LogEntry, LogStore } from '../store/log-store.js';
import { mapOtlpLogs, mapOtlpLogsProtobuf } from './otlp-logs.js';
import { logsMessages, type OtlpMessages } from './otlp-proto.js';
import { metricsMessages, tracesMessages } from './otlp-proto-telemetry.js';
import type { LogBatches, Mapping } from './pipeline.js';
import { otlpSourceOf, type IngestSource } from './pipeline-stats.js';

/** What the pipeline needs to know of one OTLP signal (its messages, and this); everything else is the same for all. */
export interface OtlpSignal<T> extends OtlpMessages {
  path: string;
  summary: string;
  /** Throws (400) when the body is not a request at all; counts items it cannot read. */
  map: (decoded: unknown, now: number) => Mapping<T>;
  /**
   * decode and map in one pass over a protobuf body, each item mapped as soon as it is read (the
   * same mapping; throws only where decode would): for the busy signal, logs.
   */
  decodeAndMap?: (body: Uint8Array, now: number) => Promise<Mapping<T>>;
  source: (request: FastifyRequest, items: readonly T[]) => IngestSource;
  /**
   * Stores the batch in one committed write, and whatever must follow it before the answer;
   * `prepared` as AppendOptions.prepared (with `batches`).
   */
  store: (request: FastifyRequest, items: T[], prepared?: () => void) => Promise<void>;
  /** The batches the signal's decoding and writing take their turn among (pipeline.ts LogBatches); none: at once. */
  batches?: LogBatches;
}

const summary = (what: string) => `OTLP/HTTP ${what} (application/json or application/x-protobuf, gzip accepted); needs logs:write`;

export function logsSignal(deps: {
  store: LogStore;
  batches: LogBatches;
  /** The gateway's ingest account (LOGS_GATEWAY_SHIPPER): its batches count as source `gateway`. */
  gatewayUsername: string | undefined;
  /** Runs on each stored batch before it is acknowledged (the gateway's audit events join the audit trail). */
  onStored?: ((request: FastifyRequest, entries: readonly LogEntry[]) => Promise<void>) | undefined;
}): OtlpSignal<LogEntry> {
  return {
    path: '/v1/logs',
    summary: summary('logs'),
    ...logsMessages,
    map: mapOtlpLogs,
    decodeAndMap: mapOtlpLogsProtobuf,
    source: (request, entries) =>
      otlpSourceOf(entries, deps.gatewayUsername !== undefined && request.logsAuth?.username === deps.gatewayUsername),
    batches: deps.batches,
    store: async (request, entries, prepared) => {
      await deps.store.append(request.tenantId, entries, { prepared });
      await deps.onStored?.(request, entries);
    },
  };
}

export function tracesSignal(spans: SpansRepository): OtlpSignal<SpanRecord> {
  return {
    path: '/v1/traces',
    summary: summary('traces'),
    ...tracesMessages,
    map: (decoded) => mapOtlpTraces(decoded),
    source: () => 'otlp-traces',
    store: (request, items) => spans.insert(request.tenantId, items),
  };
}

export function metricsSignal(metrics: MetricsRepository): OtlpSignal<MetricPoint> {
  return {
    path: '/v1/metrics',
    summary: summary('metrics'),
    ...metricsMessages,
    map: mapOtlpMetrics,
    source: () => 'otlp-metrics',
    store: (request, items) => metrics.insert(request.tenantId, items),
  };
}
