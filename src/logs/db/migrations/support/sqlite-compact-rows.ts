import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { ChunkPosition, ResumableMigration } from '../../../../shared/db/migrator.js';
import { MAX_ATTRIBUTE_CODES } from '../../../modules/store/attribute-codes.js';
import { LEVEL_CODES } from '../../../modules/store/sqlite/sqlite-rows.js';

const levelText = sql.raw(
  `CASE level_code ${LEVEL_CODES.map((level, code) => `WHEN ${code} THEN '${level}'`).join(' ')} ELSE level_code END`,
);
const hexText = (column: string) => sql.raw(`CASE WHEN typeof(${column}) = 'blob' THEN lower(hex(${column})) ELSE ${column} END`);

/**
 * The entry table in the layout of sqlite-rows.ts, and the attribute numbers (0019_compact_rows, and
 * 0011_time_ordered_facets's restore, which writes through the current writer). Columns without a
 * type keep what they are given (a number or a text).
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

/** Rows written again per chunk (one transaction) by 0019_compact_rows. */
const COMPACT_CHUNK = 20_000;

/**
 * 0019_compact_rows on SQLite: every stored row again in the layout of sqlite-rows.ts. The old table
 * is kept aside (`log_entries_named`) and its rows are written in id order, COMPACT_CHUNK a committed
 * chunk; the position is the last id written. The names of the field catalogue (log_fields, written
 * with the rows, so it holds every stored name) are numbered first, each tenant's in name order. A
 * store whose 0011_time_ordered_facets wrote through the current writer is in this layout already:
 * nothing to do.
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
