import { sql, type Kysely } from 'kysely';
import type { ChunkPosition } from '../../../../shared/db/migrator.js';
import { postingsPieces, storePostings } from '../../../modules/store/postgres/postgres-postings-write.js';
import { byTenant, nextEntries } from './postgres-walk.js';

/** Stored entries read per chunk by storedPostingsChunk: a batch of postings each. */
const STORED_BATCH = 5_000;

/**
 * 0015_postings and 0016_postings_by_prefix: the postings of every stored entry, from its tsvector's
 * lexemes, a tenant's hour (a partition) at a time in time order: one chunk of STORED_BATCH entries,
 * a batch of postings for each tenant in it (postgres-walk.ts); null when none is left.
 */
export async function storedPostingsChunk(
  db: Kysely<any>,
  position: ChunkPosition | null,
): Promise<{ position: ChunkPosition; rows: number } | null> {
  const chunk = await nextEntries<{ tenant_id: string; ts: string; id: string; lexemes: string[] }>(
    db,
    position,
    STORED_BATCH,
    sql`l.tenant_id, l.ts::text, l.id::text, tsvector_to_array(l.search) AS lexemes`,
  );
  if (chunk === null) return null;
  for (const { tenant, rows } of byTenant(chunk.rows)) {
    const pieces = postingsPieces(
      rows.map((row) => Number(row.ts)),
      rows.map((row) => row.lexemes),
    );
    await storePostings(db, tenant, pieces);
  }
  return { position: chunk.position, rows: chunk.rows.length };
}
