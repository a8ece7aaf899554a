import protobuf from 'protobufjs';
import { nextTurn } from '../store/write-batch.js';
import { DECODE_CHUNK } from './pipeline.js';
import type { AttributeValue } from '../store/log-store.js';
import { intValueOf, PLAIN_ATTRIBUTES } from './otlp-common.js';

/**
 * An OTLP/HTTP protobuf ExportLogsServiceRequest read straight into the shape its OTLP/JSON form has,
 * the object otlp-proto.ts's `decode` makes with protobufjs for the other signals (decode, then
 * toObject with 64-bit integers as decimal text, no defaults, bytes left binary), without
 * protobufjs's message objects, their copy and a Long object for every 64-bit integer: the logs
 * signal is the busy one. protobufjs's Reader reads the wire, and each message is read as protobufjs's
 * generated decoder reads it (protobufjs 8): a field of the wrong wire type is skipped as unknown; a
 * proto3 scalar equal to its default is left out (a later default removes an earlier value); text
 * must be UTF-8 (stringVerify); a message field seen twice is merged; a oneof keeps its member last on
 * the wire; a nested message must end where its length says, and nesting stops at protobufjs's
 * recursion limit. test/logs/ingest/otlp-logs-decode.test.ts compares it with protobufjs on generated,
 * truncated and corrupted bodies.
 */

type Reader = protobuf.Reader;

/** A decoded message: the fields of the OTLP logs messages, by their OTLP/JSON names (each message has some). */
export type Message = {
  resourceLogs?: Message[];
  resource?: Message;
  scopeLogs?: Message[];
  schemaUrl?: string;
  attributes?: Message[];
  droppedAttributesCount?: number;
  scope?: Message;
  logRecords?: Message[];
  name?: string;
  version?: string;
  timeUnixNano?: string;
  observedTimeUnixNano?: string;
  severityNumber?: number;
  severityText?: string;
  body?: Message;
  flags?: number;
  traceId?: Uint8Array;
  spanId?: Uint8Array;
  eventName?: string;
  key?: string;
  value?: Message;
  values?: Message[];
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string;
  doubleValue?: number;
  arrayValue?: Message;
  kvlistValue?: Message;
  bytesValue?: Uint8Array;
};
type Field = keyof Message;
/** A message written by one of its own field names (never a client's). */
const fieldsOf = (m: Message): Record<Field, unknown> => m as Record<Field, unknown>;
/** Reads one message's fields into `m`, up to the reader's `len` (its end). */
type Body = (reader: Reader, m: Message, depth: number) => void;

/** Wire types. */
const VARINT = 0;
const FIXED64 = 1;
const LENGTH = 2;
const FIXED32 = 5;

/** A reader over the body as a Buffer (viewed, not copied): its text and ids are sliced natively (readText, hexId). */
function readerOf(body: Uint8Array): Reader {
  return protobuf.Reader.create(Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength));
}

export function decodeLogsRequest(body: Uint8Array): Message {
  const reader = readerOf(body);
  const m: Message = {};
  exportRequestBody(reader, m, 0);
  return m;
}

/** What visitLogsRequest calls, in the order of the decoded request's messages. */
export interface LogsVisitor {
  /** A ResourceLogs as decoded, without its `scopeLogs` (visited next). */
  resourceLogs(resourceLogs: Message): void;
  /** A ScopeLogs as decoded, without its `logRecords` (visited next). */
  scopeLogs(scopeLogs: Message): void;
  logRecord(record: Message): void;
  /**
   * A record of the shape SDKs and the Collector send (PlainRecord), read straight off the wire; when
   * a visitor has no such method, or a record has another shape, it comes to `logRecord`.
   */
  plainRecord?(record: PlainRecord): void;
}

/**
 * What the logs mapping (otlp-logs.ts) uses of a LogRecord, read without a message object for the
 * record, its attributes and their values, without times as decimal text or ids as buffers: the
 * record of every SDK and the Collector (each field once but scalars, each attribute key once, at
 * most 64 attributes, every value a scalar, no field unknown). Any other record is read as a Message
 * (logRecordBody) and mapped the general way, which maps these alike (the test compares the two). One
 * object, reused from record to record: a visitor copies what it keeps.
 */
export interface PlainRecord {
  /** timeUnixNano and observedTimeUnixNano in whole milliseconds; undefined when zero (absent). */
  timeMs: number | undefined;
  observedMs: number | undefined;
  /** Undefined when 0 (absent), as the other proto3 scalars below when empty. */
  severityNumber: number | undefined;
  severityText: string | undefined;
  eventName: string | undefined;
  /** The body's value as otlp-common.ts plainValue makes it: undefined when absent or empty. */
  body: AttributeValue | undefined;
  /** The attributes' keys ('' when absent) and values (as plainValue makes them), in wire order, each key once. */
  keys: string[];
  values: (AttributeValue | undefined)[];
  count: number;
  /** The ids in lowercase hex; undefined when empty or all zero. */
  traceId: string | undefined;
  spanId: string | undefined;
}

/**
 * The request's messages one at a time, each record as soon as it is read: what iterating
 * decodeLogsRequest's object visits, without the whole request's objects alive at once (a batch's
 * records would outlive young-generation collections). A ResourceLogs' `resource` and a ScopeLogs'
 * `scope` are read first (wherever the wire puts them, merged when repeated), then their children.
 * Throws where decodeLogsRequest throws, after visiting what came before. A turn of the event loop
 * (`turn`) every DECODE_CHUNK records, as `_bulk` is parsed (elastic/bulk.ts parseBulkInTurns): the
 * SQLite writer's reply to another batch is not held behind a whole request's records.
 */
export async function visitLogsRequest(body: Uint8Array, visitor: LogsVisitor, turn: () => Promise<void> = nextTurn): Promise<void> {
  const reader = readerOf(body);
  let visited = 0;
  while (reader.pos < reader.len) {
    const tag = reader.tag();
    const wire = tag & 7;
    const field = tag >>> 3;
    if (field === 1 && wire === LENGTH) {
      const m: Message = {};
      const scopeLogs = inParts(reader, 1, m, resourceLogsParts);
      visitor.resourceLogs(m);
      for (let index = 0; index < scopeLogs.length; index += 2) {
        const scope: Message = {};
        const records = within(reader, scopeLogs[index]!, scopeLogs[index + 1]!, () => inPartsAt(reader, 2, scope, scopeLogsParts));
        visitor.scopeLogs(scope);
        for (let at = 0; at < records.length;) {
          // Records up to the next turn, in a plain function: V8 runs a loop in an async function slower.
          const to = Math.min(records.length, at + 2 * (DECODE_CHUNK - (visited % DECODE_CHUNK)));
          visitRecords(reader, records, at, to, visitor);
          visited += (to - at) / 2;
          at = to;
          if (visited % DECODE_CHUNK === 0) await turn();
        }
      }
    } else reader.skipType(wire, 0, field);
  }
}

/** The records of ranges [from, to) of `records` (start, end pairs): plain ones as such when the visitor takes them. */
function visitRecords(reader: Reader, records: readonly number[], from: number, to: number, visitor: LogsVisitor): void {
  const plain = visitor.plainRecord ? PLAIN_RECORD : undefined;
  for (let at = from; at < to; at += 2) {
    const start = records[at]!;
    const end = records[at + 1]!;
    if (plain && readPlainRecord(reader, start, end, plain)) {
      visitor.plainRecord!(plain);
      continue;
    }
    const record: Message = {};
    within(reader, start, end, () => logRecordBody(reader, record, 3));
    visitor.logRecord(record);
  }
}

/** The one PlainRecord that visitRecords fills (the event loop reads one record at a time). */
const PLAIN_RECORD: PlainRecord = {
  timeMs: undefined,
  observedMs: undefined,
  severityNumber: undefined,
  severityText: undefined,
  eventName: undefined,
  body: undefined,
  keys: [],
  values: [],
  count: 0,
  traceId: undefined,
  spanId: undefined,
};

/**
 * The record at [start, end) into `out` when it is plain (PlainRecord), the reader put back where it
 * was. False when it is not, or is malformed: the caller then reads it as a Message, which reads
 * it as decoding does (and throws where decoding throws).
 */
function readPlainRecord(reader: Reader, start: number, end: number, out: PlainRecord): boolean {
  const { pos, len } = reader;
  reader.pos = start;
  reader.len = end;
  try {
    return plainRecordBody(reader, out);
  } catch {
    return false;
  } finally {
    reader.pos = pos;
    reader.len = len;
  }
}

function plainRecordBody(reader: Reader, out: PlainRecord): boolean {
  out.timeMs = out.observedMs = out.severityNumber = undefined;
  out.severityText = out.eventName = out.traceId = out.spanId = undefined;
  out.body = undefined;
  out.count = 0;
  let hasBody = false;
  while (reader.pos < reader.len) {
    const tag = reader.tag();
    const wire = tag & 7;
    const field = tag >>> 3;
    // A later scalar replaces an earlier one, and a default removes it, as in logRecordBody.
    if (field === 1 && wire === FIXED64) out.timeMs = fixed64Ms(reader);
    else if (field === 11 && wire === FIXED64) out.observedMs = fixed64Ms(reader);
    else if (field === 2 && wire === VARINT) out.severityNumber = reader.int32() || undefined;
    else if (field === 3 && wire === LENGTH) out.severityText = readText(reader) || undefined;
    else if (field === 5 && wire === LENGTH && !hasBody) {
      // A second body would be merged with the first: a Message's matter.
      hasBody = true;
      const value = plainAnyValue(reader);
      if (value === NOT_PLAIN) return false;
      out.body = value;
    } else if (field === 6 && wire === LENGTH) {
      if (!plainKeyValue(reader, out)) return false;
    } else if (field === 7 && wire === VARINT) reader.uint32();
    else if (field === 8 && wire === FIXED32) reader.fixed32();
    else if (field === 9 && wire === LENGTH) out.traceId = hexId(reader);
    else if (field === 10 && wire === LENGTH) out.spanId = hexId(reader);
    else if (field === 12 && wire === LENGTH) out.eventName = readText(reader) || undefined;
    else return false;
  }
  return true;
}

/** What plainAnyValue answers for an AnyValue that is no scalar (an array, a key-value list, a field unknown). */
const NOT_PLAIN = Symbol('not plain');

/** The end of the length-delimited message at the reader, checked against its parent's end; the reader's `len` becomes it. */
function enter(reader: Reader): number {
  const length = reader.size();
  const end = reader.pos + length;
  if (end > reader.len) throw new RangeError('index out of range');
  reader.len = end;
  return end;
}

/** An AnyValue's scalar as plainValue makes it (the member last on the wire); undefined when it has none. */
function plainAnyValue(reader: Reader): AttributeValue | undefined | typeof NOT_PLAIN {
  const outer = reader.len;
  const end = enter(reader);
  let value: AttributeValue | undefined;
  while (reader.pos < end) {
    const tag = reader.tag();
    const wire = tag & 7;
    const field = tag >>> 3;
    if (field === 1 && wire === LENGTH) value = readText(reader);
    else if (field === 2 && wire === VARINT) value = reader.bool();
    else if (field === 3 && wire === VARINT) value = intValueOf(signedVarint64(reader));
    else if (field === 4 && wire === FIXED64) value = reader.double();
    else if (field === 7 && wire === LENGTH) {
      const length = reader.size();
      if (reader.pos + length > end) throw new RangeError('index out of range');
      value = (reader.buf as Buffer).toString('base64', reader.pos, reader.pos + length);
      reader.pos += length;
    } else return NOT_PLAIN;
  }
  reader.len = outer;
  return value;
}

/** A KeyValue of scalars into `out`; false when it is not one (a field twice, or unknown), or its key came before. */
function plainKeyValue(reader: Reader, out: PlainRecord): boolean {
  if (out.count >= PLAIN_ATTRIBUTES) return false;
  const outer = reader.len;
  const end = enter(reader);
  let key: string | undefined;
  let value: AttributeValue | undefined | typeof NOT_PLAIN;
  let hasValue = false;
  while (reader.pos < end) {
    const tag = reader.tag();
    const wire = tag & 7;
    const field = tag >>> 3;
    if (field === 1 && wire === LENGTH && key === undefined) key = readText(reader);
    else if (field === 2 && wire === LENGTH && !hasValue) {
      hasValue = true;
      value = plainAnyValue(reader);
      if (value === NOT_PLAIN) return false;
    } else return false;
  }
  reader.len = outer;
  // An absent key is '' as the empty one is (proto3): two of them are the same key too.
  key ??= '';
  const { keys, count } = out;
  for (let index = 0; index < count; index += 1) if (keys[index] === key) return false;
  keys[count] = key;
  out.values[count] = value as AttributeValue | undefined;
  out.count = count + 1;
  return true;
}

/** A fixed64 of nanoseconds as whole milliseconds, exactly (4294967296 = 4294 * 10^6 + 967296); undefined when zero. */
function fixed64Ms(reader: Reader): number | undefined {
  if (reader.pos + 8 > reader.len) throw new RangeError('index out of range');
  const low = reader.fixed32();
  const high = reader.fixed32();
  if (low === 0 && high === 0) return undefined;
  return high * 4294 + Math.floor((high * 967296 + low) / 1e6);
}

/** A bytes field as an id's lowercase hex; undefined when empty or all zero (no id). */
function hexId(reader: Reader): string | undefined {
  const length = reader.size();
  const start = reader.pos;
  const end = start + length;
  if (end > reader.len) throw new RangeError('index out of range');
  reader.pos = end;
  const { buf } = reader;
  for (let index = start; index < end; index += 1) if (buf[index] !== 0) return (buf as Buffer).toString('hex', start, end);
  return undefined;
}

/**
 * A string field as stringVerify reads it (UTF-8, checked), ASCII text sliced natively: protobufjs
 * builds short strings character by character, and most of a log's text is ASCII.
 */
function readText(reader: Reader): string {
  const at = reader.pos;
  const length = reader.size();
  const start = reader.pos;
  const end = start + length;
  if (end <= reader.len) {
    const { buf } = reader;
    let index = start;
    while (index < end && buf[index]! < 0x80) index += 1;
    if (index === end) {
      reader.pos = end;
      return (buf as Buffer).toString('latin1', start, end);
    }
  }
  reader.pos = at;
  return reader.stringVerify();
}

/**
 * Reads a length-delimited message at `depth` as `nested` does, but its children (field `children`
 * of `parts`) only checked and kept as [start, end) pairs, for `within` to read later.
 */
function inParts(reader: Reader, depth: number, m: Message, parts: Parts): number[] {
  const length = reader.size();
  if (depth > protobuf.Reader.recursionLimit) throw new Error('max depth exceeded');
  const end = reader.pos + length;
  if (end > reader.len) throw new RangeError('index out of range');
  const outer = reader.len;
  reader.len = end;
  const children = inPartsAt(reader, depth, m, parts);
  reader.len = outer;
  return children;
}

/** The fields of a message up to the reader's `len`: its children's ranges, the other fields read into `m`. */
type Parts = (reader: Reader, m: Message, depth: number, children: number[]) => void;

function inPartsAt(reader: Reader, depth: number, m: Message, parts: Parts): number[] {
  const children: number[] = [];
  parts(reader, m, depth, children);
  return children;
}

/** A child's range [start, end), as nested would enter it (its length checked against its parent's end). */
function childRange(reader: Reader, depth: number, children: number[]): void {
  const length = reader.size();
  if (depth > protobuf.Reader.recursionLimit) throw new Error('max depth exceeded');
  const end = reader.pos + length;
  if (end > reader.len) throw new RangeError('index out of range');
  children.push(reader.pos, end);
  reader.pos = end;
}

/** Runs `read` on the range [start, end) of the body, then puts the reader back where it was. */
function within<T>(reader: Reader, start: number, end: number, read: () => T): T {
  const { pos, len } = reader;
  reader.pos = start;
  reader.len = end;
  const result = read();
  reader.pos = pos;
  reader.len = len;
  return result;
}

/** resourceLogsBody with its ScopeLogs as ranges. */
function resourceLogsParts(reader: Reader, m: Message, depth: number, children: number[]): void {
  while (reader.pos < reader.len) {
    const tag = reader.tag();
    const wire = tag & 7;
    const field = tag >>> 3;
    if (field === 1 && wire === LENGTH) m.resource = nested(reader, depth + 1, m.resource, resourceBody);
    else if (field === 2 && wire === LENGTH) childRange(reader, depth + 1, children);
    else if (field === 3 && wire === LENGTH) implicitText(reader, m, 'schemaUrl');
    else reader.skipType(wire, depth, field);
  }
}

/** scopeLogsBody with its LogRecords as ranges. */
function scopeLogsParts(reader: Reader, m: Message, depth: number, children: number[]): void {
  while (reader.pos < reader.len) {
    const tag = reader.tag();
    const wire = tag & 7;
    const field = tag >>> 3;
    if (field === 1 && wire === LENGTH) m.scope = nested(reader, depth + 1, m.scope, scopeBody);
    else if (field === 2 && wire === LENGTH) childRange(reader, depth + 1, children);
    else if (field === 3 && wire === LENGTH) implicitText(reader, m, 'schemaUrl');
    else reader.skipType(wire, depth, field);
  }
}

/** A length-delimited message field at `depth`, merged into `into` when the message already has one. */
function nested(reader: Reader, depth: number, into: unknown, body: Body): Message {
  const length = reader.size();
  if (depth > protobuf.Reader.recursionLimit) throw new Error('max depth exceeded');
  const end = reader.pos + length;
  if (end > reader.len) throw new RangeError('index out of range');
  const outer = reader.len;
  reader.len = end;
  const m = (into as Message | undefined) ?? {};
  // Every read stops at `len`: the message ends exactly at `end`.
  body(reader, m, depth);
  reader.len = outer;
  return m;
}

/** An element of a repeated message field. */
function push(m: Message, name: Field, element: Message): void {
  const list = fieldsOf(m)[name] as Message[] | undefined;
  if (list) list.push(element);
  else fieldsOf(m)[name] = [element];
}

/** A proto3 scalar without presence: kept unless it is its type's default. */
function implicit(m: Message, name: Field, value: unknown, isDefault: boolean): void {
  if (isDefault) delete fieldsOf(m)[name];
  else fieldsOf(m)[name] = value;
}

function exportRequestBody(reader: Reader, m: Message, depth: number): void {
  while (reader.pos < reader.len) {
    const tag = reader.tag();
    const wire = tag & 7;
    const field = tag >>> 3;
    if (field === 1 && wire === LENGTH) push(m, 'resourceLogs', nested(reader, depth + 1, undefined, resourceLogsBody));
    else reader.skipType(wire, depth, field);
  }
}

function resourceLogsBody(reader: Reader, m: Message, depth: number): void {
  while (reader.pos < reader.len) {
    const tag = reader.tag();
    const wire = tag & 7;
    const field = tag >>> 3;
    if (field === 1 && wire === LENGTH) m.resource = nested(reader, depth + 1, m.resource, resourceBody);
    else if (field === 2 && wire === LENGTH) push(m, 'scopeLogs', nested(reader, depth + 1, undefined, scopeLogsBody));
    else if (field === 3 && wire === LENGTH) implicitText(reader, m, 'schemaUrl');
    else reader.skipType(wire, depth, field);
  }
}

function resourceBody(reader: Reader, m: Message, depth: number): void {
  while (reader.pos < reader.len) {
    const tag = reader.tag();
    const wire = tag & 7;
    const field = tag >>> 3;
    if (field === 1 && wire === LENGTH) push(m, 'attributes', nested(reader, depth + 1, undefined, keyValueBody));
    else if (field === 2 && wire === VARINT) implicitUint32(reader, m, 'droppedAttributesCount');
    else reader.skipType(wire, depth, field);
  }
}

function scopeLogsBody(reader: Reader, m: Message, depth: number): void {
  while (reader.pos < reader.len) {
    const tag = reader.tag();
    const wire = tag & 7;
    const field = tag >>> 3;
    if (field === 1 && wire === LENGTH) m.scope = nested(reader, depth + 1, m.scope, scopeBody);
    else if (field === 2 && wire === LENGTH) push(m, 'logRecords', nested(reader, depth + 1, undefined, logRecordBody));
    else if (field === 3 && wire === LENGTH) implicitText(reader, m, 'schemaUrl');
    else reader.skipType(wire, depth, field);
  }
}

function scopeBody(reader: Reader, m: Message, depth: number): void {
  while (reader.pos < reader.len) {
    const tag = reader.tag();
    const wire = tag & 7;
    const field = tag >>> 3;
    if (field === 1 && wire === LENGTH) implicitText(reader, m, 'name');
    else if (field === 2 && wire === LENGTH) implicitText(reader, m, 'version');
    else if (field === 3 && wire === LENGTH) push(m, 'attributes', nested(reader, depth + 1, undefined, keyValueBody));
    else if (field === 4 && wire === VARINT) implicitUint32(reader, m, 'droppedAttributesCount');
    else reader.skipType(wire, depth, field);
  }
}

function logRecordBody(reader: Reader, m: Message, depth: number): void {
  while (reader.pos < reader.len) {
    const tag = reader.tag();
    const wire = tag & 7;
    const field = tag >>> 3;
    if (field === 1 && wire === FIXED64) implicitFixed64(reader, m, 'timeUnixNano');
    else if (field === 11 && wire === FIXED64) implicitFixed64(reader, m, 'observedTimeUnixNano');
    else if (field === 2 && wire === VARINT) {
      const value = reader.int32();
      implicit(m, 'severityNumber', value, value === 0);
    } else if (field === 3 && wire === LENGTH) implicitText(reader, m, 'severityText');
    else if (field === 5 && wire === LENGTH) m.body = nested(reader, depth + 1, m.body, anyValueBody);
    else if (field === 6 && wire === LENGTH) push(m, 'attributes', nested(reader, depth + 1, undefined, keyValueBody));
    else if (field === 7 && wire === VARINT) implicitUint32(reader, m, 'droppedAttributesCount');
    else if (field === 8 && wire === FIXED32) {
      const value = reader.fixed32();
      implicit(m, 'flags', value, value === 0);
    } else if (field === 9 && wire === LENGTH) implicitBytes(reader, m, 'traceId');
    else if (field === 10 && wire === LENGTH) implicitBytes(reader, m, 'spanId');
    else if (field === 12 && wire === LENGTH) implicitText(reader, m, 'eventName');
    else reader.skipType(wire, depth, field);
  }
}

function keyValueBody(reader: Reader, m: Message, depth: number): void {
  while (reader.pos < reader.len) {
    const tag = reader.tag();
    const wire = tag & 7;
    const field = tag >>> 3;
    if (field === 1 && wire === LENGTH) implicitText(reader, m, 'key');
    else if (field === 2 && wire === LENGTH) m.value = nested(reader, depth + 1, m.value, anyValueBody);
    else reader.skipType(wire, depth, field);
  }
}

/** The members of AnyValue's oneof, of which a message holds one at most. */
type AnyValueMember = 'stringValue' | 'boolValue' | 'intValue' | 'doubleValue' | 'arrayValue' | 'kvlistValue' | 'bytesValue';

/**
 * An AnyValue: its member last on the wire (setting one removes the other, as protobufjs's oneof
 * does), a message member merged with the one it holds already. Kept in locals, written once.
 */
function anyValueBody(reader: Reader, m: Message, depth: number): void {
  // What a value seen before holds (a message merged with an earlier one): its one member, if any.
  let before: AnyValueMember | undefined;
  for (const name in m) {
    before = name as AnyValueMember;
    break;
  }
  let member: AnyValueMember | undefined = before;
  let value: unknown = before === undefined ? undefined : fieldsOf(m)[before];
  while (reader.pos < reader.len) {
    const tag = reader.tag();
    const wire = tag & 7;
    const field = tag >>> 3;
    if (field === 1 && wire === LENGTH) {
      member = 'stringValue';
      value = readText(reader);
    } else if (field === 2 && wire === VARINT) {
      member = 'boolValue';
      value = reader.bool();
    } else if (field === 3 && wire === VARINT) {
      member = 'intValue';
      value = signedVarint64(reader);
    } else if (field === 4 && wire === FIXED64) {
      member = 'doubleValue';
      value = reader.double();
    } else if (field === 5 && wire === LENGTH) {
      value = nested(reader, depth + 1, member === 'arrayValue' ? value : undefined, arrayValueBody);
      member = 'arrayValue';
    } else if (field === 6 && wire === LENGTH) {
      value = nested(reader, depth + 1, member === 'kvlistValue' ? value : undefined, keyValueListBody);
      member = 'kvlistValue';
    } else if (field === 7 && wire === LENGTH) {
      member = 'bytesValue';
      value = reader.bytes();
    } else reader.skipType(wire, depth, field);
  }
  if (before !== undefined && before !== member) delete fieldsOf(m)[before];
  if (member !== undefined) fieldsOf(m)[member] = value;
}

function arrayValueBody(reader: Reader, m: Message, depth: number): void {
  while (reader.pos < reader.len) {
    const tag = reader.tag();
    const wire = tag & 7;
    const field = tag >>> 3;
    if (field === 1 && wire === LENGTH) push(m, 'values', nested(reader, depth + 1, undefined, anyValueBody));
    else reader.skipType(wire, depth, field);
  }
}

function keyValueListBody(reader: Reader, m: Message, depth: number): void {
  while (reader.pos < reader.len) {
    const tag = reader.tag();
    const wire = tag & 7;
    const field = tag >>> 3;
    if (field === 1 && wire === LENGTH) push(m, 'values', nested(reader, depth + 1, undefined, keyValueBody));
    else reader.skipType(wire, depth, field);
  }
}

function implicitText(reader: Reader, m: Message, name: Field): void {
  const value = readText(reader);
  implicit(m, name, value, value.length === 0);
}

function implicitBytes(reader: Reader, m: Message, name: Field): void {
  const value = reader.bytes();
  implicit(m, name, value, value.length === 0);
}

function implicitUint32(reader: Reader, m: Message, name: Field): void {
  const value = reader.uint32();
  implicit(m, name, value, value === 0);
}

/** A fixed64 (nanosecond times) as its unsigned decimal text, read as two fixed32 (low first). */
function implicitFixed64(reader: Reader, m: Message, name: Field): void {
  if (reader.pos + 8 > reader.len) throw new RangeError('index out of range');
  const low = reader.fixed32();
  const high = reader.fixed32();
  // Below 2^53 a double holds it exactly.
  const text = high < 0x200000 ? String(high * 4294967296 + low) : ((BigInt(high) << 32n) | BigInt(low)).toString();
  implicit(m, name, text, low === 0 && high === 0);
}

/**
 * An int64 varint as its signed decimal text, without a Long: read into two 32-bit halves as
 * protobufjs's readLongVarint reads them (the same bounds and errors).
 */
function signedVarint64(reader: Reader): string {
  const { buf } = reader;
  let low = 0;
  let high = 0;
  let i = 0;
  let done = false;
  if (reader.len - reader.pos > 4) {
    for (; i < 4 && !done; i += 1) {
      low = (low | ((buf[reader.pos]! & 127) << (i * 7))) >>> 0;
      done = buf[reader.pos++]! < 128;
    }
    if (!done) {
      low = (low | ((buf[reader.pos]! & 127) << 28)) >>> 0;
      high = (high | ((buf[reader.pos]! & 127) >> 4)) >>> 0;
      done = buf[reader.pos++]! < 128;
      i = 0;
    }
  } else {
    for (; i < 4 && !done; i += 1) {
      if (reader.pos >= reader.len) throw new RangeError('index out of range');
      low = (low | ((buf[reader.pos]! & 127) << (i * 7))) >>> 0;
      done = buf[reader.pos++]! < 128;
    }
    if (!done) throw new RangeError('index out of range');
  }
  if (!done) {
    const near = reader.len - reader.pos <= 4;
    for (; i < 5 && !done; i += 1) {
      if (near && reader.pos >= reader.len) throw new RangeError('index out of range');
      high = (high | ((buf[reader.pos]! & 127) << (i * 7 + 3))) >>> 0;
      done = buf[reader.pos++]! < 128;
    }
    if (!done) throw new Error('invalid varint encoding');
  }
  if (high === 0) return String(low);
  // Below 2^53 a double holds it exactly; else (and every negative value) BigInt.
  if (high < 0x200000) return String(high * 4294967296 + low);
  return BigInt.asIntN(64, (BigInt(high) << 32n) | BigInt(low)).toString();
}
