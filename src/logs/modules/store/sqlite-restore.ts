import { sql, type Kysely } from 'kysely';
import { AttributeCodes } from './attribute-codes.js';
import { FacetDictionary } from './facets.js';
import { createEntryTables } from './sqlite-rows.js';
import { writeEntries, type WriterCaches } from './sqlite-store.js';
import { toStoredEntry, type EntryRow } from './store-core.js';
import { FieldCatalogueCache } from './write-batch.js';

/** Entries re-stored per statement batch by the migration. */
const BATCH = 5_000;

/**
 * The SQLite half of migration 0120: entries keyed by time-ordered ids (time-ids.ts) and a full-text
 * index of words and facets. Every entry is read in time order from the old table and written again
 * through the store's writer, in one transaction: an interrupted upgrade leaves the old store as it was.
 */
export async function restoreInTimeOrder(db: Kysely<any>, createTables: () => Promise<void>): Promise<void> {
  await sql`BEGIN IMMEDIATE`.execute(db);
  try {
    await createTables();
    await sql`ALTER TABLE log_entries RENAME TO log_entries_v1`.execute(db);
    await sql`DROP TABLE log_entries_fts`.execute(db);
    await sql`DROP TABLE log_id_ranges`.execute(db);
    // The writer counts every entry again.
    await sql`DELETE FROM log_rollups`.execute(db);
    await createTimeOrderedTables(db);
    const caches: WriterCaches = { fields: new FieldCatalogueCache(), facets: new FacetDictionary(), codes: new AttributeCodes() };
    const after = { ts: Number.MIN_SAFE_INTEGER, id: Number.MIN_SAFE_INTEGER };
    for (;;) {
      const { rows } = await sql<EntryRow>`SELECT * FROM log_entries_v1
        WHERE (ts, id) > (${after.ts}, ${after.id}) ORDER BY ts, id LIMIT ${BATCH}`.execute(db);
      if (rows.length === 0) break;
      // One write per run of the same tenant, in time order.
      let start = 0;
      for (let index = 1; index <= rows.length; index += 1) {
        if (index < rows.length && rows[index]!.tenant_id === rows[start]!.tenant_id) continue;
        const written = await writeEntries(db, rows[start]!.tenant_id, rows.slice(start, index).map(toStoredEntry), caches);
        caches.fields.remember(rows[start]!.tenant_id, written.newFields);
        caches.codes.remember(rows[start]!.tenant_id, written.newCodes);
        caches.facets.remember(rows[start]!.tenant_id, written.newValues, written.newlyUnfaceted);
        start = index;
      }
      after.ts = Number(rows.at(-1)!.ts);
      after.id = Number(rows.at(-1)!.id);
    }
    await sql`DROP TABLE log_entries_v1`.execute(db);
    await sql`COMMIT`.execute(db);
  } catch (error) {
    await sql`ROLLBACK`.execute(db).catch(() => undefined);
    throw error;
  }
}

/**
 * The SQLite store's entry tables since migration 0120, in the current writer's layout (sqlite-rows.ts:
 * the rows it writes are already what migration 0190 makes).
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
