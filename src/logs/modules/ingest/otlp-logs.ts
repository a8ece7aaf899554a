import { LEVELS } from '../query/levels.js';
import type { AttributeValue, LogEntry } from '../store/log-store.js';
import { isPlainObject, type PlainObject } from '../../../shared/text/storable-text.js';
import { assignAttributes, attributesOf, list, plainValue } from './otlp-common.js';
import { flattenInto } from './flatten.js';
import { canonicalizeLevel, rememberedLevel, type Mapping } from './pipeline.js';
import { dict, type Dict } from '../../../shared/dict.js';
import { visitLogsRequest, type LogsVisitor, type PlainRecord } from './otlp-logs-decode.js';

/** Nanoseconds since the epoch (decimal string or number) -> ms; undefined when absent or zero. */
function nanosToMs(value: unknown): number | undefined {
  if (value === undefined || value === null || value === '' || value === 0 || value === '0') return undefined;
  if (typeof value === 'number') return Number.isFinite(value) && value > 0 ? Math.floor(value / 1e6) : Number.NaN;
  // Whole milliseconds of decimal nanoseconds: the digits but the last six (at most 14 of them: exact as a number).
  if (typeof value === 'string' && /^\d{1,20}$/.test(value)) return value.length > 6 ? Number(value.slice(0, -6)) : 0;
  return Number.NaN;
}

/** Trace and span ids: hex in OTLP/JSON, bytes in protobuf; all-zero means none. */
function idOf(value: unknown): string | undefined {
  let hex: string | undefined;
  if (typeof value === 'string') hex = value.toLowerCase();
  // A Buffer (protobuf's bytes) as it is; another Uint8Array viewed, not copied.
  else if (value instanceof Uint8Array)
    hex = (Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength)).toString('hex');
  if (!hex || !/^[0-9a-f]+$/.test(hex) || /^0+$/.test(hex)) return undefined;
  return hex;
}

/** OTLP severity number ranges (1-4 trace ... 21-24 fatal), else the text (made one of LEVELS when stored). */
export function levelOf(severityNumber: unknown, severityText: unknown): string | undefined {
  const n = Number(severityNumber);
  if (Number.isInteger(n) && n >= 1 && n <= 24) return LEVELS[Math.floor((n - 1) / 4)];
  if (typeof severityText === 'string' && severityText.trim() !== '') return severityText.trim().toLowerCase().slice(0, 32);
  return undefined;
}

/**
 * OTLP logs (JSON or decoded protobuf) -> log entries. `service.name` and `host.name` of the
 * resource become `service` and `host`; every other resource, scope and record attribute is kept
 * under its dotted name (record attributes win). Records that cannot be read are counted, not stored.
 */
export function mapOtlpLogs(request: unknown, now: number): Mapping<LogEntry> {
  if (!isPlainObject(request)) throw new Error('the body must be an ExportLogsServiceRequest object');
  const mapper = new LogsMapper(now);
  for (const resourceLogs of list(request.resourceLogs)) {
    if (!isPlainObject(resourceLogs)) continue;
    mapper.resourceLogs(resourceLogs);
    for (const scopeLogs of list(resourceLogs.scopeLogs)) {
      if (!isPlainObject(scopeLogs)) continue;
      mapper.scopeLogs(scopeLogs);
      for (const record of list(scopeLogs.logRecords)) mapper.logRecord(record);
    }
  }
  return mapper.result;
}

/**
 * mapOtlpLogs of a protobuf body, each record mapped as soon as it is read (visitLogsRequest, with a
 * turn of the event loop every few hundred records); throws where decoding would.
 */
export async function mapOtlpLogsProtobuf(body: Uint8Array, now: number): Promise<Mapping<LogEntry>> {
  const mapper = new LogsMapper(now);
  await visitLogsRequest(body, mapper);
  return mapper.result;
}

/**
 * mapOtlpLogs as a visitor, one message at a time: a ResourceLogs (its `resource`), then each of its
 * ScopeLogs (its `scope`), then each of their records; what it made is `result`. The protobuf path
 * (otlp-logs-decode.ts visitLogsRequest) maps each record as soon as it is read.
 */
export class LogsMapper implements LogsVisitor {
  readonly result: Mapping<LogEntry> = { items: [], rejected: 0, errors: [] };
  private resource = dict<AttributeValue>();
  private service: string | undefined;
  private host: string | undefined;
  private scopeAttributes = dict<AttributeValue>();

  constructor(private readonly now: number) {}

  resourceLogs(resourceLogs: PlainObject): void {
    const resource = attributesOf((resourceLogs.resource as PlainObject | undefined)?.attributes);
    this.service = typeof resource['service.name'] === 'string' ? resource['service.name'] : undefined;
    this.host = typeof resource['host.name'] === 'string' ? resource['host.name'] : undefined;
    delete resource['service.name'];
    delete resource['host.name'];
    this.resource = resource;
  }

  scopeLogs(scopeLogs: PlainObject): void {
    const scope = isPlainObject(scopeLogs.scope) ? scopeLogs.scope : {};
    const scopeAttributes = dict<AttributeValue>();
    if (typeof scope.name === 'string' && scope.name !== '') scopeAttributes['otel.scope.name'] = scope.name;
    if (typeof scope.version === 'string' && scope.version !== '') scopeAttributes['otel.scope.version'] = scope.version;
    this.scopeAttributes = scopeAttributes;
  }

  logRecord(record: unknown): void {
    const { result } = this;
    if (!isPlainObject(record)) {
      result.rejected += 1;
      return;
    }
    const time = nanosToMs(record.timeUnixNano) ?? nanosToMs(record.observedTimeUnixNano) ?? this.now;
    if (Number.isNaN(time)) {
      result.rejected += 1;
      if (result.errors.length < 5) result.errors.push('timeUnixNano is not a number of nanoseconds');
      return;
    }
    const attributes = this.recordAttributes();
    // The record's own win (assignAttributes: as attributesOf, without its dictionaries).
    assignAttributes(attributes, record.attributes);
    this.add(time, plainValue(record.body), attributes, record, idOf(record.traceId), idOf(record.spanId));
  }

  /** A record read straight off the wire (otlp-logs-decode.ts): mapped as logRecord maps its Message. */
  plainRecord(record: PlainRecord): void {
    const attributes = this.recordAttributes();
    const { keys, values, count } = record;
    // Each scalar as assignAttributes puts it (a named string, boolean or finite number).
    const fields = { count: 0 };
    for (let index = 0; index < count; index += 1) flattenInto(attributes, values[index], keys[index]!, 0, fields);
    this.add(record.timeMs ?? record.observedMs ?? this.now, record.body, attributes, record, record.traceId, record.spanId);
  }

  /** A record's attributes before its own: its resource's, then its scope's. */
  private recordAttributes(): Dict<AttributeValue> {
    return Object.assign(dict<AttributeValue>(), this.resource, this.scopeAttributes);
  }

  /** The entry of a record: `named` holds its eventName, severityNumber and severityText as read. */
  private add(
    timestamp: number,
    body: unknown,
    attributes: Dict<AttributeValue>,
    named: { eventName?: unknown; severityNumber?: unknown; severityText?: unknown },
    traceId: string | undefined,
    spanId: string | undefined,
  ): void {
    const { eventName, severityNumber, severityText } = named;
    if (typeof eventName === 'string' && eventName !== '') attributes['event.name'] = eventName;
    const level = levelOf(severityNumber, severityText);
    // The sender's own severity text, when the number decided the level (`ERR` with number 17).
    const text = typeof severityText === 'string' ? severityText.trim() : '';
    const canonical = text === '' ? undefined : rememberedLevel(text);
    if (canonical && (canonical.original !== undefined || canonical.level !== level)) attributes.severity_text = text.slice(0, 64);
    // A fresh entry with attributes of its own: made canonical in place.
    this.result.items.push(
      canonicalizeLevel({
        timestamp,
        message: body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body),
        level,
        service: this.service,
        host: this.host,
        trace_id: traceId,
        span_id: spanId,
        attributes,
        documentId: undefined,
      }),
    );
  }
}
