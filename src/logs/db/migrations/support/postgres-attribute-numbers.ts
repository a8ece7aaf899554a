import { sql, type Kysely } from 'kysely';
import type { ChunkPosition, ResumableMigration } from '../../../../shared/db/migrator.js';
import { MAX_ATTRIBUTE_CODES } from '../../../modules/store/attribute-codes.js';
import { countEntries, nextEntries } from './postgres-walk.js';

const DIGITS = '0123456789abcdefghijklmnopqrstuvwxyz';

/** Rows whose attributes are written again per chunk (one transaction). */
const CHUNK = 20_000;

const HAS_ATTRIBUTES = sql`l.attributes <> '{}'::jsonb`;

/**
 * 0021_postgres_attribute_numbers on PostgreSQL: attribute names by number, as SQLite's rows have them
 * (attribute-codes.ts; docs/log-store.md, "Rows"). The names of the field catalogue (log_fields,
 * written with the rows, so it holds every stored name) are numbered, each tenant's in name order,
 * then every stored row's attributes are written again under their keys, CHUNK rows a chunk
 * (postgres-walk.ts).
 */
export const numberStoredAttributes: ResumableMigration = {
  async start(db: Kysely<any>): Promise<number> {
    await sql`CREATE TABLE IF NOT EXISTS log_attribute_codes (
      tenant_id text NOT NULL,
      name text NOT NULL,
      code integer NOT NULL,
      PRIMARY KEY (tenant_id, name)
    )`.execute(db);
    await sql`CREATE UNIQUE INDEX IF NOT EXISTS log_attribute_codes_code ON log_attribute_codes (tenant_id, code)`.execute(db);
    await sql`INSERT INTO log_attribute_codes (tenant_id, name, code)
      SELECT tenant_id, name, n - 1 FROM (SELECT tenant_id, name, row_number() OVER (PARTITION BY tenant_id ORDER BY name COLLATE "C") AS n
        FROM log_fields) f
      WHERE n <= ${MAX_ATTRIBUTE_CODES}`.execute(db);
    return countEntries(db, HAS_ATTRIBUTES);
  },

  async chunk(db: Kysely<any>, position: ChunkPosition | null): Promise<{ position: ChunkPosition; rows: number } | null> {
    // The keys of the chunk's rows first; then those rows, by the range of keys they span in their partition.
    const chunk = await nextEntries(db, position, CHUNK, sql`l.tenant_id, l.ts, l.id`, HAS_ATTRIBUTES);
    if (chunk === null) return null;
    const first = chunk.rows[0]!;
    const [, tenant, ts, id] = chunk.position;
    const key = sql`CASE WHEN c.code < 36 THEN '' ELSE substr(${DIGITS}, c.code / 36 + 1, 1) END || substr(${DIGITS}, c.code % 36 + 1, 1)`;
    await sql`UPDATE ${sql.table(chunk.partition)} l SET attributes = (SELECT jsonb_object_agg(coalesce(${key}, '~' || j.key), j.value)
        FROM jsonb_each(l.attributes) j LEFT JOIN log_attribute_codes c ON c.tenant_id = l.tenant_id AND c.name = j.key)
      WHERE ${HAS_ATTRIBUTES}
        AND (l.tenant_id, l.ts, l.id) >= (${first.tenant_id}, ${Number(first.ts)}::bigint, ${Number(first.id)}::bigint)
        AND (l.tenant_id, l.ts, l.id) <= (${tenant}, ${ts}::bigint, ${id}::bigint)`.execute(db);
    return { position: chunk.position, rows: chunk.rows.length };
  },

  finish: async () => undefined,
};
