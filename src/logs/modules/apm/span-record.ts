import type { AttributeValue } from '../store/log-store.js';

/** A span as stored (apm_spans). Times in microseconds since the epoch. */
export interface SpanRecord {
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  service: string;
  name: string;
  /** OTLP SpanKind: 0 unspecified, 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  startUs: number;
  endUs: number;
  durationUs: number;
  /** OTLP StatusCode: 0 unset, 1 ok, 2 error. */
  statusCode: number;
  statusMessage: string | null;
  peerService: string | null;
  attributes: Record<string, AttributeValue>;
  events: { name: string; timeUs: number; attributes: Record<string, AttributeValue> }[];
  /** How many spans this one stands for: 1 / the probability it was sampled with (adjustedCountOf). */
  adjustedCount: number;
}

export const SPAN_KINDS = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'] as const;
export const STATUS_CODES = ['unset', 'ok', 'error'] as const;
