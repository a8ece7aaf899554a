import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { DialectName } from '../../src/shared/db/database.js';
import { migrateToLatest, migrationsUpTo, type MigrationSequence } from '../../src/shared/db/migrator.js';

/**
 * The oldest supported data directory: the migrations of the first complete version (both services
 * serving, before any change of the log store's layout), run by today's code of those migrations
 * (unchanged since) and recorded under the names that version gave them, and rows written in that
 * version's layout with SQL.
 */
export const OLDEST_LOGS_HISTORY = [
  '0001_accounts',
  '0100_log_store',
  '0200_alerts',
  '0300_apm_spans',
  '0301_infra_metric_points',
  '0400_dashboards',
  '0500_ingest_role',
  '0600_login_failures',
];
export const OLDEST_GATEWAY_HISTORY = ['0001_init', '0003_sso', '0004_login_failures'];

/**
 * Migrates `db` as an older version did: the migrations that `history` names (the first of
 * `sequence`, under their current names), then the history written under the old names.
 */
export async function migrateAsOlderVersion(db: Kysely<any>, sequence: MigrationSequence, table: string, history: readonly string[]) {
  const current = history.map((name) => sequence.renamed.get(name) ?? name);
  const first = migrationsUpTo(sequence, current.at(-1)!);
  if (Object.keys(first.migrations).join() !== current.join()) throw new Error(`${history.join()} is not how an older version began`);
  await migrateToLatest(db, first, table);
  for (const [index, name] of history.entries()) {
    await sql`UPDATE ${sql.table(`${table}_migrations`)} SET name = ${name} WHERE name = ${current[index]!}`.execute(db);
  }
}

export const HOUR_MS = 3_600_000;
/** 2026-11-20T00:00Z. */
export const OLD_T0 = Date.UTC(2026, 10, 20);

/** The message of the `index`-th old event: each is unique, so "exactly once" is countable. */
export const oldMessage = (index: number) => `old event ${String(index).padStart(7, '0')} disk ${index % 7 === 0 ? 'full' : 'ok'}`;

/**
 * `count` events of `tenant` in the oldest store's layout, one a second from OLD_T0 (so over several
 * hours, each a partition on PostgreSQL): one SQL statement, so a large old store is quick to make.
 */
export async function insertOldEvents(db: Kysely<any>, dialect: DialectName, tenant: string, count: number): Promise<void> {
  // The field catalogue, as the old writer kept it with the rows.
  await sql`INSERT INTO log_fields (tenant_id, name, type) VALUES (${tenant}, 'status', 'number'), (${tenant}, 'path', 'string')
    ON CONFLICT DO NOTHING`.execute(db);
  const level = sql.raw(`CASE i % 3 WHEN 0 THEN 'info' WHEN 1 THEN 'warn' ELSE 'error' END`);
  const disk = `' disk ' || CASE WHEN i % 7 = 0 THEN 'full' ELSE 'ok' END`;
  if (dialect === 'sqlite') {
    await sql`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ${count})
      INSERT INTO log_entries (tenant_id, ts, level, service, host, trace_id, span_id, message, attributes)
      SELECT ${tenant}, ${OLD_T0} + i * 1000, ${level}, 'api', 'h' || (i % 5), lower(hex(randomblob(16))), NULL,
        'old event ' || printf('%07d', i) || ${sql.raw(disk)}, json_object('status', 200 + i % 4, 'path', '/p/' || (i % 11))
      FROM n`.execute(db);
  } else {
    await insertOldPostgresEvents(db, tenant, count, level, disk);
  }
  // The counts per minute, level and service, as the old writer kept them with the rows.
  await sql`INSERT INTO log_rollups (tenant_id, minute, level, service, count)
    SELECT tenant_id, ts - ts % 60000, level, service, count(*) FROM log_entries WHERE tenant_id = ${tenant} GROUP BY 1, 2, 3, 4`.execute(
    db,
  );
}

async function insertOldPostgresEvents(
  db: Kysely<any>,
  tenant: string,
  count: number,
  level: RawBuilder<unknown>,
  disk: string,
): Promise<void> {
  const hours = Math.ceil((count * 1000) / HOUR_MS);
  for (let hour = 0; hour < hours; hour += 1) {
    const start = OLD_T0 + hour * HOUR_MS;
    const name = `log_entries_p${new Date(start).toISOString().slice(0, 13).replace(/[-T]/g, '')}`;
    await sql`CREATE TABLE IF NOT EXISTS ${sql.table(name)} PARTITION OF log_entries
      FOR VALUES FROM (${sql.lit(start)}) TO (${sql.lit(start + HOUR_MS)})`.execute(db);
  }
  await sql`INSERT INTO log_entries (tenant_id, ts, level, service, host, trace_id, span_id, message, attributes, search)
    SELECT ${tenant}, ${OLD_T0}::bigint + i * 1000, ${level}, 'api', 'h' || (i % 5), md5(i::text), NULL, m,
      jsonb_build_object('status', 200 + i % 4, 'path', '/p/' || (i % 11)), to_tsvector('simple', m)
    FROM (SELECT i, 'old event ' || lpad(i::text, 7, '0') || ${sql.raw(disk)} AS m FROM generate_series(0, ${count - 1}) AS i) s`.execute(
    db,
  );
}

/** How many events the current store holds, and how many distinct messages among them. */
export async function countStoredEvents(db: Kysely<any>, dialect: DialectName): Promise<{ events: number; distinct: number }> {
  const { rows } =
    dialect === 'sqlite'
      ? await sql<{
          events: number;
          distinct: number;
        }>`SELECT count(*) AS events, count(DISTINCT message) AS "distinct" FROM log_entries`.execute(db)
      : await sql<{ events: number; distinct: number }>`SELECT count(*) AS events, count(DISTINCT m) AS "distinct"
          FROM log_blocks, unnest(message) AS m`.execute(db);
  return { events: Number(rows[0]!.events), distinct: Number(rows[0]!.distinct) };
}
