import { sql, type Kysely } from 'kysely';
import { isSqlite } from './support/dialect.js';

/**
 * The log store's first tables (docs/log-store.md; later migrations reshape them). The schema differs
 * where the engines do (FTS5 vs. tsvector, one table vs. hour partitions).
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (isSqlite(db)) {
    await sql`CREATE TABLE log_entries (
      id INTEGER PRIMARY KEY,
      tenant_id TEXT NOT NULL,
      ts INTEGER NOT NULL,
      level TEXT,
      service TEXT,
      host TEXT,
      trace_id TEXT,
      span_id TEXT,
      message TEXT NOT NULL,
      attributes TEXT NOT NULL DEFAULT '{}'
    )`.execute(db);
    // The rowid rides along in every index entry, so (tenant_id, ts) also orders ties by id.
    await sql`CREATE INDEX log_entries_tenant_ts ON log_entries (tenant_id, ts)`.execute(db);
    // Contentless: the text lives once, in log_entries; the index holds our own tokens (tokenize.ts).
    await sql`CREATE VIRTUAL TABLE log_entries_fts USING fts5(body, content='', contentless_delete=1)`.execute(db);
    // Per tenant and minute, the smallest and largest entry id: turns a time range into the rowid
    // window that FTS5 lookups are restricted to, reading at most one row per minute.
    await sql`CREATE TABLE log_id_ranges (
      tenant_id TEXT NOT NULL,
      minute INTEGER NOT NULL,
      min_id INTEGER NOT NULL,
      max_id INTEGER NOT NULL,
      PRIMARY KEY (tenant_id, minute)
    ) WITHOUT ROWID`.execute(db);
    await sql`CREATE TABLE log_rollups (
      tenant_id TEXT NOT NULL,
      minute INTEGER NOT NULL,
      level TEXT NOT NULL,
      service TEXT NOT NULL,
      count INTEGER NOT NULL,
      PRIMARY KEY (tenant_id, minute, level, service)
    ) WITHOUT ROWID`.execute(db);
    await sql`CREATE TABLE log_fields (
      tenant_id TEXT NOT NULL,
      name TEXT NOT NULL,
      type TEXT NOT NULL,
      PRIMARY KEY (tenant_id, name)
    ) WITHOUT ROWID`.execute(db);
    return;
  }

  // Hour partitions (log_entries_pYYYYMMDDHH) are created on demand at ingest and dropped by retention.
  await sql`CREATE TABLE log_entries (
    id bigserial NOT NULL,
    tenant_id text NOT NULL,
    ts bigint NOT NULL,
    level text,
    service text,
    host text,
    trace_id text,
    span_id text,
    message text NOT NULL,
    attributes jsonb NOT NULL DEFAULT '{}',
    search tsvector NOT NULL
  ) PARTITION BY RANGE (ts)`.execute(db);
  await sql`CREATE INDEX log_entries_tenant_ts ON log_entries (tenant_id, ts, id)`.execute(db);
  await sql`CREATE INDEX log_entries_search ON log_entries USING gin (search)`.execute(db);
  await sql`CREATE TABLE log_rollups (
    tenant_id text NOT NULL,
    minute bigint NOT NULL,
    level text NOT NULL,
    service text NOT NULL,
    count bigint NOT NULL,
    PRIMARY KEY (tenant_id, minute, level, service)
  )`.execute(db);
  await sql`CREATE TABLE log_fields (
    tenant_id text NOT NULL,
    name text NOT NULL,
    type text NOT NULL,
    PRIMARY KEY (tenant_id, name)
  )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (isSqlite(db)) {
    await sql`DROP TABLE IF EXISTS log_entries_fts`.execute(db);
    await sql`DROP TABLE IF EXISTS log_id_ranges`.execute(db);
  }
  await sql`DROP TABLE IF EXISTS log_entries`.execute(db);
  await sql`DROP TABLE IF EXISTS log_rollups`.execute(db);
  await sql`DROP TABLE IF EXISTS log_fields`.execute(db);
}
