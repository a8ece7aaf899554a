import { sql } from 'kysely';
import { byDialect } from './support/dialect.js';
import { countEntries } from './support/postgres-walk.js';
import { refacetChunk } from './support/postgres-refacet.js';
import { createCountsAndFacetTables } from './support/rollup-tables.js';
import { restoreInTimeOrder } from './support/sqlite-restore.js';

/**
 * Per-minute counts by host (distinct hosts, histograms by host), the fields no longer faceted
 * (facets.ts), and on SQLite time-ordered ids with facets in the full-text index (time-ids.ts): the
 * entries are re-stored in time order under their new ids, their words and facets indexed again.
 * This migration, unlike the others, uses the store's own writer: re-indexing is what it does.
 */
export const { start, chunk, finish } = byDialect({
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
