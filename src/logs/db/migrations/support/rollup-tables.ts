import { sql, type Kysely } from 'kysely';

/** Per-minute counts by host, and the faceted values and the fields no longer faceted (facets.ts). */
export async function createCountsAndFacetTables(db: Kysely<any>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  const [integer, withoutRowid] = dialect === 'sqlite' ? [sql`INTEGER`, sql` WITHOUT ROWID`] : [sql`bigint`, sql``];
  await sql`CREATE TABLE log_host_rollups (
    tenant_id TEXT NOT NULL,
    minute ${integer} NOT NULL,
    host TEXT NOT NULL,
    count ${integer} NOT NULL,
    PRIMARY KEY (tenant_id, minute, host)
  )${withoutRowid}`.execute(db);
  // SQLite's restore writes through the current writer, which also counts by hour (0012_hourly_rollups)
  // and by index (0029_index_rollups).
  await createHourlyRollupTables(db, dialect);
  await createIndexRollupTables(db, dialect);
  // Each faceted value of a tenant's field, and its number: the index holds `f<number in base 36>` (facets.ts).
  await sql`CREATE TABLE log_facet_values (
    tenant_id TEXT NOT NULL,
    field TEXT NOT NULL,
    value TEXT NOT NULL,
    token ${integer} NOT NULL,
    PRIMARY KEY (tenant_id, field, value)
  )${withoutRowid}`.execute(db);
  await sql`CREATE TABLE log_unfaceted_fields (
    tenant_id TEXT NOT NULL,
    field TEXT NOT NULL,
    PRIMARY KEY (tenant_id, field)
  )${withoutRowid}`.execute(db);
}

/** The rollups by hour (`minute` holds the hour's first millisecond), if not there yet. */
export async function createHourlyRollupTables(db: Kysely<any>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  const [integer, withoutRowid] = dialect === 'sqlite' ? [sql`INTEGER`, sql` WITHOUT ROWID`] : [sql`bigint`, sql``];
  await sql`CREATE TABLE IF NOT EXISTS log_rollups_hourly (
    tenant_id TEXT NOT NULL,
    minute ${integer} NOT NULL,
    level TEXT NOT NULL,
    service TEXT NOT NULL,
    count ${integer} NOT NULL,
    PRIMARY KEY (tenant_id, minute, level, service)
  )${withoutRowid}`.execute(db);
  await sql`CREATE TABLE IF NOT EXISTS log_host_rollups_hourly (
    tenant_id TEXT NOT NULL,
    minute ${integer} NOT NULL,
    host TEXT NOT NULL,
    count ${integer} NOT NULL,
    PRIMARY KEY (tenant_id, minute, host)
  )${withoutRowid}`.execute(db);
}

/**
 * Entries per minute and per hour by their `_index` ('' for none), if not there yet: whether every
 * entry of a range, or none, satisfies an `_index` filter (rollups.ts, indexCoverage).
 */
export async function createIndexRollupTables(db: Kysely<any>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  const [integer, withoutRowid] = dialect === 'sqlite' ? [sql`INTEGER`, sql` WITHOUT ROWID`] : [sql`bigint`, sql``];
  for (const table of ['log_index_rollups', 'log_index_rollups_hourly']) {
    await sql`CREATE TABLE IF NOT EXISTS ${sql.table(table)} (
      tenant_id TEXT NOT NULL,
      minute ${integer} NOT NULL,
      idx TEXT NOT NULL,
      count ${integer} NOT NULL,
      PRIMARY KEY (tenant_id, minute, idx)
    )${withoutRowid}`.execute(db);
  }
}
