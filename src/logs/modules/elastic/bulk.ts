import { randomBytes } from 'node:crypto';
import type { AttributeValue, LogEntry } from '../store/log-store.js';
import { nextTurn } from '../store/write-batch.js';
import { isPlainObject, type PlainObject } from '../../../shared/text/storable-text.js';
import { flattenDocument, MAX_DOCUMENT_DEPTH, type FlatDocument } from '../ingest/flatten.js';
import { flattenJsonText } from '../ingest/flatten-json.js';
import { canonicalizeLevel, DECODE_CHUNK } from '../ingest/pipeline.js';

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

/** Every name of the core fields, each with a slot of its own in a flattened document (flattenDocument). */
const CORE_SLOTS = new Map([TIMESTAMP, MESSAGE, LEVEL, SERVICE, HOST, TRACE, SPAN].flat().map((name, slot) => [name, slot]));

/** The core fields' values of the document being read, by slot (documentToEntry). */
const CORE_VALUES = new Array<AttributeValue | undefined>(CORE_SLOTS.size).fill(undefined);

/** One core field's names in order of preference, with their slots (looked up once, not per document). */
interface CoreField {
  names: readonly string[];
  slots: readonly number[];
}
const coreField = (names: readonly string[]): CoreField => ({ names, slots: names.map((name) => CORE_SLOTS.get(name)!) });
const TIMESTAMP_FIELD = coreField(TIMESTAMP);
const MESSAGE_FIELD = coreField(MESSAGE);
const LEVEL_FIELD = coreField(LEVEL);
const SERVICE_FIELD = coreField(SERVICE);
const HOST_FIELD = coreField(HOST);
const TRACE_FIELD = coreField(TRACE);
const SPAN_FIELD = coreField(SPAN);

/**
 * The value of the first of the field's names the document has; the others it has stay attributes
 * (as Elasticsearch keeps every field of the source).
 */
function take(flat: FlatDocument, field: CoreField): AttributeValue | undefined {
  let taken: AttributeValue | undefined;
  const { reserved } = flat;
  for (let index = 0; index < field.slots.length; index += 1) {
    const value = reserved[field.slots[index]!];
    if (value === undefined) continue;
    if (taken === undefined) taken = value;
    else flat.fields[field.names[index]!] = value;
  }
  return taken;
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
  // One array for every document's core fields: filled by the walk, read by take() right after.
  CORE_VALUES.fill(undefined);
  const flat = flattenDocument(doc, CORE_SLOTS, CORE_VALUES);
  if (flat === undefined) return `the document nests deeper than ${MAX_DOCUMENT_DEPTH} levels`;
  return flatToEntry(flat, now);
}

/**
 * A document line -> documentToEntry(JSON.parse(line)), read straight from the text when it has the
 * shape shippers send (flatten-json.ts); undefined when the line is no JSON.
 */
export function sourceToEntry(source: string, now: number): LogEntry | string | undefined {
  CORE_VALUES.fill(undefined);
  const flat = flattenJsonText(source, CORE_SLOTS, CORE_VALUES);
  if (flat !== undefined) return flatToEntry(flat, now);
  let doc: unknown;
  try {
    doc = JSON.parse(source);
  } catch {
    return undefined;
  }
  return documentToEntry(doc, now);
}

/** A flattened document's log entry (its core fields taken from CORE_VALUES), or what is wrong with it. */
function flatToEntry(flat: FlatDocument, now: number): LogEntry | string {
  const timestamp = timestampOf(take(flat, TIMESTAMP_FIELD), now);
  if (timestamp === undefined) return 'failed to parse field [@timestamp]';
  const message = take(flat, MESSAGE_FIELD);
  return {
    timestamp,
    message: message === undefined ? '' : String(message),
    level: asText(take(flat, LEVEL_FIELD), 32),
    service: asText(take(flat, SERVICE_FIELD), 256) ?? serviceOfSyslogTag(flat.fields.syslogtag),
    host: asText(take(flat, HOST_FIELD), 256),
    trace_id: asText(take(flat, TRACE_FIELD), 64),
    span_id: asText(take(flat, SPAN_FIELD), 32),
    attributes: flat.fields,
    documentId: undefined,
  };
}

/** The lines of an NDJSON body one at a time, trimmed, blank ones skipped: no array of every line. */
class NdjsonLines {
  private position = 0;
  /** How many lines (not blank) were read: the number of the last one. */
  count = 0;
  constructor(private readonly body: string) {}

  next(): string | undefined {
    const { body } = this;
    while (this.position < body.length) {
      let end = body.indexOf('\n', this.position);
      if (end === -1) end = body.length;
      const line = body.slice(this.position, end).trim();
      this.position = end + 1;
      if (line !== '') {
        this.count += 1;
        return line;
      }
    }
    return undefined;
  }
}

/** What an action line says: its action (the first key), `_index` (else the default) and `_id`. */
interface ActionLine {
  kind: string | undefined;
  index: string;
  explicitId: string | undefined;
}

function actionOf(line: string, defaultIndex: string): ActionLine {
  let action: PlainObject | undefined;
  try {
    const parsed = JSON.parse(line) as unknown;
    if (isPlainObject(parsed)) action = parsed;
  } catch {
    // not an action: reported by the caller
  }
  const kind = action ? Object.keys(action)[0] : undefined;
  const meta = action && kind && isPlainObject(action[kind]) ? action[kind] : {};
  const index = typeof meta._index === 'string' ? meta._index : defaultIndex;
  const explicitId = typeof meta._id === 'string' && meta._id !== '' ? meta._id.slice(0, MAX_ID_LENGTH) : undefined;
  return { kind, index, explicitId };
}

/** Distinct action lines a body's parse remembers: shippers repeat one (`{"create":{}}`) for every document. */
const ACTION_MEMORY = 64;

/**
 * Parses an NDJSON bulk body: action lines (`index`, `create`) each followed by a source line.
 * A bad line fails its own item only; the good documents around it are kept. `update` and
 * `delete` are refused per item (logs are append-only).
 */
export function parseBulk(body: string, defaultIndex: string, now: number): BulkParse {
  const parser = new BulkParser(body, defaultIndex, now);
  while (parser.read(Infinity));
  return parser;
}

/** parseBulk with a turn of the event loop every DECODE_CHUNK actions (ingest/pipeline.ts). */
export async function parseBulkInTurns(
  body: string,
  defaultIndex: string,
  now: number,
  turn: () => Promise<void> = nextTurn,
): Promise<BulkParse> {
  const parser = new BulkParser(body, defaultIndex, now);
  while (parser.read(DECODE_CHUNK)) await turn();
  return parser;
}

/** parseBulk's reading of one body, some actions at a time (read). */
class BulkParser implements BulkParse {
  readonly items: BulkItem[] = [];
  readonly entries: LogEntry[] = [];
  readonly #lines: NdjsonLines;
  // An action line is read once: what it says serves every repeat of the line.
  readonly #actions = new Map<string, ActionLine>();

  constructor(
    body: string,
    private readonly defaultIndex: string,
    private readonly now: number,
  ) {
    this.#lines = new NdjsonLines(body);
  }

  /** Reads up to `actions` actions; false once the body is read to its end. */
  read(actions: number): boolean {
    const lines = this.#lines;
    const { items, entries, defaultIndex, now } = this;
    const actionLines = this.#actions;
    for (let count = 0; count < actions; count += 1) {
      const line = lines.next();
      if (line === undefined) return false;
      const lineNumber = lines.count;
      let action = actionLines.get(line);
      if (action === undefined) {
        action = actionOf(line, defaultIndex);
        if (actionLines.size < ACTION_MEMORY) actionLines.set(line, action);
      }
      const { kind, index, explicitId } = action;
      const id = explicitId ?? generatedId();
      if (kind !== 'index' && kind !== 'create' && kind !== 'update' && kind !== 'delete') {
        // The line is no action: assume the usual pairing and skip its document line too.
        items.push({
          action: 'index',
          index,
          id,
          error: { type: 'action_request_validation_exception', reason: `line ${lineNumber}: expected an action (index or create)` },
          entry: undefined,
        });
        lines.next();
        continue;
      }
      if (kind === 'delete') {
        items.push(refused(kind, index, id, 'illegal_argument_exception', 'logs are append-only: delete is not supported'));
        continue;
      }
      const source = lines.next();
      if (kind === 'update') {
        items.push(refused(kind, index, id, 'illegal_argument_exception', 'logs are append-only: update is not supported'));
        continue;
      }
      if (source === undefined) {
        items.push(refused(kind, index, id, 'action_request_validation_exception', 'the action has no document line'));
        continue;
      }
      const entry = sourceToEntry(source, now);
      if (entry === undefined) {
        items.push(refused(kind, index, id, 'mapper_parsing_exception', 'failed to parse the document: not JSON'));
        continue;
      }
      if (typeof entry === 'string') {
        items.push(refused(kind, index, id, 'mapper_parsing_exception', entry));
        continue;
      }
      items.push({ action: kind, index, id, error: undefined, entry: entries.length });
      entries.push(storedDocument(entry, index, explicitId, id));
    }
    return true;
  }
}

/** An item refused with Elasticsearch's error type and a reason; the rest of the batch goes on. */
function refused(action: BulkItem['action'], index: string, id: string, type: string, reason: string): BulkItem {
  return { action, index, id, error: { type, reason }, entry: undefined };
}

/** Elasticsearch's limit on an `_id`: 512 bytes (here characters; longer ones are cut). */
export const MAX_ID_LENGTH = 512;

/** 9 random bytes are 12 base64url characters exactly: the prefix's characters are made once. */
const ID_PREFIX = [...randomBytes(9).toString('base64url')].map((character) => character.charCodeAt(0));
const BASE64URL = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'].map((character) => character.charCodeAt(0));
let idCounter = 0;

/**
 * An `_id` for a document sent without one: 20 URL-safe characters, as Elasticsearch's own. A random
 * prefix per process and a counter: unique across instances and restarts without a lookup, so it is
 * stored as the `_id` attribute but not claimed in the id window (nobody can have sent it before).
 * The base64url of the prefix's 9 bytes and the counter's 6 (big-endian), written without a buffer
 * per document.
 */
export function generatedId(): string {
  idCounter = (idCounter + 1) % 2 ** 48;
  const high = Math.floor(idCounter / 2 ** 24);
  const low = idCounter % 2 ** 24;
  const [p0, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11] = ID_PREFIX as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  // One flat string of 20 characters: no buffer, no concatenation.
  return String.fromCharCode(
    p0,
    p1,
    p2,
    p3,
    p4,
    p5,
    p6,
    p7,
    p8,
    p9,
    p10,
    p11,
    BASE64URL[(high >>> 18) & 63]!,
    BASE64URL[(high >>> 12) & 63]!,
    BASE64URL[(high >>> 6) & 63]!,
    BASE64URL[high & 63]!,
    BASE64URL[(low >>> 18) & 63]!,
    BASE64URL[(low >>> 12) & 63]!,
    BASE64URL[(low >>> 6) & 63]!,
    BASE64URL[low & 63]!,
  );
}

/**
 * A document as stored: its `_index`, and its `_id` as the attribute every read shows (search hits,
 * `GET _doc`, `ids` queries). A sender's id is the entry's documentId (remembered in the id window,
 * so a retry is stored once); a generated one is only the attribute.
 */
export function storedDocument(entry: LogEntry, index: string, explicitId: string | undefined, id: string): LogEntry {
  // The entry and its attributes are the caller's fresh parse (documentToEntry): completed in place, not copied.
  const attributes = entry.attributes!;
  attributes._index = index.slice(0, 255);
  if (explicitId === undefined) attributes._id = id;
  else if (attributes._id !== undefined) delete attributes._id;
  entry.documentId = explicitId;
  return canonicalizeLevel(entry);
}

/**
 * The response body Elasticsearch gives for `_bulk`, which shippers read for per-item retries.
 * `duplicates`: entries whose `_id` was already stored: a `create` of one is a 409 conflict, as in
 * Elasticsearch; an `index` of one keeps the stored document (logs are immutable) and says `noop`.
 */
export function bulkResponse(items: readonly BulkItem[], duplicates: ReadonlySet<number>, tookMs: number) {
  let errors = false;
  const out = items.map((item, seq) => {
    if (itemFailed(item, duplicates)) errors = true;
    return itemAnswer(item, seq, duplicates);
  });
  return { took: tookMs, errors, items: out };
}

/**
 * bulkResponse as JSON text, written directly: the answer to a batch of thousands of documents without
 * an object per item and their serialization. An accepted document's item (nearly all of them) is
 * text made from its action, `_index` and `_id`; any other item is its object's JSON.
 */
export function bulkResponseText(items: readonly BulkItem[], duplicates: ReadonlySet<number>, tookMs: number): string {
  let errors = false;
  let text = '';
  let lastIndex: string | undefined;
  let indexJson = '';
  for (let seq = 0; seq < items.length; seq += 1) {
    const item = items[seq]!;
    if (seq > 0) text += ',';
    if (item.error === undefined && (item.entry === undefined || !duplicates.has(item.entry))) {
      if (item.index !== lastIndex) {
        lastIndex = item.index;
        indexJson = JSON.stringify(item.index);
      }
      text += `{"${item.action}":{"_index":${indexJson},"_id":${JSON.stringify(item.id)},"_version":1,"result":"created","_shards":${SHARDS_JSON},"_seq_no":${seq},"_primary_term":1,"status":201}}`;
      continue;
    }
    if (itemFailed(item, duplicates)) errors = true;
    text += JSON.stringify(itemAnswer(item, seq, duplicates));
  }
  return `{"took":${JSON.stringify(tookMs)},"errors":${errors},"items":[${text}]}`;
}

/** Whether the item is an error of the answer: refused, or a `create` of an `_id` already stored. */
const itemFailed = (item: BulkItem, duplicates: ReadonlySet<number>): boolean =>
  item.error !== undefined || (item.action === 'create' && item.entry !== undefined && duplicates.has(item.entry));

/** One item of the answer: refused (400), a repeated `_id` (409 for `create`, `noop` for `index`), or created. */
function itemAnswer(item: BulkItem, seq: number, duplicates: ReadonlySet<number>): Partial<Record<BulkItem['action'], object>> {
  if (item.error) {
    return answerOf(item.action, { _index: item.index, _id: item.id, status: 400, error: item.error });
  }
  if (item.entry !== undefined && duplicates.has(item.entry)) {
    if (item.action === 'create') {
      const reason = `[${item.id}]: version conflict, document already exists (current version [1])`;
      return answerOf(item.action, {
        _index: item.index,
        _id: item.id,
        status: 409,
        error: { type: 'version_conflict_engine_exception', reason },
      });
    }
    return answerOf(item.action, { _index: item.index, _id: item.id, _version: 1, result: 'noop', _shards: SHARDS, status: 200 });
  }
  return answerOf(item.action, {
    _index: item.index,
    _id: item.id,
    _version: 1,
    result: 'created',
    _shards: SHARDS,
    _seq_no: seq,
    _primary_term: 1,
    status: 201,
  });
}

/** One shard, always all written: the same object in every item of an answer (it is only serialized). */
const SHARDS = Object.freeze({ total: 1, successful: 1, failed: 0 });
const SHARDS_JSON = JSON.stringify(SHARDS);

/** `{action: answer}` with the key written out, not computed (thousands of items an answer). */
function answerOf(action: BulkItem['action'], answer: object): Partial<Record<BulkItem['action'], object>> {
  switch (action) {
    case 'create':
      return { create: answer };
    case 'index':
      return { index: answer };
    case 'update':
      return { update: answer };
    case 'delete':
      return { delete: answer };
  }
}
