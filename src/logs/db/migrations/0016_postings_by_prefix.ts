import { sql } from 'kysely';
import { byDialect } from './support/dialect.js';
import { storedPostingsChunk } from './support/postgres-stored-postings.js';
import { countEntries } from './support/postgres-walk.js';

/**
 * Postings grouped so that a prefix finds its words in one group (postings.ts, GROUP_PREFIX): the
 * postings of 0015_postings are made again from the stored tsvectors. Nothing on SQLite.
 */
export const { start, chunk, finish } = byDialect({
  postgres: {
    async start(db) {
      await sql`TRUNCATE log_postings, log_batches`.execute(db);
      return countEntries(db);
    },
    chunk: storedPostingsChunk,
    finish: async () => undefined,
  },
});
