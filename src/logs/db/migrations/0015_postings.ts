import { sql } from 'kysely';
import { byDialect } from './support/dialect.js';
import { storedPostingsChunk } from './support/postgres-stored-postings.js';
import { countEntries } from './support/postgres-walk.js';

/**
 * PostgreSQL's postings (postgres-postings.ts): per batch and UTC hour, its entries' times
 * (log_batches) and which of them hold each token (log_postings), made for the stored entries from
 * their tsvectors. Nothing on SQLite, whose full-text index is keyed by time-ordered ids.
 */
export const { start, chunk, finish } = byDialect({
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
