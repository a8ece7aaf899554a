/**
 * OTLP/JSON (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding) written straight
 * to strings. The gateway encodes each access line, audit event and span once, when it ends, and
 * a batch is those strings joined: no SDK record objects, no second pass. Measured in
 * docs/benchmarks.md ("Self-watching cost"): the SDK path cost the gateway about half its capacity.
 */

export type AttributeValue = string | number | boolean;
export type Attributes = Record<string, AttributeValue | undefined>;

function valueJson(value: AttributeValue): string {
  if (typeof value === 'string') return `{"stringValue":${JSON.stringify(value)}}`;
  if (typeof value === 'boolean') return `{"boolValue":${value}}`;
  return Number.isInteger(value) ? `{"intValue":${value}}` : `{"doubleValue":${Number.isFinite(value) ? value : 0}}`;
}

/** `{"key":"…","value":` per attribute name: the names are a small fixed set, each encoded once. */
const keyFragments = new Map<string, string>();
const keyFragment = (key: string): string => {
  let fragment = keyFragments.get(key);
  if (fragment === undefined) {
    fragment = `{"key":${JSON.stringify(key)},"value":`;
    if (keyFragments.size < 1_000) keyFragments.set(key, fragment);
  }
  return fragment;
};

/** `[{"key":…,"value":{…}}, …]`; undefined values are left out. */
export function attributesJson(attributes: Attributes): string {
  let out = '';
  for (const key in attributes) {
    const value = attributes[key];
    if (value === undefined) continue;
    out += `${out === '' ? '' : ','}${keyFragment(key)}${valueJson(value)}}`;
  }
  return `[${out}]`;
}

/** Now as nanoseconds since the epoch, a decimal string (OTLP/JSON's form of a fixed64). */
export function nowNanos(): string {
  const ms = performance.timeOrigin + performance.now();
  const whole = Math.floor(ms);
  return `${whole}${String(Math.floor((ms - whole) * 1e6)).padStart(6, '0')}`;
}

export const dateNanos = (date: Date): string => `${date.getTime()}000000`;

export const SEVERITY = {
  INFO: { number: 9, text: 'INFO' },
  WARN: { number: 13, text: 'WARN' },
  ERROR: { number: 17, text: 'ERROR' },
} as const;

export interface LogRecordFields {
  timeNanos: string;
  severity: (typeof SEVERITY)[keyof typeof SEVERITY];
  body: string;
  attributes: Attributes;
  trace?: { traceId: string; spanId: string; sampled: boolean } | undefined;
}

export function logRecordJson(record: LogRecordFields): string {
  const { trace } = record;
  return (
    `{"timeUnixNano":"${record.timeNanos}","observedTimeUnixNano":"${record.timeNanos}",` +
    `"severityNumber":${record.severity.number},"severityText":"${record.severity.text}",` +
    `"body":{"stringValue":${JSON.stringify(record.body)}},"attributes":${attributesJson(record.attributes)}` +
    (trace ? `,"traceId":"${trace.traceId}","spanId":"${trace.spanId}","flags":${trace.sampled ? 1 : 0}}` : '}')
  );
}

export const SPAN_KIND = { server: 2, client: 3 } as const;
export const STATUS_ERROR = 2;

export interface SpanFields {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: (typeof SPAN_KIND)[keyof typeof SPAN_KIND];
  startNanos: string;
  endNanos: string;
  attributes: Attributes;
  status: { code: number; message?: string | undefined };
}

export function spanJson(span: SpanFields): string {
  const status =
    span.status.message === undefined
      ? `{"code":${span.status.code}}`
      : `{"code":${span.status.code},"message":${JSON.stringify(span.status.message)}}`;
  return (
    `{"traceId":"${span.traceId}","spanId":"${span.spanId}"${span.parentSpanId ? `,"parentSpanId":"${span.parentSpanId}"` : ''},` +
    `"name":${JSON.stringify(span.name)},"kind":${span.kind},"startTimeUnixNano":"${span.startNanos}","endTimeUnixNano":"${span.endNanos}",` +
    `"attributes":${attributesJson(span.attributes)},"status":${status}}`
  );
}

/** The start and end of one export request around comma-separated, already-encoded records. */
export function exportEnvelope(signal: 'logs' | 'spans', resource: Attributes, scopeName: string): { head: string; tail: string } {
  const [outer, inner, list] = signal === 'logs' ? ['resourceLogs', 'scopeLogs', 'logRecords'] : ['resourceSpans', 'scopeSpans', 'spans'];
  return {
    head: `{"${outer}":[{"resource":{"attributes":${attributesJson(resource)}},"${inner}":[{"scope":{"name":${JSON.stringify(scopeName)}},"${list}":[`,
    tail: ']}]}]}',
  };
}
