import { SqliteAdapter, sql, type Kysely, type Migration } from 'kysely';
import type { AnyMigration, ResumableMigration } from '../../../shared/db/migrator.js';
import { storeRowsInBlocks } from './postgres-block-upgrade.js';
import { storedPostingsChunk } from './postgres-postings.js';
import { refacetChunk } from './postgres-refacet.js';
import { countEntries } from './postgres-upgrade-walk.js';
import { numberStoredAttributes } from './postgres-rows.js';
import { storeWords } from './postgres-words.js';
import { restoreInTimeOrder } from './sqlite-restore.js';
import { compactStoredRows } from './sqlite-rows.js';

/**
 * Log store tables (docs/log-store.md). Typed Kysely<any> and free of app imports so they keep
 * working as the code changes. One migration serves both dialects; the schema differs where the
 * engines do (FTS5 vs. tsvector, one table vs. hour partitions).
 */

function isSqlite(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof SqliteAdapter;
}

/** A data rewrite with nothing to do on this dialect. */
const NOTHING: ResumableMigration = {
  start: async () => 0,
  chunk: async () => null,
  finish: async () => undefined,
};

/**
 * A data rewrite whose work differs by dialect (docs/operations.md, "Upgrade and rollback": chunks
 * committed one by one, resumed after a stop). No `down`: a rewrite is undone by restoring a backup.
 */
function byDialect({
  sqlite = NOTHING,
  postgres = NOTHING,
}: {
  sqlite?: ResumableMigration;
  postgres?: ResumableMigration;
}): ResumableMigration {
  const of = (db: Kysely<any>) => (isSqlite(db) ? sqlite : postgres);
  return {
    start: (db) => of(db).start(db),
    chunk: (db, position) => of(db).chunk(db, position),
    finish: (db) => of(db).finish(db),
  };
}

const init: Migration = {
  async up(db: Kysely<any>): Promise<void> {
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
  },
  async down(db: Kysely<any>): Promise<void> {
    if (isSqlite(db)) {
      await sql`DROP TABLE IF EXISTS log_entries_fts`.execute(db);
      await sql`DROP TABLE IF EXISTS log_id_ranges`.execute(db);
    }
    await sql`DROP TABLE IF EXISTS log_entries`.execute(db);
    await sql`DROP TABLE IF EXISTS log_rollups`.execute(db);
    await sql`DROP TABLE IF EXISTS log_fields`.execute(db);
  },
};

/** Senders' document ids (Elasticsearch `_id`) remembered until `expires_at`, so a retried document is stored once. */
const documentIds: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    const time = isSqlite(db) ? sql`INTEGER` : sql`bigint`;
    await sql`CREATE TABLE log_document_ids (
      tenant_id TEXT NOT NULL,
      doc_id TEXT NOT NULL,
      expires_at ${time} NOT NULL,
      PRIMARY KEY (tenant_id, doc_id)
    )`.execute(db);
    await sql`CREATE INDEX log_document_ids_expiry ON log_document_ids (expires_at)`.execute(db);
  },
  async down(db: Kysely<any>): Promise<void> {
    await sql`DROP TABLE IF EXISTS log_document_ids`.execute(db);
  },
};

/**
 * Per-minute counts by host (distinct hosts, histograms by host), the fields no longer faceted
 * (facets.ts), and on SQLite time-ordered ids with facets in the full-text index (time-ids.ts): the
 * entries are re-stored in time order under their new ids, their words and facets indexed again.
 * This migration, unlike the others, uses the store's own writer: re-indexing is what it does.
 */
const timeOrderedFacets = byDialect({
  sqlite: restoreInTimeOrder((db) => createCountsAndFacetTables(db, 'sqlite')),
  postgres: {
    async start(db) {
      await createCountsAndFacetTables(db, 'postgres');
      await sql`INSERT INTO log_host_rollups (tenant_id, minute, host, count)
        SELECT tenant_id, ts - (((ts % 60000) + 60000) % 60000), coalesce(host, ''), count(*) FROM log_entries GROUP BY 1, 2, 3`.execute(
        db,
      );
      return countEntries(db);
    },
    chunk: refacetChunk,
    finish: async () => undefined,
  },
});

async function createCountsAndFacetTables(db: Kysely<any>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  const [integer, withoutRowid] = dialect === 'sqlite' ? [sql`INTEGER`, sql` WITHOUT ROWID`] : [sql`bigint`, sql``];
  await sql`CREATE TABLE log_host_rollups (
    tenant_id TEXT NOT NULL,
    minute ${integer} NOT NULL,
    host TEXT NOT NULL,
    count ${integer} NOT NULL,
    PRIMARY KEY (tenant_id, minute, host)
  )${withoutRowid}`.execute(db);
  // SQLite's restore writes through the current writer, which also counts by hour (migration 0130).
  await createHourlyRollupTables(db, dialect);
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

/**
 * The rollups again by hour (`minute` holds the hour's first millisecond): counts and distinct values
 * over days read 24 rows a day per level, service and host instead of 1,440 (docs/benchmarks.md, 100M
 * events: `distinct level` over ten days took 0.6 s from the minutes). Made from the minutes.
 */
const hourlyRollups: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    const dialect = isSqlite(db) ? 'sqlite' : 'postgres';
    await createHourlyRollupTables(db, dialect);
    // Stores that went through 0120 with this code already count by hour: counted again from the minutes.
    await sql`DELETE FROM log_rollups_hourly`.execute(db);
    await sql`DELETE FROM log_host_rollups_hourly`.execute(db);
    const hour = sql`minute - (((minute % 3600000) + 3600000) % 3600000)`;
    await sql`INSERT INTO log_rollups_hourly (tenant_id, minute, level, service, count)
      SELECT tenant_id, ${hour}, level, service, sum(count) FROM log_rollups GROUP BY 1, 2, 3, 4`.execute(db);
    await sql`INSERT INTO log_host_rollups_hourly (tenant_id, minute, host, count)
      SELECT tenant_id, ${hour}, host, sum(count) FROM log_host_rollups GROUP BY 1, 2, 3`.execute(db);
  },
  async down(db: Kysely<any>): Promise<void> {
    await sql`DROP TABLE IF EXISTS log_rollups_hourly`.execute(db);
    await sql`DROP TABLE IF EXISTS log_host_rollups_hourly`.execute(db);
  },
};

async function createHourlyRollupTables(db: Kysely<any>, dialect: 'sqlite' | 'postgres'): Promise<void> {
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
 * Per tenant, the time before which retention is removing entries (LogStoreCore.purging): reads
 * start there, so a day leaves every answer in one small write, however long its removal takes.
 */
const retentionFloors: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    const [time, withoutRowid] = isSqlite(db) ? [sql`INTEGER`, sql` WITHOUT ROWID`] : [sql`bigint`, sql``];
    await sql`CREATE TABLE log_retention_floors (
      tenant_id TEXT PRIMARY KEY,
      hidden_before ${time} NOT NULL
    )${withoutRowid}`.execute(db);
  },
  async down(db: Kysely<any>): Promise<void> {
    await sql`DROP TABLE IF EXISTS log_retention_floors`.execute(db);
  },
};

/**
 * PostgreSQL's postings (postgres-postings.ts): per batch and UTC hour, its entries' times
 * (log_batches) and which of them hold each token (log_postings), made for the stored entries from
 * their tsvectors. Nothing on SQLite, whose full-text index is keyed by time-ordered ids.
 */
const postings = byDialect({
  postgres: {
    async start(db) {
      await sql`CREATE TABLE log_batches (
        tenant_id text NOT NULL,
        batch bigserial NOT NULL,
        first_ts bigint NOT NULL,
        last_ts bigint NOT NULL,
        entries integer NOT NULL,
        groups integer NOT NULL,
        times bytea NOT NULL,
        PRIMARY KEY (tenant_id, batch)
      )`.execute(db);
      await sql`CREATE INDEX log_batches_time ON log_batches (tenant_id, first_ts, batch)`.execute(db);
      await sql`CREATE TABLE log_postings (
        tenant_id text NOT NULL,
        batch bigint NOT NULL,
        grp integer NOT NULL,
        tokens bytea NOT NULL,
        PRIMARY KEY (tenant_id, batch, grp)
      )`.execute(db);
      return countEntries(db);
    },
    chunk: storedPostingsChunk,
    finish: async () => undefined,
  },
});

/**
 * Postings grouped so that a prefix finds its words in one group (postings.ts, GROUP_PREFIX): the
 * postings of 0150 are made again from the stored tsvectors. Nothing on SQLite.
 */
const postingsByPrefix = byDialect({
  postgres: {
    async start(db) {
      await sql`TRUNCATE log_postings, log_batches`.execute(db);
      return countEntries(db);
    },
    chunk: storedPostingsChunk,
    finish: async () => undefined,
  },
});

/**
 * No GIN index on PostgreSQL: every read of words and facets finds its rows through the postings
 * (docs/log-store.md, "Postings"), so the index only cost ingest and space (docs/scaling.md 2c).
 */
const noWordIndex: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    if (isSqlite(db)) return;
    await sql`DROP INDEX IF EXISTS log_entries_search`.execute(db);
  },
  async down(db: Kysely<any>): Promise<void> {
    if (isSqlite(db)) return;
    await sql`CREATE INDEX IF NOT EXISTS log_entries_search ON log_entries USING gin (search)`.execute(db);
  },
};

/**
 * No tsvector on PostgreSQL (docs/scaling.md 2d): the postings find every row, and the rows' words
 * are checked on the message itself (compile-postgres.ts); messages that are not plain ASCII keep
 * their tokens in `words`. The column's space comes back as rows are rewritten (retention drops whole
 * partitions). Nothing on SQLite.
 */
const noTsvector = byDialect({ postgres: storeWords });

/**
 * Smaller SQLite rows (sqlite-rows.ts, docs/log-store.md "Rows"): attribute names by number, JSONB,
 * hexadecimal ids as bytes, levels as numbers, the time as an offset from the id's second; every
 * stored row is written again. Nothing on PostgreSQL.
 */
const compactRows = byDialect({ sqlite: compactStoredRows });

/**
 * Pairs of words in PostgreSQL's postings (postgres-postings.ts, pairsFromFor; docs/log-store.md,
 * "Phrases"): a piece states from how many entries a word's pairs are posted; the pieces stored before
 * have none (0) and find a phrase by its words, as they did. Nothing on SQLite, whose FTS5 keeps positions.
 */
const phrasePairs: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    if (!isSqlite(db)) await sql`ALTER TABLE log_batches ADD COLUMN IF NOT EXISTS pairs integer NOT NULL DEFAULT 0`.execute(db);
  },
  async down(db: Kysely<any>): Promise<void> {
    if (!isSqlite(db)) await sql`ALTER TABLE log_batches DROP COLUMN IF EXISTS pairs`.execute(db);
  },
};

/**
 * Attribute names by number on PostgreSQL (postgres-rows.ts, attribute-codes.ts; docs/log-store.md,
 * "Rows"), as SQLite's rows have them since 0190: every stored row's attributes are written again.
 * Nothing on SQLite.
 */
const postgresAttributeNumbers = byDialect({ postgres: numberStoredAttributes });

/**
 * PostgreSQL's entries in blocks (postgres-blocks.ts, postgres-block-upgrade.ts; docs/log-store.md,
 * "Blocks"): every stored row is stored again in blocks with new postings, and log_entries goes.
 * Nothing on SQLite.
 */
const postgresBlocks = byDialect({ postgres: storeRowsInBlocks });

/** Every log store migration, by name; the logs service runs them with its own. */
export const logStoreMigrations: Record<string, AnyMigration> = {
  '0100_log_store': init,
  '0110_document_ids': documentIds,
  '0120_time_ordered_facets': timeOrderedFacets,
  '0130_hourly_rollups': hourlyRollups,
  '0140_retention_floors': retentionFloors,
  '0150_postings': postings,
  '0160_postings_by_prefix': postingsByPrefix,
  '0170_no_word_index': noWordIndex,
  '0180_no_tsvector': noTsvector,
  '0190_compact_rows': compactRows,
  '0200_phrase_pairs': phrasePairs,
  '0210_postgres_attribute_numbers': postgresAttributeNumbers,
  '0220_postgres_blocks': postgresBlocks,
};
