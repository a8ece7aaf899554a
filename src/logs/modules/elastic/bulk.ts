import { randomBytes } from 'node:crypto';
import type { AttributeValue, LogEntry } from '../store/log-store.js';
import { isPlainObject, type PlainObject } from '../../../shared/text/storable-text.js';
import { flattenInto, MAX_DOCUMENT_DEPTH, nestedDeeperThan } from '../ingest/flatten.js';
import { withCanonicalLevel } from '../ingest/pipeline.js';
import { dict, type Dict } from '../../../shared/dict.js';

/** One action of an Elasticsearch `_bulk` body, as the response reports it. */
export interface BulkItem {
  action: 'index' | 'create' | 'update' | 'delete';
  index: string;
  id: string;
  /** Undefined when the document was accepted. */
  error?: { type: string; reason: string } | undefined;
  /** Index into the entries of the batch, for accepted documents. */
  entry?: number | undefined;
}

export interface BulkParse {
  items: BulkItem[];
  /** The accepted documents, as log entries. */
  entries: LogEntry[];
}

/** Field names shippers use for the core fields, in order of preference (Fluent Bit, Vector, Filebeat, Logstash, ECS). */
/** rsyslog's (`omelasticsearch`'s default template and the common ones) are included: timereported, priority, fromhost, programname. */
const TIMESTAMP = ['@timestamp', 'timestamp', 'time', '@t', 'timereported', 'timegenerated'];
const MESSAGE = ['message', 'msg', 'log', '@m', '@message'];
const LEVEL = ['level', 'log.level', 'severity', 'loglevel', '@l', 'priority', 'syslogseverity-text', '@severity', 'syslogseverity'];
const SERVICE = [
  'service',
  'service.name',
  'app',
  'application',
  'kubernetes.container_name',
  'kubernetes.labels.app',
  'programname',
  'program',
  'app-name',
];
const HOST = ['host', 'host.name', 'hostname', 'kubernetes.host', 'fromhost', 'sysloghost', '@host'];
const TRACE = ['trace_id', 'trace.id', 'traceId'];
const SPAN = ['span_id', 'span.id', 'spanId'];

function take(flat: Dict<AttributeValue>, names: readonly string[]): AttributeValue | undefined {
  for (const name of names) {
    if (name in flat) {
      const value = flat[name];
      delete flat[name];
      return value;
    }
  }
  return undefined;
}

/** ISO 8601 text, epoch milliseconds, or epoch seconds with a fraction (Fluent Bit's `time`). */
function timestampOf(value: AttributeValue | undefined, now: number): number | undefined {
  if (value === undefined) return now;
  if (typeof value === 'number') return value < 1e11 ? Math.round(value * 1000) : Math.round(value);
  if (typeof value === 'string') {
    if (/^\d+(\.\d+)?$/.test(value)) return timestampOf(Number(value), now);
    const ms = Date.parse(value);
    return Number.isNaN(ms) ? undefined : ms;
  }
  return undefined;
}

const asText = (value: AttributeValue | undefined, max: number): string | undefined =>
  value === undefined ? undefined : String(value).slice(0, max);

/** rsyslog's `syslogtag` (`sshd[1234]:`) names the program when no other field does. */
function serviceOfSyslogTag(tag: AttributeValue | undefined): string | undefined {
  if (typeof tag !== 'string') return undefined;
  const name = /^([^[:\s]+)/.exec(tag)?.[1];
  return name?.slice(0, 256);
}

/** One source document -> a log entry; a string describing the problem when it cannot be read. */
export function documentToEntry(doc: unknown, now: number): LogEntry | string {
  if (!isPlainObject(doc)) return 'the document must be a JSON object';
  if (nestedDeeperThan(doc, MAX_DOCUMENT_DEPTH)) return `the document nests deeper than ${MAX_DOCUMENT_DEPTH} levels`;
  const flat = dict<AttributeValue>();
  flattenInto(flat, doc, '');
  const timestamp = timestampOf(take(flat, TIMESTAMP), now);
  if (timestamp === undefined) return 'failed to parse field [@timestamp]';
  const message = take(flat, MESSAGE);
  return {
    timestamp,
    message: message === undefined ? '' : String(message),
    level: asText(take(flat, LEVEL), 32),
    service: asText(take(flat, SERVICE), 256) ?? serviceOfSyslogTag(flat.syslogtag),
    host: asText(take(flat, HOST), 256),
    trace_id: asText(take(flat, TRACE), 64),
    span_id: asText(take(flat, SPAN), 32),
    attributes: flat,
  };
}

/**
 * Parses an NDJSON bulk body: action lines (`index`, `create`) each followed by a source line.
 * A bad line fails its own item only; the good documents around it are kept. `update` and
 * `delete` are refused per item (logs are append-only).
 */
export function parseBulk(body: string, defaultIndex: string, now: number): BulkParse {
  const lines = body
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  const items: BulkItem[] = [];
  const entries: LogEntry[] = [];
  let i = 0;
  while (i < lines.length) {
    let action: PlainObject | undefined;
    try {
      const parsed = JSON.parse(lines[i]!) as unknown;
      if (isPlainObject(parsed)) action = parsed;
    } catch {
      // reported below
    }
    const kind = action ? Object.keys(action)[0] : undefined;
    const meta = action && kind && isPlainObject(action[kind]) ? action[kind] : {};
    const index = typeof meta._index === 'string' ? meta._index : defaultIndex;
    const explicitId = typeof meta._id === 'string' && meta._id !== '' ? meta._id.slice(0, MAX_ID_LENGTH) : undefined;
    const id = explicitId ?? generatedId();
    if (kind !== 'index' && kind !== 'create' && kind !== 'update' && kind !== 'delete') {
      // The line is no action: assume the usual pairing and skip its document line too.
      items.push({
        action: 'index',
        index,
        id,
        error: { type: 'action_request_validation_exception', reason: `line ${i + 1}: expected an action (index or create)` },
      });
      i += 2;
      continue;
    }
    /** Refuses this item with Elasticsearch's error type and a reason; the rest of the batch goes on. */
    const refuse = (type: string, reason: string) => items.push({ action: kind, index, id, error: { type, reason } });
    if (kind === 'delete') {
      refuse('illegal_argument_exception', 'logs are append-only: delete is not supported');
      i += 1;
      continue;
    }
    const source = lines[i + 1];
    i += 2;
    if (kind === 'update') {
      refuse('illegal_argument_exception', 'logs are append-only: update is not supported');
      continue;
    }
    if (source === undefined) {
      refuse('action_request_validation_exception', 'the action has no document line');
      continue;
    }
    let doc: unknown;
    try {
      doc = JSON.parse(source);
    } catch {
      refuse('mapper_parsing_exception', 'failed to parse the document: not JSON');
      continue;
    }
    const entry = documentToEntry(doc, now);
    if (typeof entry === 'string') {
      refuse('mapper_parsing_exception', entry);
      continue;
    }
    items.push({ action: kind, index, id, entry: entries.length });
    entries.push(storedDocument(entry, index, explicitId, id));
  }
  return { items, entries };
}

/** Elasticsearch's limit on an `_id`: 512 bytes (here characters; longer ones are cut). */
export const MAX_ID_LENGTH = 512;

const ID_PREFIX = randomBytes(9);
let idCounter = 0;

/**
 * An `_id` for a document sent without one: 20 URL-safe characters, as Elasticsearch's own. A random
 * prefix per process and a counter: unique across instances and restarts without a lookup, so it is
 * stored as the `_id` attribute but not claimed in the id window (nobody can have sent it before).
 */
export function generatedId(): string {
  idCounter = (idCounter + 1) % 2 ** 48;
  const bytes = Buffer.alloc(15);
  ID_PREFIX.copy(bytes, 0);
  bytes.writeUIntBE(idCounter, 9, 6);
  return bytes.toString('base64url');
}

/**
 * A document as stored: its `_index`, and its `_id` as the attribute every read shows (search hits,
 * `GET _doc`, `ids` queries). A sender's id is the entry's documentId (remembered in the id window,
 * so a retry is stored once); a generated one is only the attribute.
 */
export function storedDocument(entry: LogEntry, index: string, explicitId: string | undefined, id: string): LogEntry {
  const attributes = Object.assign(dict<AttributeValue>(), entry.attributes, { _index: index.slice(0, 255) });
  if (explicitId === undefined) attributes._id = id;
  else delete attributes._id;
  return withCanonicalLevel({ ...entry, documentId: explicitId, attributes });
}

/**
 * The response body Elasticsearch gives for `_bulk`, which shippers read for per-item retries.
 * `duplicates`: entries whose `_id` was already stored: a `create` of one is a 409 conflict, as in
 * Elasticsearch; an `index` of one keeps the stored document (logs are immutable) and says `noop`.
 */
export function bulkResponse(items: readonly BulkItem[], duplicates: ReadonlySet<number>, tookMs: number) {
  let errors = false;
  const out = items.map((item, seq) => {
    const head = { _index: item.index, _id: item.id };
    if (item.error) {
      errors = true;
      return { [item.action]: { ...head, status: 400, error: item.error } };
    }
    if (item.entry !== undefined && duplicates.has(item.entry)) {
      if (item.action === 'create') {
        errors = true;
        const reason = `[${item.id}]: version conflict, document already exists (current version [1])`;
        return { [item.action]: { ...head, status: 409, error: { type: 'version_conflict_engine_exception', reason } } };
      }
      return { [item.action]: { ...head, _version: 1, result: 'noop', _shards: { total: 1, successful: 1, failed: 0 }, status: 200 } };
    }
    return {
      [item.action]: {
        ...head,
        _version: 1,
        result: 'created',
        _shards: { total: 1, successful: 1, failed: 0 },
        _seq_no: seq,
        _primary_term: 1,
        status: 201,
      },
    };
  });
  return { took: tookMs, errors, items: out };
}
