import { sql, type Kysely } from 'kysely';
import { isSqlite } from './support/dialect.js';
import { createIndexRollupTables } from './support/rollup-tables.js';

/**
 * Entries per minute and per hour by their `_index`, so that an index a search names is settled from
 * counts where every entry of its range carries it, or none does (rollups.ts, indexCoverage). Entries
 * stored before are not counted: their minutes stay incomplete (fewer entries by index than by host),
 * and searches naming an index read their rows, as before, until retention removes them.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await createIndexRollupTables(db, isSqlite(db) ? 'sqlite' : 'postgres');
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE IF EXISTS log_index_rollups`.execute(db);
  await sql`DROP TABLE IF EXISTS log_index_rollups_hourly`.execute(db);
}
