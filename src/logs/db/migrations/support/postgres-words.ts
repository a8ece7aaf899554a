import { sql, type Kysely } from 'kysely';
import type { ChunkPosition, ResumableMigration } from '../../../../shared/db/migrator.js';
import { countEntries, nextEntries } from './postgres-walk.js';
import { storedWords } from '../../../modules/store/indexed-text.js';

/** Messages read per chunk (one transaction) by the migration. */
const BATCH = 5_000;

/** SQL narrows the messages to read to a superset of the ones that are not plain (isPlainMessage); JavaScript decides. */
const MAYBE_NOT_PLAIN = sql`(l.message !~ '^[\\x01-\\x7f]*$' OR length(l.message) >= 32766 OR l.message ~ '[A-Za-z0-9]{201}')`;

/**
 * 0018_no_tsvector on PostgreSQL: the tokens of every stored message that is not plain (other
 * scripts, marks, over-long runs), space-joined in `words`, as ingestion stores them, so that the
 * message checks of compile-postgres.ts find them; then the `search` tsvector goes. In chunks of
 * BATCH such messages (postgres-walk.ts).
 */
export const storeWords: ResumableMigration = {
  async start(db: Kysely<any>): Promise<number> {
    await sql`ALTER TABLE log_entries ADD COLUMN IF NOT EXISTS words text`.execute(db);
    return countEntries(db, MAYBE_NOT_PLAIN);
  },

  async chunk(db: Kysely<any>, position: ChunkPosition | null): Promise<{ position: ChunkPosition; rows: number } | null> {
    const chunk = await nextEntries<{ tenant_id: string; ts: string; id: string; message: string }>(
      db,
      position,
      BATCH,
      sql`l.tenant_id, l.ts::text, l.id::text, l.message`,
      MAYBE_NOT_PLAIN,
    );
    if (chunk === null) return null;
    const updates = chunk.rows.flatMap((row) => {
      const words = storedWords(row.message);
      return words === null ? [] : [{ tenant: row.tenant_id, ts: Number(row.ts), id: Number(row.id), words }];
    });
    if (updates.length > 0) {
      await sql`UPDATE ${sql.table(chunk.partition)} l SET words = r.words
        FROM json_to_recordset(${JSON.stringify(updates)}::json) AS r(tenant text, ts bigint, id bigint, words text)
        WHERE l.tenant_id = r.tenant AND l.ts = r.ts AND l.id = r.id`.execute(db);
    }
    return { position: chunk.position, rows: chunk.rows.length };
  },

  async finish(db: Kysely<any>): Promise<void> {
    await sql`ALTER TABLE log_entries DROP COLUMN search`.execute(db);
  },
};
