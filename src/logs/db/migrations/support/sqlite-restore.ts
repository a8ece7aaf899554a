import { sql, type Kysely } from 'kysely';
import type { ChunkPosition, ResumableMigration } from '../../../../shared/db/migrator.js';
import { createEntryTables } from './sqlite-compact-rows.js';
import { learnWritten, writeEntries, writerCaches, type WriterCaches } from '../../../modules/store/sqlite/sqlite-writes.js';
import { toStoredEntry, type EntryRow } from '../../../modules/store/store-core.js';

/** Entries re-stored per chunk (one transaction) by the migration. */
const BATCH = 5_000;

/**
 * The SQLite half of 0011_time_ordered_facets: entries keyed by time-ordered ids (time-ids.ts) and a full-text
 * index of words and facets. The old table is kept aside (`log_entries_v1`) and every entry is read
 * from it in time order and written again through the store's writer, BATCH entries a committed
 * chunk: the position is the last (ts, id) re-stored, so a resumed upgrade goes on from there.
 */
export function restoreInTimeOrder(createTables: (db: Kysely<any>) => Promise<void>): ResumableMigration {
  // The writer's caches, kept from chunk to chunk (filled, they let it prepare a batch before it takes
  // the writer: a third of the time); empty at first and after a failed chunk, as the writer reads
  // what it needs of a tenant's state under the writer.
  let kept: WriterCaches | undefined;
  return {
    async start(db: Kysely<any>): Promise<number> {
      await createTables(db);
      await sql`ALTER TABLE log_entries RENAME TO log_entries_v1`.execute(db);
      await sql`DROP TABLE log_entries_fts`.execute(db);
      await sql`DROP TABLE log_id_ranges`.execute(db);
      // The writer counts every entry again.
      await sql`DELETE FROM log_rollups`.execute(db);
      await createTimeOrderedTables(db);
      const { rows } = await sql<{ total: number }>`SELECT count(*) AS total FROM log_entries_v1`.execute(db);
      return Number(rows[0]!.total);
    },

    async chunk(db: Kysely<any>, position: ChunkPosition | null): Promise<{ position: ChunkPosition; rows: number } | null> {
      const [afterTs, afterId] = (position as [number, number] | null) ?? [Number.MIN_SAFE_INTEGER, Number.MIN_SAFE_INTEGER];
      const { rows } = await sql<EntryRow>`SELECT * FROM log_entries_v1
      WHERE (ts, id) > (${afterTs}, ${afterId}) ORDER BY ts, id LIMIT ${BATCH}`.execute(db);
      if (rows.length === 0) return null;
      const caches = (kept ??= writerCaches());
      kept = undefined;
      // One write per run of the same tenant, in time order.
      let start = 0;
      for (let index = 1; index <= rows.length; index += 1) {
        if (index < rows.length && rows[index]!.tenant_id === rows[start]!.tenant_id) continue;
        const tenantId = rows[start]!.tenant_id;
        learnWritten(caches, tenantId, await writeEntries(db, tenantId, rows.slice(start, index).map(toStoredEntry), caches));
        start = index;
      }
      kept = caches;
      const last = rows.at(-1)!;
      return { position: [Number(last.ts), Number(last.id)], rows: rows.length };
    },

    async finish(db: Kysely<any>): Promise<void> {
      await sql`DROP TABLE log_entries_v1`.execute(db);
    },
  };
}

/**
 * The SQLite store's entry tables after 0011_time_ordered_facets, in the current writer's layout (sqlite-rows.ts:
 * the rows it writes are already what 0019_compact_rows makes).
 */
async function createTimeOrderedTables(db: Kysely<any>): Promise<void> {
  await createEntryTables(db);
  // The hours of each tenant's full-text index, a table each (fts-hours.ts).
  await sql`CREATE TABLE log_fts_hours (tenant_id TEXT NOT NULL, hour INTEGER NOT NULL, PRIMARY KEY (tenant_id, hour)) WITHOUT ROWID`.execute(
    db,
  );
  // Entries whose id is not in their own second's block (time-ids.ts).
  await sql`CREATE TABLE log_displaced (id INTEGER PRIMARY KEY, tenant_id TEXT NOT NULL, ts INTEGER NOT NULL)`.execute(db);
  await sql`CREATE INDEX log_displaced_tenant_ts ON log_displaced (tenant_id, ts)`.execute(db);
}
