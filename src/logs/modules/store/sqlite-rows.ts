import { sql, type Kysely, type RawBuilder } from 'kysely';
import { MAX_ATTRIBUTE_CODES } from './attribute-codes.js';
import type { InsertColumn } from './sqlite-insert.js';
import type { ChunkPosition, ResumableMigration } from '../../../shared/db/migrator.js';

/**
 * How the SQLite store lays out an entry's row (since migration 0190; docs/log-store.md, "Rows"):
 * what SQL reads (`ts`, `level`, `trace_id`, `span_id`) are virtual columns computed from what is
 * stored, so every query reads the same names as before while a row is smaller:
 * - `ts_offset`: the time less its id's second (time-ids.ts), two bytes instead of six;
 * - `level_code`: the six levels (levels.ts) as numbers, the most common first (SQLite stores 0
 *   and 1 in the record's header alone); a level outside them as its text;
 * - `trace_bin`, `span_bin`: lower-case hexadecimal ids as bytes, half the size; other ids as text;
 * - `attributes`: SQLite's JSONB (binary JSON, read by the same `->>`) with names by number
 *   (attribute-codes.ts).
 * The benchmark's rows went from 259 to 164 bytes an event (docs/benchmarks.md, "Issue 15: smaller SQLite rows").
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
 * thread: 3 µs an event) or its text, the other null.
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

const levelText = sql.raw(
  `CASE level_code ${LEVEL_CODES.map((level, code) => `WHEN ${code} THEN '${level}'`).join(' ')} ELSE level_code END`,
);
const hexText = (column: string) => sql.raw(`CASE WHEN typeof(${column}) = 'blob' THEN lower(hex(${column})) ELSE ${column} END`);

/**
 * The entry table and the attribute numbers (migration 0190, and 0120's restore, which writes
 * through the current writer). Columns without a type keep what they are given (a number or a text).
 */
export async function createEntryTables(db: Kysely<any>): Promise<void> {
  // No secondary index: the id is the time; each tenant's full-text index (a table per hour, made at
  // its first entry) finds words and facets.
  await sql`CREATE TABLE log_entries (
    id INTEGER PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    ts_offset INTEGER NOT NULL,
    level_code,
    service TEXT,
    host TEXT,
    trace_bin,
    span_bin,
    message TEXT NOT NULL,
    attributes BLOB NOT NULL,
    ts INTEGER GENERATED ALWAYS AS ((id >> 21) * 1000 + ts_offset) VIRTUAL,
    level TEXT GENERATED ALWAYS AS (${levelText}) VIRTUAL,
    trace_id TEXT GENERATED ALWAYS AS (${hexText('trace_bin')}) VIRTUAL,
    span_id TEXT GENERATED ALWAYS AS (${hexText('span_bin')}) VIRTUAL
  )`.execute(db);
  await sql`CREATE TABLE IF NOT EXISTS log_attribute_codes (
    tenant_id TEXT NOT NULL,
    name TEXT NOT NULL,
    code INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, name)
  ) WITHOUT ROWID`.execute(db);
  await sql`CREATE UNIQUE INDEX IF NOT EXISTS log_attribute_codes_code ON log_attribute_codes (tenant_id, code)`.execute(db);
}

/** Rows written again per chunk (one transaction) by migration 0190. */
const COMPACT_CHUNK = 20_000;

/**
 * Migration 0190 on SQLite: every stored row again in this layout. The old table is kept aside
 * (`log_entries_named`) and its rows are written in id order, COMPACT_CHUNK a committed chunk; the
 * position is the last id written. The names of the field catalogue (log_fields, written with the
 * rows since 0100, so it holds every stored name) are numbered first, each tenant's in name order.
 * A store that went through 0120 with this code is already in this layout: nothing to do.
 */
export const compactStoredRows: ResumableMigration = {
  async start(db: Kysely<any>): Promise<number> {
    const { rows: columns } = await sql<{ name: string }>`SELECT name FROM pragma_table_info('log_entries')`.execute(db);
    if (columns.some((column) => column.name === 'ts_offset')) return 0;
    await sql`ALTER TABLE log_entries RENAME TO log_entries_named`.execute(db);
    await createEntryTables(db);
    const { rows: names } = await sql<{ tenant_id: string; name: string }>`SELECT tenant_id, name FROM log_fields
      ORDER BY tenant_id, name`.execute(db);
    const numbered: [string, string, number][] = [];
    const counts = new Map<string, number>();
    for (const { tenant_id: tenantId, name } of names) {
      const code = counts.get(tenantId) ?? 0;
      if (code >= MAX_ATTRIBUTE_CODES) continue;
      counts.set(tenantId, code + 1);
      numbered.push([tenantId, name, code]);
    }
    for (let start = 0; start < numbered.length; start += 1_000) {
      await sql`INSERT INTO log_attribute_codes (tenant_id, name, code)
        SELECT value ->> 0, value ->> 1, value ->> 2 FROM json_each(${JSON.stringify(numbered.slice(start, start + 1_000))})`.execute(db);
    }
    const { rows } = await sql<{ total: number }>`SELECT count(*) AS total FROM log_entries_named`.execute(db);
    return Number(rows[0]!.total);
  },

  async chunk(db: Kysely<any>, position: ChunkPosition | null): Promise<{ position: ChunkPosition; rows: number } | null> {
    const { rows: tables } = await sql`SELECT 1 AS found FROM sqlite_master WHERE name = 'log_entries_named'`.execute(db);
    if (tables.length === 0) return null;
    const after = typeof position === 'number' ? position : Number.MIN_SAFE_INTEGER;
    const { rows: bounds } = await sql<{ last: number | null; rows: number }>`SELECT max(id) AS last, count(*) AS rows
      FROM (SELECT id FROM log_entries_named WHERE id > ${after} ORDER BY id LIMIT ${COMPACT_CHUNK})`.execute(db);
    const { last, rows } = bounds[0]!;
    if (last === null) return null;
    const base36 = (code: RawBuilder<unknown>) =>
      sql`(CASE WHEN ${code} < 36 THEN '' ELSE substr(${DIGITS}, ${code} / 36 + 1, 1) END || substr(${DIGITS}, ${code} % 36 + 1, 1))`;
    const hexBytes = (column: string) =>
      sql.raw(
        `CASE WHEN ${column} <> '' AND length(${column}) % 2 = 0 AND ${column} NOT GLOB '*[^0-9a-f]*' THEN unhex(${column}) ELSE ${column} END`,
      );
    const levelNumber = sql.raw(
      `CASE o.level ${LEVEL_CODES.map((level, code) => `WHEN '${level}' THEN ${code}`).join(' ')} ELSE o.level END`,
    );
    // A JSON true or false is 1 or 0 in json_each's value: given as JSON again.
    await sql`INSERT INTO log_entries (id, tenant_id, ts_offset, level_code, service, host, trace_bin, span_bin, message, attributes)
      SELECT o.id, o.tenant_id, o.ts - (o.id >> 21) * 1000, ${levelNumber}, o.service, o.host,
        ${hexBytes('o.trace_id')}, ${hexBytes('o.span_id')}, o.message,
        (SELECT jsonb_group_object(coalesce(${base36(sql`c.code`)}, '~' || j.key),
            CASE j.type WHEN 'true' THEN json('true') WHEN 'false' THEN json('false') ELSE j.value END)
          FROM json_each(o.attributes) j LEFT JOIN log_attribute_codes c ON c.tenant_id = o.tenant_id AND c.name = j.key)
      FROM log_entries_named o WHERE o.id > ${after} AND o.id <= ${last} ORDER BY o.id`.execute(db);
    return { position: last, rows };
  },

  async finish(db: Kysely<any>): Promise<void> {
    await sql`DROP TABLE IF EXISTS log_entries_named`.execute(db);
  },
};

const DIGITS = '0123456789abcdefghijklmnopqrstuvwxyz';
