import { LOG_TYPE, LOG_TYPES } from '../../../shared/telemetry/gateway-records.js';
import { varintSize, writeVarintAt } from '../../../shared/encoding/varint.js';
import { ProtoWriter } from './proto-writer.js';
import type { Envelope } from './record-queue.js';

/**
 * The gateway's access lines, audit events and spans as OTLP/protobuf (opentelemetry-proto v1:
 * ExportLogsServiceRequest, ExportTraceServiceRequest; the logs service decodes the same messages,
 * src/logs/modules/ingest/otlp-proto*.ts), written straight into the request body of the next batch:
 * each record when it ends, as a `log_records` (or `spans`) field of the batch's one ScopeLogs (or
 * ScopeSpans), from the request's own strings and numbers: no record objects, no intermediate
 * strings, ids as the raw bytes they are. What goes around the records (resource, scope, and the
 * lengths that depend on the records) is written in front of them when the batch is sent (otlpEnvelope).
 * Measured in docs/benchmarks.md ("Self-watching cost").
 */

export type AttributeValue = string | number | boolean;
export type Attributes = Record<string, AttributeValue | undefined>;

export const SEVERITY = {
  INFO: { number: 9, text: 'INFO' },
  WARN: { number: 13, text: 'WARN' },
  ERROR: { number: 17, text: 'ERROR' },
} as const;
export type Severity = (typeof SEVERITY)[keyof typeof SEVERITY];

export const SPAN_KIND = { server: 2, client: 3 } as const;
export type SpanKind = (typeof SPAN_KIND)[keyof typeof SPAN_KIND];
/** OTLP's STATUS_CODE_ERROR. */
export const STATUS_ERROR = 2;

// Tags: field number << 3 | wire type (0 varint, 1 fixed64, 2 length-delimited, 5 fixed32).
/** ExportXServiceRequest.resource_x, ResourceX.resource, ScopeX.scope, Resource.attributes, InstrumentationScope.name: field 1. */
const FIELD_1 = 0x0a;
/** ResourceX.scope_x, ScopeLogs.log_records, ScopeSpans.spans: field 2. */
const FIELD_2 = 0x12;
const LOG_RECORD = {
  timeUnixNano: 0x09,
  severityNumber: 0x10,
  severityText: 0x1a,
  body: 0x2a,
  attributes: 0x32,
  flags: 0x45,
  traceId: 0x4a,
  spanId: 0x52,
  observedTimeUnixNano: 0x59,
} as const;
const SPAN = {
  traceId: 0x0a,
  spanId: 0x12,
  traceState: 0x1a,
  parentSpanId: 0x22,
  name: 0x2a,
  kind: 0x30,
  startTimeUnixNano: 0x39,
  endTimeUnixNano: 0x41,
  attributes: 0x4a,
  status: 0x7a,
} as const;
const SPAN_STATUS = { message: 0x12, code: 0x18 } as const;
const KEY_VALUE_VALUE = 0x12;
const ANY_VALUE = { string: 0x0a, bool: 0x10, int: 0x18, double: 0x21 } as const;
/** LogRecord.flags: the W3C trace flags, of which bit 0 is "sampled". */
const FLAG_SAMPLED = 1;

/** The epoch time of performance.now()'s zero: record times are kept as performance.now() values. */
const TIME_ORIGIN = performance.timeOrigin;

/** A KeyValue's `key` field (tag, length, name), encoded once per attribute name. */
const keyFields = new Map<string, Uint8Array>();
export function keyField(key: string): Uint8Array {
  let field = keyFields.get(key);
  if (field === undefined) {
    const name = Buffer.from(key);
    field = new Uint8Array(1 + varintSize(name.length) + name.length);
    field[0] = FIELD_1;
    field.set(name, writeVarintAt(field, 1, name.length));
    if (keyFields.size < 1_000) keyFields.set(key, field);
  }
  return field;
}

const KEYS = {
  logType: keyField(LOG_TYPE),
  method: keyField('http.request.method'),
  path: keyField('url.path'),
  route: keyField('http.route'),
  status: keyField('http.response.status_code'),
  durationMs: keyField('duration_ms'),
  requestId: keyField('request_id'),
  clientAddress: keyField('client.address'),
  userId: keyField('user.id'),
  service: keyField('gerbang.service'),
  peerService: keyField('peer.service'),
};

/** Encodes a field from up to three strings (see FieldCache). */
type FieldEncoder = (w: ProtoWriter, a: string, b: string, c: string) => void;

/** Where a field is encoded before it is cached: a few KB at most (FieldCache.MAX_CHARS). */
const scratch = new ProtoWriter(Buffer.alloc(16 * 1024));

/**
 * Fields whose values repeat from request to request (the method, route and service of a record, a
 * client address, a user id), encoded once and then copied: writing the records' strings was most
 * of what shipping cost the gateway's CPU (docs/benchmarks.md, "Self-watching cost: reading").
 * Keyed by up to three strings; bounded: a full cache starts over, and values longer than
 * MAX_CHARS are written every time.
 */
class FieldCache {
  static readonly MAX_CHARS = 1_000;
  static readonly MAX_VALUES = 1_000;
  private readonly fields = new Map<string, Map<string, Map<string, Uint8Array>>>();
  private count = 0;

  constructor(private readonly encode: FieldEncoder) {}

  write(w: ProtoWriter, a: string, b = '', c = ''): void {
    const field = this.fields.get(a)?.get(b)?.get(c) ?? this.add(a, b, c);
    if (field === undefined) this.encode(w, a, b, c);
    else w.raw(field);
  }

  private add(a: string, b: string, c: string): Uint8Array | undefined {
    if (a.length + b.length + c.length > FieldCache.MAX_CHARS) return undefined;
    scratch.pos = 0;
    this.encode(scratch, a, b, c);
    const field = Uint8Array.prototype.slice.call(scratch.buf, 0, scratch.pos);
    if (this.count >= FieldCache.MAX_VALUES) {
      this.fields.clear();
      this.count = 0;
    }
    let byB = this.fields.get(a);
    if (byB === undefined) this.fields.set(a, (byB = new Map<string, Map<string, Uint8Array>>()));
    let byC = byB.get(b);
    if (byC === undefined) byB.set(b, (byC = new Map<string, Uint8Array>()));
    byC.set(c, field);
    this.count += 1;
    return field;
  }
}

/** Bytes a string takes at most in UTF-8 (three per UTF-16 unit), for a record's size bound. */
const most = (text: string | undefined): number => (text === undefined ? 0 : 3 * text.length);

/** A string attribute; returns the bytes of its value, which end where the attribute ends. */
function stringAttribute(w: ProtoWriter, tag: number, key: Uint8Array, value: string): number {
  w.byte(tag);
  const keyValue = w.begin(1);
  w.raw(key);
  w.byte(KEY_VALUE_VALUE);
  const any = w.begin(1);
  w.byte(ANY_VALUE.string);
  const text = w.begin(1);
  w.text(value);
  const bytes = w.pos - text - 1;
  w.end(text, 1);
  w.end(any, 1);
  w.end(keyValue, 1);
  return bytes;
}

function intAttribute(w: ProtoWriter, tag: number, key: Uint8Array, value: number): void {
  const any = 1 + (value >= 0 ? varintSize(value) : 10);
  w.byte(tag);
  w.varint(key.length + 2 + any);
  w.raw(key);
  w.byte(KEY_VALUE_VALUE);
  w.byte(any);
  w.byte(ANY_VALUE.int);
  w.int64(value);
}

function doubleAttribute(w: ProtoWriter, tag: number, key: Uint8Array, value: number): void {
  w.byte(tag);
  w.varint(key.length + 2 + 9);
  w.raw(key);
  w.byte(KEY_VALUE_VALUE);
  w.byte(9);
  w.byte(ANY_VALUE.double);
  w.double(Number.isFinite(value) ? value : 0);
}

/** The bytes `write` writes, for a field that is the same in every record. */
function encodedOnce(write: (w: ProtoWriter) => void): Uint8Array {
  scratch.pos = 0;
  write(scratch);
  return Uint8Array.prototype.slice.call(scratch.buf, 0, scratch.pos);
}

/** `http.response.status_code` attributes of the statuses 0-599 under one tag, encoded once. */
function statusFields(tag: number): Uint8Array[] {
  return Array.from({ length: 600 }, (_, status) => encodedOnce((w) => intAttribute(w, tag, KEYS.status, status)));
}

function statusAttribute(w: ProtoWriter, fields: Uint8Array[], tag: number, status: number): void {
  const field = fields[status];
  if (field === undefined) intAttribute(w, tag, KEYS.status, status);
  else w.raw(field);
}

/** A number attribute: an int_value when it is a (safe) integer, else a double_value. */
function numberAttribute(w: ProtoWriter, tag: number, key: Uint8Array, value: number): void {
  if (Number.isSafeInteger(value)) intAttribute(w, tag, key, value);
  else doubleAttribute(w, tag, key, value);
}

function attribute(w: ProtoWriter, tag: number, key: Uint8Array, value: AttributeValue): void {
  if (typeof value === 'string') stringAttribute(w, tag, key, value);
  else if (typeof value === 'number') numberAttribute(w, tag, key, value);
  else {
    w.byte(tag);
    w.varint(key.length + 4);
    w.raw(key);
    w.byte(KEY_VALUE_VALUE);
    w.byte(2);
    w.byte(ANY_VALUE.bool);
    w.byte(value ? 1 : 0);
  }
}

/** Attributes of an object, in its order; undefined values are left out. */
function attributes(w: ProtoWriter, tag: number, values: Attributes): void {
  for (const key in values) {
    const value = values[key];
    if (value !== undefined) attribute(w, tag, keyField(key), value);
  }
}

function attributesBound(values: Attributes): number {
  let bound = 0;
  for (const key in values) {
    const value = values[key];
    bound += 3 * key.length + 32 + (typeof value === 'string' ? 3 * value.length : 0);
  }
  return bound;
}

/** A trace id (four 32-bit words) and span id (two) as bytes fields. */
function traceIdField(w: ProtoWriter, tag: number, ids: SpanIds): void {
  w.byte(tag);
  w.byte(16);
  w.word(ids.t0);
  w.word(ids.t1);
  w.word(ids.t2);
  w.word(ids.t3);
}

function spanIdField(w: ProtoWriter, tag: number, high: number, low: number): void {
  w.byte(tag);
  w.byte(8);
  w.word(high);
  w.word(low);
}

/** The ids of a span, as 32-bit words (most significant byte first), so no span holds strings or buffers for them. */
export interface SpanIds {
  readonly t0: number;
  readonly t1: number;
  readonly t2: number;
  readonly t3: number;
  readonly s0: number;
  readonly s1: number;
  readonly sampled: boolean;
}

/** A span as the gateway records it (telemetry.ts): what is written of it when it ends. */
export interface SpanRecord extends SpanIds {
  /** The parent span's id; 0, 0 for a root span (an all-zero id is invalid in W3C Trace Context). */
  readonly p0: number;
  readonly p1: number;
  readonly kind: SpanKind;
  readonly method: string;
  /** Server span: the route pattern ('' when nothing matched). */
  readonly route: string;
  /** Server span: the path, without the query. */
  readonly path: string;
  /** Server span: `gerbang.service` (the proxied service); client span: `peer.service`. */
  readonly service: string | undefined;
  /** The HTTP status answered; 0 when there was no answer. */
  readonly statusCode: number;
  readonly failed: boolean;
  /** Why a call failed (the span status's message). */
  readonly failure: string | undefined;
  /** The span's trace state (its sampling threshold, telemetry.ts). */
  readonly recordedState: string | undefined;
  /** performance.now() at the start and the end. */
  readonly startAt: number;
  readonly endAt: number;
}

/** What a span takes at most, in bytes. */
export function spanBound(span: SpanRecord): number {
  return (
    400 +
    3 * (2 * span.method.length + 2 * span.route.length + span.path.length) +
    2 * most(span.service) +
    most(span.failure) +
    most(span.recordedState)
  );
}

const SPAN_STATUS_FIELDS = statusFields(SPAN.attributes);
const ACCESS_STATUS_FIELDS = statusFields(LOG_RECORD.attributes);

/** A server span's name, kind, and the attributes that repeat: method, route, the proxied service. */
const serverSpanHead = new FieldCache((w, method, route, service) => {
  spanName(w, method, route || 'unmatched');
  w.byte(SPAN.kind);
  w.byte(SPAN_KIND.server);
  stringAttribute(w, SPAN.attributes, KEYS.method, method);
  stringAttribute(w, SPAN.attributes, KEYS.route, route);
  if (service) stringAttribute(w, SPAN.attributes, KEYS.service, service);
});

/** A client span's name, kind and attributes but its status: the service called and the method. */
const clientSpanHead = new FieldCache((w, method, service) => {
  spanName(w, method, service);
  w.byte(SPAN.kind);
  w.byte(SPAN_KIND.client);
  if (service) stringAttribute(w, SPAN.attributes, KEYS.peerService, service);
  stringAttribute(w, SPAN.attributes, KEYS.method, method);
});

/** A span's trace_state field: one value for every span the gateway's own ratio recorded. */
const spanTraceState = new FieldCache((w, state) => w.string(SPAN.traceState, state));

function spanName(w: ProtoWriter, method: string, what: string): void {
  w.byte(SPAN.name);
  const name = w.begin(1);
  w.text(method);
  w.byte(0x20);
  w.text(what);
  w.end(name, 1);
}

/**
 * A span, as one `spans` field of ScopeSpans. What repeats from request to request is copied from
 * a cache, which puts the name and kind ahead of the times (protobuf fields may come in any order).
 */
export function writeSpan(w: ProtoWriter, span: SpanRecord): void {
  w.byte(FIELD_2);
  const record = w.begin(2);
  traceIdField(w, SPAN.traceId, span);
  spanIdField(w, SPAN.spanId, span.s0, span.s1);
  if ((span.p0 | span.p1) !== 0) spanIdField(w, SPAN.parentSpanId, span.p0, span.p1);
  if (span.recordedState !== undefined) spanTraceState.write(w, span.recordedState);
  const server = span.kind === SPAN_KIND.server;
  if (server) serverSpanHead.write(w, span.method, span.route, span.service ?? '');
  else clientSpanHead.write(w, span.method, span.service ?? '');
  w.byte(SPAN.startTimeUnixNano);
  w.nanosFromMs(TIME_ORIGIN + span.startAt);
  w.byte(SPAN.endTimeUnixNano);
  w.nanosFromMs(TIME_ORIGIN + span.endAt);
  if (server) stringAttribute(w, SPAN.attributes, KEYS.path, span.path);
  if (span.statusCode > 0) statusAttribute(w, SPAN_STATUS_FIELDS, SPAN.attributes, span.statusCode);
  if (span.failed) {
    w.byte(SPAN.status);
    const status = w.begin(1);
    if (span.failure !== undefined) w.string(SPAN_STATUS.message, span.failure);
    w.byte(SPAN_STATUS.code);
    w.byte(STATUS_ERROR);
    w.end(status, 1);
  }
  w.end(record, 2);
}

const severityOf = (status: number): Severity => (status >= 500 ? SEVERITY.ERROR : status >= 400 ? SEVERITY.WARN : SEVERITY.INFO);

/** Each severity's number and text fields, encoded once. */
const SEVERITY_FIELDS = new Map<Severity, Uint8Array>(
  Object.values(SEVERITY).map((severity) => [
    severity,
    encodedOnce((w) => {
      w.byte(LOG_RECORD.severityNumber);
      w.byte(severity.number);
      w.string(LOG_RECORD.severityText, severity.text);
    }),
  ]),
);

function logRecordHead(w: ProtoWriter, timeMs: number, severity: Severity): void {
  w.byte(LOG_RECORD.timeUnixNano);
  const time = w.pos;
  w.nanosFromMs(timeMs);
  w.byte(LOG_RECORD.observedTimeUnixNano);
  w.copy(time, 8);
  w.raw(SEVERITY_FIELDS.get(severity)!);
}

/** What the access line takes of the request (the telemetry's RequestFacts). */
export interface AccessRequest {
  readonly method: string;
  /** The route pattern, '' when nothing matched. */
  readonly route: string;
}

/** What the access line takes of the answer (the telemetry's ResponseFacts). */
export interface AccessResponse {
  readonly status: number;
  readonly durationMs: number;
  readonly requestId: string;
  readonly clientAddress: string | undefined;
  readonly userId?: string | undefined;
  readonly service?: string | undefined;
}

/** What an access line takes at most, in bytes. */
export function accessLineBound(request: AccessRequest, path: string, response: AccessResponse): number {
  return (
    512 +
    3 * (2 * request.method.length + 2 * path.length + request.route.length + response.requestId.length) +
    most(response.clientAddress) +
    most(response.userId) +
    most(response.service)
  );
}

/** An access line's attributes that repeat: log.type, method, route, the proxied service. */
const accessHead = new FieldCache((w, method, route, service) => {
  stringAttribute(w, LOG_RECORD.attributes, KEYS.logType, LOG_TYPES.access);
  stringAttribute(w, LOG_RECORD.attributes, KEYS.method, method);
  stringAttribute(w, LOG_RECORD.attributes, KEYS.route, route);
  if (service) stringAttribute(w, LOG_RECORD.attributes, KEYS.service, service);
});
/** The start of an access line's body: the method and a space. */
const accessMethod = new FieldCache((w, method) => {
  w.text(method);
  w.byte(0x20);
});
const accessClientAddress = new FieldCache((w, address) => stringAttribute(w, LOG_RECORD.attributes, KEYS.clientAddress, address));
const accessUserId = new FieldCache((w, id) => stringAttribute(w, LOG_RECORD.attributes, KEYS.userId, id));

/**
 * A request's access line, as one `log_records` field of ScopeLogs, at `at` (performance.now(),
 * the end of its server span), with the trace and span id of that span. `path` is the request's
 * path without the query.
 */
export function writeAccessLine(
  w: ProtoWriter,
  request: AccessRequest,
  path: string,
  response: AccessResponse,
  at: number,
  span: SpanIds | undefined,
): void {
  const { status } = response;
  w.byte(FIELD_2);
  const record = w.begin(2);
  logRecordHead(w, TIME_ORIGIN + at, severityOf(status));
  const tag = LOG_RECORD.attributes;
  accessHead.write(w, request.method, request.route, response.service ?? '');
  const pathBytes = stringAttribute(w, tag, KEYS.path, path);
  const pathAt = w.pos - pathBytes;
  statusAttribute(w, ACCESS_STATUS_FIELDS, tag, status);
  numberAttribute(w, tag, KEYS.durationMs, Math.round(response.durationMs * 1000) / 1000);
  stringAttribute(w, tag, KEYS.requestId, response.requestId);
  if (response.clientAddress) accessClientAddress.write(w, response.clientAddress);
  if (response.userId) accessUserId.write(w, response.userId);
  // The body ("GET /path 404") after the attributes (protobuf fields come in any order), so that its
  // path is a copy of the url.path value's bytes: each Buffer.write costs about a thousand
  // instructions (docs/benchmarks.md, "Self-watching cost: reading").
  w.byte(LOG_RECORD.body);
  const body = w.begin(1);
  w.byte(ANY_VALUE.string);
  const text = w.begin(1);
  accessMethod.write(w, request.method);
  w.copy(pathAt, pathBytes);
  w.byte(0x20);
  w.digits(status);
  w.end(text, 1);
  w.end(body, 1);
  if (span !== undefined) {
    if (span.sampled) {
      w.byte(LOG_RECORD.flags);
      w.fixed32(FLAG_SAMPLED);
    }
    traceIdField(w, LOG_RECORD.traceId, span);
    spanIdField(w, LOG_RECORD.spanId, span.s0, span.s1);
  }
  w.end(record, 2);
}

/** What a log record of these attributes and body takes at most, in bytes. */
export function logRecordBound(body: string, values: Attributes): number {
  return 256 + 3 * body.length + attributesBound(values);
}

/**
 * A log record (an audit event: few, so an attributes object is fine), as one `log_records` field
 * of ScopeLogs. `timeMs`: milliseconds since the epoch.
 */
export function writeLogRecord(w: ProtoWriter, timeMs: number, severity: Severity, body: string, values: Attributes): void {
  w.byte(FIELD_2);
  const record = w.begin(2);
  logRecordHead(w, timeMs, severity);
  w.byte(LOG_RECORD.body);
  const value = w.begin(1);
  w.string(ANY_VALUE.string, body);
  w.end(value, 1);
  attributes(w, LOG_RECORD.attributes, values);
  w.end(record, 2);
}

/**
 * The ExportLogsServiceRequest (or ExportTraceServiceRequest) around a batch of records: one
 * ResourceLogs (ResourceSpans) with the resource, holding one ScopeLogs (ScopeSpans) with the scope
 * and the records. Both messages have the same field numbers, so one envelope serves both. The
 * resource and scope are encoded once; the two lengths that depend on the records are written at
 * send time, right in front of them.
 */
export function otlpEnvelope(resource: Attributes, scopeName: string): Envelope {
  const w = new ProtoWriter(Buffer.alloc(4096 + attributesBound(resource) + 3 * scopeName.length));
  w.byte(FIELD_1); // ResourceX.resource
  const resourceAt = w.begin(1);
  attributes(w, FIELD_1, resource);
  w.end(resourceAt, 1);
  const resourceEnd = w.pos;
  w.byte(FIELD_1); // ScopeX.scope
  const scopeAt = w.begin(1);
  w.string(FIELD_1, scopeName);
  w.end(scopeAt, 1);
  const resourceField = Buffer.from(w.buf.subarray(0, resourceEnd));
  const scopeField = Buffer.from(w.buf.subarray(resourceEnd, w.pos));
  return {
    // Two tags and two lengths (at most 5 bytes each for a body under 4 GiB) besides the two fields.
    headroom: resourceField.length + scopeField.length + 12,
    frame(bytes, recordsStart, recordsEnd) {
      const scope = scopeField.length + (recordsEnd - recordsStart);
      const outer = resourceField.length + 1 + varintSize(scope) + scope;
      const start = recordsStart - (1 + varintSize(outer) + resourceField.length + 1 + varintSize(scope) + scopeField.length);
      let at = start;
      bytes[at++] = FIELD_1; // ExportXServiceRequest.resource_x
      at = writeVarintAt(bytes, at, outer);
      bytes.set(resourceField, at);
      at += resourceField.length;
      bytes[at++] = FIELD_2; // ResourceX.scope_x
      at = writeVarintAt(bytes, at, scope);
      bytes.set(scopeField, at);
      return start;
    },
  };
}
