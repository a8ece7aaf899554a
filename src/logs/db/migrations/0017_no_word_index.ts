import { sql, type Kysely } from 'kysely';
import { isSqlite } from './support/dialect.js';

/**
 * No GIN index on PostgreSQL: every read of words and facets finds its rows through the postings
 * (docs/log-store.md, "Postings"), so the index only cost ingest and space (docs/scaling.md 2c).
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (isSqlite(db)) return;
  await sql`DROP INDEX IF EXISTS log_entries_search`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (isSqlite(db)) return;
  await sql`CREATE INDEX IF NOT EXISTS log_entries_search ON log_entries USING gin (search)`.execute(db);
}
