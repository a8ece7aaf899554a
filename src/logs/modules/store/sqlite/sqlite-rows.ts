import { sql } from 'kysely';
import type { InsertColumn } from './sqlite-insert.js';

/**
 * How the SQLite store lays out an entry's row (docs/log-store.md, "Rows"; the table is made by
 * migrations/support/sqlite-compact-rows.ts):
 * what SQL reads (`ts`, `level`, `trace_id`, `span_id`) are virtual columns computed from what is
 * stored, so queries read plain names while a row stays small:
 * - `ts_offset`: the time less its id's second (time-ids.ts), two bytes instead of six;
 * - `level_code`: the six levels (levels.ts) as numbers, the most common first (SQLite stores 0
 *   and 1 in the record's header alone); a level outside them as its text;
 * - `trace_bin`, `span_bin`: lower-case hexadecimal ids as bytes, half the size; other ids as text;
 * - `attributes`: SQLite's JSONB (binary JSON, read by the same `->>`) with names by number
 *   (attribute-codes.ts).
 * More than a third smaller than plain columns and JSON text (docs/performance-notes.md, "SQLite store").
 */

/** Levels by how often they come, so that the commonest cost no byte. */
export const LEVEL_CODES = ['info', 'warn', 'error', 'debug', 'trace', 'fatal'] as const;

// BigInts: better-sqlite3 binds a JavaScript number as a REAL (8 bytes in a column without a type).
const LEVEL_CODE = new Map<string, bigint>(LEVEL_CODES.map((level, code) => [level, BigInt(code)]));

/** A level as stored: its number, or its text when it is none of LEVEL_CODES. */
export function levelCode(level: string | null): bigint | string | null {
  return level === null ? null : (LEVEL_CODE.get(level) ?? level);
}

const LOWER_HEX_BYTES = /^(?:[0-9a-f]{2})+$/;

/** Whether a trace or span id is stored as its bytes: lower-case hexadecimal (its text is then the bytes' hex again). */
export function isHexId(id: string | null): id is string {
  return id !== null && LOWER_HEX_BYTES.test(id);
}

/**
 * The insert columns of an entry (rowInserts), 12 values a row: a trace or span id takes two, its
 * hex (turned into bytes by SQLite, which costs less than a Buffer made and cloned for the SQLite
 * thread) or its text, the other null.
 */
export const ENTRY_INSERT_COLUMNS: readonly InsertColumn[] = [
  'id',
  'tenant_id',
  'ts_offset',
  'level_code',
  'service',
  'host',
  { name: 'trace_bin', value: 'coalesce(unhex(?), ?)' },
  { name: 'span_bin', value: 'coalesce(unhex(?), ?)' },
  'message',
  { name: 'attributes', value: 'jsonb(?)' },
];
/** Where the id and the time offset go in a row's values (both known only under the writer). */
export const ID_VALUE = 0;
export const TS_OFFSET_VALUE = 2;
/** Where the attributes go: encoded before the writer when every name has its number, else under it. */
export const ATTRIBUTES_VALUE = 11;

/** What SQL reads of a row: the stored columns and the virtual ones, attributes as JSON text. */
export const SQLITE_ENTRY_COLUMNS = sql`l.id, l.tenant_id, l.ts, l.level, l.service, l.host, l.trace_id, l.span_id, l.message, json(l.attributes) AS attributes`;
