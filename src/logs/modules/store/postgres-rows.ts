import { sql, type Kysely } from 'kysely';
import { MAX_ATTRIBUTE_CODES } from './attribute-codes.js';

const DIGITS = '0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * Migration 0210 on PostgreSQL: attribute names by number, as SQLite's rows have them since 0190
 * (attribute-codes.ts; docs/log-store.md, "Rows"). The names of the field catalogue (log_fields,
 * written with the rows, so it holds every stored name) are numbered, each tenant's in name order,
 * and every stored row's attributes are written again under their keys, in the migration's
 * transaction (an interrupted upgrade leaves the store as it was).
 */
export async function numberStoredAttributes(db: Kysely<any>): Promise<void> {
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
  const key = sql`CASE WHEN c.code < 36 THEN '' ELSE substr(${DIGITS}, c.code / 36 + 1, 1) END || substr(${DIGITS}, c.code % 36 + 1, 1)`;
  await sql`UPDATE log_entries l SET attributes = (SELECT jsonb_object_agg(coalesce(${key}, '~' || j.key), j.value)
      FROM jsonb_each(l.attributes) j LEFT JOIN log_attribute_codes c ON c.tenant_id = l.tenant_id AND c.name = j.key)
    WHERE l.attributes <> '{}'::jsonb`.execute(db);
}
