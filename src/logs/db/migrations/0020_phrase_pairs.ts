import { sql, type Kysely } from 'kysely';
import { isSqlite } from './support/dialect.js';

/**
 * Pairs of words in PostgreSQL's postings (postgres-postings.ts, pairsFromFor; docs/log-store.md,
 * "Phrases"): a piece states from how many entries a word's pairs are posted; the pieces stored before
 * have none (0) and find a phrase by its words, as they did. Nothing on SQLite, whose FTS5 keeps positions.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (!isSqlite(db)) await sql`ALTER TABLE log_batches ADD COLUMN IF NOT EXISTS pairs integer NOT NULL DEFAULT 0`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!isSqlite(db)) await sql`ALTER TABLE log_batches DROP COLUMN IF EXISTS pairs`.execute(db);
}
