import { sql, type Kysely } from 'kysely';
import { AttributeCodes, storeAttributeCodes } from './attribute-codes.js';
import { loadFacetDictionary, storeFacetDictionary } from './facet-dictionary.js';
import { FacetDictionary } from './facets.js';
import { createHourPartition, hourOfPartition, storeEntries, withoutArrayStatistics } from './postgres-blocks.js';
import { ENTRY_COLUMNS, type EntryRow } from './store-core.js';
import { prepareEntries } from './write-batch.js';

/** Rows read (and stored again) per statement. */
const CHUNK = 5_000;

/**
 * Migration 0220 on PostgreSQL: entries in blocks (postgres-blocks.ts; docs/log-store.md, "Blocks").
 * Every stored row is stored again, a tenant's hour at a time in time order, in blocks with postings
 * made again under the blocks' ids (a row does not say which batch it came with); then log_entries and
 * its partitions go. All in the migration's transaction: an interrupted upgrade leaves the store as it was.
 */
export async function storeRowsInBlocks(db: Kysely<any>): Promise<void> {
  await sql`CREATE TABLE log_blocks (
    tenant_id text NOT NULL,
    first_id bigint NOT NULL,
    first_ts bigint NOT NULL,
    last_ts bigint NOT NULL,
    ts bigint[] NOT NULL,
    level text[] NOT NULL,
    service text[] NOT NULL,
    host text[] NOT NULL,
    trace_id text[] NOT NULL,
    span_id text[] NOT NULL,
    message text[] NOT NULL,
    attributes jsonb[] NOT NULL,
    words text[] NOT NULL
  ) PARTITION BY RANGE (first_ts)`.execute(db);
  await withoutArrayStatistics(db, 'log_blocks');
  await sql`CREATE INDEX log_blocks_time ON log_blocks (tenant_id, first_ts)`.execute(db);
  await sql`CREATE INDEX log_blocks_id ON log_blocks (tenant_id, first_id)`.execute(db);
  await sql`TRUNCATE log_postings, log_batches`.execute(db);
  const { rows: partitions } = await sql<{ name: string }>`SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
    WHERE i.inhparent = 'log_entries'::regclass ORDER BY 1`.execute(db);
  const dictionary = new FacetDictionary();
  const codes = new AttributeCodes();
  for (const { name } of partitions) {
    const hour = hourOfPartition('log_entries', name);
    if (hour === null) throw new Error(`0220_postgres_blocks: ${name} is not an hour partition of log_entries`);
    await createHourPartition(db, hour);
    const { rows: tenants } = await sql<{ id: string }>`SELECT DISTINCT tenant_id AS id FROM ${sql.table(name)}`.execute(db);
    for (const { id: tenant } of tenants) {
      await loadFacetDictionary(db, tenant, dictionary);
      await codes.sync(db, tenant);
      for (let after = { ts: Number.MIN_SAFE_INTEGER, id: 0 }; ;) {
        const { rows } = await sql<EntryRow>`SELECT ${ENTRY_COLUMNS} FROM ${sql.table(name)} l
          WHERE l.tenant_id = ${tenant} AND (l.ts, l.id) > (${after.ts}::bigint, ${after.id}::bigint)
          ORDER BY l.ts, l.id LIMIT ${CHUNK}`.execute(db);
        if (rows.length === 0) break;
        const prepared = prepareEntries(await codes.entries(db, tenant, rows));
        const { facets, newValues, newlyUnfaceted } = dictionary.facetsOf(tenant, prepared);
        await storeFacetDictionary(db, tenant, newValues, newlyUnfaceted);
        dictionary.remember(tenant, newValues, newlyUnfaceted);
        const numbered = codes.numbered(
          tenant,
          prepared.map((entry) => entry.attributes),
        );
        if (numbered.rows.length > 0) {
          await storeAttributeCodes(db, tenant, numbered.rows).execute();
          codes.remember(tenant, numbered.rows);
        }
        await storeEntries(db, tenant, prepared, facets, numbered.encode);
        const last = rows.at(-1)!;
        after = { ts: Number(last.ts), id: Number(last.id) };
      }
    }
  }
  await sql`DROP TABLE log_entries`.execute(db);
}
