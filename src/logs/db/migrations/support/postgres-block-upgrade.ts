import { sql, type Kysely } from 'kysely';
import { AttributeCodes, storeAttributeCodes } from '../../../modules/store/attribute-codes.js';
import { loadFacetDictionary, storeFacetDictionary } from '../../../modules/store/facet-dictionary.js';
import { FacetDictionary } from '../../../modules/store/facets.js';
import {
  createHourPartition,
  hourOfPartition,
  storeEntries,
  withoutArrayStatistics,
} from '../../../modules/store/postgres/postgres-blocks.js';
import { ENTRY_COLUMNS, type EntryRow } from '../../../modules/store/store-core.js';
import { byTenant, countEntries, entryPartitions, nextEntries } from './postgres-walk.js';
import type { ChunkPosition, ResumableMigration } from '../../../../shared/db/migrator.js';
import { prepareEntries } from '../../../modules/store/write-batch.js';

/** Rows read (and stored again) per chunk (one transaction). */
const CHUNK = 5_000;

/**
 * 0022_postgres_blocks on PostgreSQL: entries in blocks (postgres-blocks.ts; docs/log-store.md, "Blocks").
 * Every stored row is stored again, a tenant's hour (a partition) at a time in time order, CHUNK rows
 * a chunk (postgres-walk.ts), in blocks with postings made again under the blocks' ids (a row
 * does not say which batch it came with); then log_entries and its partitions go.
 */
export const storeRowsInBlocks: ResumableMigration = {
  async start(db: Kysely<any>): Promise<number> {
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
    for (const name of await entryPartitions(db)) {
      if (hourOfPartition('log_entries', name) === null)
        throw new Error(`0022_postgres_blocks: ${name} is not an hour partition of log_entries`);
    }
    return countEntries(db);
  },

  async chunk(db: Kysely<any>, position: ChunkPosition | null): Promise<{ position: ChunkPosition; rows: number } | null> {
    const chunk = await nextEntries<EntryRow>(db, position, CHUNK, ENTRY_COLUMNS);
    if (chunk === null) return null;
    await createHourPartition(db, hourOfPartition('log_entries', chunk.partition)!);
    const dictionary = new FacetDictionary();
    const codes = new AttributeCodes();
    for (const { tenant, rows } of byTenant(chunk.rows)) {
      await loadFacetDictionary(db, tenant, dictionary);
      await codes.sync(db, tenant);
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
    }
    return { position: chunk.position, rows: chunk.rows.length };
  },

  async finish(db: Kysely<any>): Promise<void> {
    await sql`DROP TABLE log_entries`.execute(db);
  },
};
