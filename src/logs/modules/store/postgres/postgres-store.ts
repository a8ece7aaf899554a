import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { AppendOptions, AppendResult, LogEntry, StoredLogEntry } from '../log-store.js';
import { DAY, mod } from '../minutes.js';
import type { Condition } from '../../query/condition.js';
import { compilePostgres, postgresFields } from '../condition-sql/compile-postgres.js';
import { AttributeCodes, storeAttributeCodes, type AttributeCodeRow } from '../attribute-codes.js';
import {
  boundedTotal,
  ENTRY_COLUMNS,
  LogStoreCore,
  type BoundedTotal,
  type BucketCount,
  type DocumentIdWindow,
  type NewestMatches,
  type ReadDialect,
  type ReadPlan,
  type TimePage,
  type ValueCountsAsked,
} from '../store-core.js';
import type { FieldRef } from '../../query/fields.js';
import { postingsPlan, type Hit, type PostingsPlan } from './postgres-postings.js';
import { candidateHits, matchHits, postingsCounts, postingsCountsByValue, type PostingsCounts } from './postgres-postings-read.js';
import { lastPieceNumber, removePostings, type EmptiedHour } from './postgres-postings-write.js';
import {
  columnsRead,
  createHourPartition,
  entriesAt,
  entriesInRange,
  hourOfPartition,
  entriesOfBlocks,
  nextHourOfBlocks,
  storeEntries,
  type BlockSpan,
} from './postgres-blocks.js';
import { expandFieldPatterns, hasFieldPatterns, knownFields } from '../../query/condition.js';
import { loadFacetDictionary, readFacetLookup, refreshFacetDictionary, storeFacetDictionary } from '../facet-dictionary.js';
import { FacetDictionary, type FacetLookup } from '../facets.js';
import {
  batchRollups,
  documentIdsOf,
  entryTime,
  FieldCatalogueCache,
  prepareEntriesInTurns,
  type PreparedEntry,
  ROLLUP_TABLE_NAMES,
  splitByDocumentId,
} from '../write-batch.js';

/** PostgreSQL's reads: casts where a bound value meets a bigint or text column, strpos for substrings. */
const postgresReads: ReadDialect = {
  int: (value) => sql`${value}::bigint`,
  text: (value) => sql`${value}::text`,
  sumOfCounts: sql`sum(count)::bigint`,
  entryColumns: ENTRY_COLUMNS,
  containsIgnoringCase: (value, needle) => sql`strpos(lower(${value}), lower(${needle}::text)) > 0`,
  fieldNameOrder: sql`name COLLATE "C"`,
  calendarStart: (unit) =>
    sql`(extract(epoch FROM date_trunc(${sql.lit(unit)}, to_timestamp(l.ts / 1000.0) AT TIME ZONE 'UTC')) * 1000)::bigint`,
};

/** Serialises partition DDL (create at ingest, drop at retention) across every process. */
const PARTITION_LOCK = 0x6c6f6773; // 'logs'
/** With the tenant's hash: serialises additions to a tenant's facet dictionary and attribute numbers. */
const FACET_LOCK = 0x66616374; // 'fact'

/**
 * One partition of log_blocks per UTC hour (of a block's first time; a block lies in one hour):
 * retention detaches whole hours, and an hour's read looks in one partition.
 */
const PARTITION_MS = 3_600_000;

/** What retention renames an hour partition to once detached, until its table is dropped. */
const REMOVED_PREFIX = 'log_removed_';

interface Partition {
  name: string;
  start: number;
}

/**
 * The partitions that hold rows of tenants other than `tenantId`: per partition two index range
 * probes (`tenant_id < $1`, `tenant_id > $1`; `<>` would scan it), all in one statement.
 */
async function partitionsWithOtherTenants(db: Kysely<any>, partitions: readonly Partition[], tenantId: string): Promise<Partition[]> {
  if (partitions.length === 0) return [];
  const probes = partitions.map(({ name }) => {
    const table = sql.table(name);
    return sql`SELECT ${name}::text AS name WHERE EXISTS (SELECT 1 FROM ${table} WHERE tenant_id < ${tenantId})
      OR EXISTS (SELECT 1 FROM ${table} WHERE tenant_id > ${tenantId})`;
  });
  const { rows } = await sql<{ name: string }>`${sql.join(probes, sql` UNION ALL `)}`.execute(db);
  const names = new Set(rows.map((row) => row.name));
  return partitions.filter((partition) => names.has(partition.name));
}

/** Deletes a tenant's blocks of a partition; returns how many entries they held. */
async function deleteTenantBlocks(trx: Kysely<any>, partition: string, tenantId: string): Promise<number> {
  const { rows } = await sql<{ n: string | null }>`WITH gone AS (DELETE FROM ${sql.table(partition)} WHERE tenant_id = ${tenantId}
    RETURNING cardinality(ts) AS n) SELECT sum(n)::text AS n FROM gone`.execute(trx);
  return Number(rows[0]?.n ?? 0);
}

/** LogStoreOptions.writeTimeoutMs's default (and LOGS_WRITE_TIMEOUT's). */
export const DEFAULT_WRITE_TIMEOUT_MS = 30_000;

/** A read over [from, end) on PostgreSQL. */
interface PostgresPlan extends ReadPlan {
  tenantId: string;
  from: number;
  end: number;
  /** The condition as postings answer it (postgres-postings.ts), or null when only the rows can. */
  postings: PostingsPlan | null;
}

/**
 * The PostgreSQL log store: entries in blocks (postgres-blocks.ts) partitioned by hour (partitions
 * shared by every tenant), found by postings (postgres-postings.ts) and checked as rows
 * (compile-postgres.ts), per-minute rollups, a field catalogue.
 */
export class PostgresLogStore extends LogStoreCore<PostgresPlan> {
  readonly #fields = new FieldCatalogueCache();
  readonly #facets = new FacetDictionary();
  readonly #codes = new AttributeCodes();
  readonly #partitions = new Set<number>();
  readonly #hits = new WeakMap<PostgresPlan, Promise<Hit[] | null>>();

  /**
   * Reads go through `reads` (store-reads.ts: a pool whose statement_timeout bounds each statement);
   * default `db`. A batch's statements each have `writeTimeoutMs` (LogStoreOptions).
   */
  constructor(
    private readonly db: Kysely<any>,
    reads: Kysely<any> = db,
    documentIds?: DocumentIdWindow,
    private readonly writeTimeoutMs = DEFAULT_WRITE_TIMEOUT_MS,
  ) {
    super(db, reads, postgresReads, documentIds);
  }

  /**
   * A write transaction whose statements each end after writeTimeoutMs: a server that stalls (a lock
   * held elsewhere, a full disk, a lost network) fails the batch, which its sender retries, instead
   * of holding the connection and the batch's memory for as long as it stalls.
   */
  #writeTransaction<T>(work: (trx: Kysely<any>) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(async (trx) => {
      await sql`SELECT set_config('statement_timeout', ${String(this.writeTimeoutMs)}, true)`.execute(trx);
      return work(trx);
    });
  }

  async append(tenantId: string, entries: readonly LogEntry[], options: AppendOptions = {}): Promise<AppendResult> {
    // The batch is prepared inside its transaction, beside the others' (PostgreSQL writes them at once).
    options.prepared?.();
    if (entries.length === 0) return { duplicates: [] };
    const ids = documentIdsOf(entries);
    const partitions = [
      ...new Set(
        entries.map((entry, index) => {
          const ts = entryTime(entry, index);
          return ts - mod(ts, PARTITION_MS);
        }),
      ),
    ];
    for (let attempt = 0; ; attempt += 1) {
      await this.#ensurePartitions(partitions);
      try {
        let duplicates: number[] = [];
        let written: Awaited<ReturnType<PostgresLogStore['insert']>> | undefined;
        // One transaction per batch; COMMIT returns once the WAL is flushed (synchronous_commit=on).
        await this.#writeTransaction(async (trx) => {
          let batch: readonly LogEntry[] = entries;
          if (ids.length > 0) {
            // Claims the ids: a concurrent batch with one of them waits on its row, then sees it taken.
            // In one order (of the ids) on every instance, so that two batches never wait for each other.
            const now = this.documentIds.now();
            const { rows: claimed } = await sql<{ doc_id: string }>`INSERT INTO log_document_ids (tenant_id, doc_id, expires_at)
              SELECT ${tenantId}, r.doc_id, ${now + this.documentIds.windowMs}::bigint FROM json_array_elements_text(${JSON.stringify(ids)}::json) AS r(doc_id)
              ORDER BY r.doc_id COLLATE "C"
              ON CONFLICT (tenant_id, doc_id) DO UPDATE SET expires_at = excluded.expires_at WHERE log_document_ids.expires_at <= ${now}::bigint
              RETURNING doc_id`.execute(trx);
            const fresh = new Set(claimed.map((row) => row.doc_id));
            ({ kept: batch, duplicates } = splitByDocumentId(entries, new Set(ids.filter((id) => !fresh.has(id)))));
          }
          if (batch.length > 0) written = await this.insert(trx, tenantId, batch);
        });
        if (written) {
          this.#codes.remember(tenantId, written.newCodes);
          this.#fields.remember(tenantId, written.newFields);
          this.#facets.remember(tenantId, written.newValues, written.newlyUnfaceted);
        }
        return { duplicates };
      } catch (error) {
        // A partition dropped by retention between ensure and insert: forget what we knew, retry once.
        if (attempt > 0 || (error as { code?: string }).code !== '23514') throw error;
        this.#partitions.clear();
      }
    }
  }

  /**
   * Inserts a batch inside the caller's transaction; returns the catalogue fields, facet values and
   * attribute numbers it added and the fields it stopped faceting, for the caches once it committed.
   */
  async insert(trx: Kysely<any>, tenantId: string, entries: readonly LogEntry[]) {
    const prepared = await prepareEntriesInTurns(entries);
    await loadFacetDictionary(trx, tenantId, this.#facets);
    let faceted = this.#facets.facetsOf(tenantId, prepared);
    if (faceted.newValues.length > 0 || faceted.newlyUnfaceted.length > 0) {
      // Batches run concurrently here: adding to the dictionary is one at a time per tenant, and
      // from what the others committed (a value has one number; numbers are never given twice).
      await sql`SELECT pg_advisory_xact_lock(${FACET_LOCK}, hashtext(${tenantId}))`.execute(trx);
      await refreshFacetDictionary(trx, tenantId, this.#facets);
      faceted = this.#facets.facetsOf(tenantId, prepared);
    }
    const { facets, newValues, newlyUnfaceted } = faceted;
    const { encode, newCodes } = await this.#numberAttributes(trx, tenantId, prepared);
    const newFields = this.#fields.newFields(tenantId, prepared);
    await storeEntries(trx, tenantId, prepared, facets, encode);
    // Per minute and per hour (the hourly tables answer counts over days).
    for (const rollups of batchRollups(prepared)) {
      await sql`INSERT INTO ${sql.table(rollups.table)} AS r0 (tenant_id, minute, level, service, count)
        SELECT ${tenantId}, r.minute, r.level, r.service, r.count
        FROM json_to_recordset(${JSON.stringify(rollups.rows)}::json) AS r(minute bigint, level text, service text, count bigint)
        ON CONFLICT (tenant_id, minute, level, service) DO UPDATE SET count = r0.count + excluded.count`.execute(trx);
      await sql`INSERT INTO ${sql.table(rollups.hostTable)} AS r0 (tenant_id, minute, host, count)
        SELECT ${tenantId}, r.minute, r.host, r.count
        FROM json_to_recordset(${JSON.stringify(rollups.hostRows)}::json) AS r(minute bigint, host text, count bigint)
        ON CONFLICT (tenant_id, minute, host) DO UPDATE SET count = r0.count + excluded.count`.execute(trx);
      await sql`INSERT INTO ${sql.table(rollups.indexTable)} AS r0 (tenant_id, minute, idx, count)
        SELECT ${tenantId}, r.minute, r.idx, r.count
        FROM json_to_recordset(${JSON.stringify(rollups.indexRows)}::json) AS r(minute bigint, idx text, count bigint)
        ON CONFLICT (tenant_id, minute, idx) DO UPDATE SET count = r0.count + excluded.count`.execute(trx);
    }
    if (newFields.length > 0) {
      await sql`INSERT INTO log_fields (tenant_id, name, type)
        SELECT ${tenantId}, r.name, r.type FROM json_to_recordset(${JSON.stringify(newFields)}::json) AS r(name text, type text)
        ON CONFLICT (tenant_id, name) DO UPDATE SET type = 'string' WHERE log_fields.type <> excluded.type`.execute(trx);
    }
    await storeFacetDictionary(trx, tenantId, newValues, newlyUnfaceted);
    if (newCodes.length > 0) await storeAttributeCodes(trx, tenantId, newCodes).execute();
    return { newFields, newValues, newlyUnfaceted, newCodes };
  }

  /**
   * The encoder of a batch's attributes (names by the tenant's numbers, attribute-codes.ts) and the
   * numbers it gives. Batches run concurrently here: a batch with a name that has no number yet takes
   * the tenant's lock and numbers it from what the others committed (a number is never given twice).
   */
  async #numberAttributes(
    trx: Kysely<any>,
    tenantId: string,
    entries: readonly PreparedEntry[],
  ): Promise<{ encode: (attributes: PreparedEntry['attributes']) => string; newCodes: AttributeCodeRow[] }> {
    if (this.#codes.countOf(tenantId) === undefined) await this.#codes.sync(trx, tenantId);
    const attributes = entries.map((entry) => entry.attributes);
    let numbered = this.#codes.numbered(tenantId, attributes);
    if (numbered.rows.length > 0) {
      await sql`SELECT pg_advisory_xact_lock(${FACET_LOCK}, hashtext(${tenantId}))`.execute(trx);
      await this.#codes.sync(trx, tenantId);
      numbered = this.#codes.numbered(tenantId, attributes);
    }
    return { encode: numbered.encode, newCodes: numbered.rows };
  }

  async #ensurePartitions(starts: readonly number[]): Promise<void> {
    const missing = starts.filter((start) => !this.#partitions.has(start));
    if (missing.length === 0) return;
    await this.#writeTransaction(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(${PARTITION_LOCK})`.execute(trx);
      for (const start of missing) {
        await createHourPartition(trx, start);
      }
    });
    for (const start of missing) this.#partitions.add(start);
  }

  /**
   * Partitions are shared by all tenants. The cutoff is 00:00 UTC of `before`'s day; the entries
   * before it are hidden from reads first (purging). An hour partition
   * before it that holds another tenant's rows too loses this tenant's rows (a DELETE, in its own
   * transaction). The others leave the table in **one** short transaction (detached and renamed
   * `log_removed_…`), so nothing else waits for more than that catalogue change; then the tenant's
   * rollups of those days go. The detached tables' files are dropped last, one table per transaction;
   * a table that is no longer a partition locks nothing the service uses, so ingestion and searches
   * go on meanwhile (returning the space takes the file system a while: docs/performance-notes.md,
   * "PostgreSQL store"). Tables a stopped run left behind go the same way.
   */
  async removeOlderThan(tenantId: string, before: number): Promise<number> {
    const cutoff = before - mod(before, DAY);
    return this.purging(tenantId, cutoff, () => this.#removeBefore(tenantId, cutoff));
  }

  async #removeBefore(tenantId: string, cutoff: number): Promise<number> {
    const expired = (await this.#attachedPartitions()).filter(({ start }) => start + PARTITION_MS <= cutoff);
    let removed = 0;
    const shared = await partitionsWithOtherTenants(this.db, expired, tenantId);
    // The hours whose rows of the tenant are gone, with the last piece stored before (lastPieceNumber).
    const emptied: EmptiedHour[] = [];
    for (const { name } of shared) {
      removed += await this.db.transaction().execute(async (trx) => {
        await sql`SELECT pg_advisory_xact_lock(${PARTITION_LOCK})`.execute(trx);
        const partition = (await this.#attachedPartitions(trx)).find((attached) => attached.name === name);
        if (partition === undefined) return 0;
        // Batches that add to the hour wait for this transaction (so lastPieceNumber tells theirs apart).
        await sql`LOCK TABLE ${sql.table(name)} IN EXCLUSIVE MODE`.execute(trx);
        const deleted = await deleteTenantBlocks(trx, name, tenantId);
        emptied.push({ start: partition.start, lastPiece: await lastPieceNumber(trx) });
        return deleted;
      });
    }
    removed += await this.db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(${PARTITION_LOCK})`.execute(trx);
      let whole = expired.filter((partition) => !shared.includes(partition));
      let counted = 0;
      if (whole.length > 0) {
        // No batch may add another tenant's row to an hour between the check below and its detachment.
        await sql`LOCK TABLE log_blocks IN ACCESS EXCLUSIVE MODE`.execute(trx);
        const attached = new Set((await this.#attachedPartitions(trx)).map((partition) => partition.name));
        whole = whole.filter((partition) => attached.has(partition.name)); // another process may have removed some
        const last = await lastPieceNumber(trx);
        emptied.push(...whole.map(({ start }) => ({ start, lastPiece: last })));
        for (const { name } of await partitionsWithOtherTenants(trx, whole, tenantId)) {
          counted += await deleteTenantBlocks(trx, name, tenantId);
          whole = whole.filter((partition) => partition.name !== name);
        }
      }
      if (whole.length > 0) {
        // The hours' count from their hourly rollups (written in the entries' own transactions, so
        // exact): counting the rows read every hour.
        const { rows } = await sql<{ n: number | string | null }>`SELECT sum(count) AS n FROM log_rollups_hourly
          WHERE tenant_id = ${tenantId} AND minute IN (${sql.join(whole.map(({ start }) => sql`${start}::bigint`))})`.execute(trx);
        counted += Number(rows[0]?.n ?? 0);
        for (const { name, start } of whole) {
          await sql`ALTER TABLE log_blocks DETACH PARTITION ${sql.table(name)}`.execute(trx);
          await sql`ALTER TABLE ${sql.table(name)} RENAME TO ${sql.table(`${REMOVED_PREFIX}${name.slice('log_blocks_'.length)}_${Date.now()}`)}`.execute(
            trx,
          );
          this.#partitions.delete(start);
        }
      }
      return counted;
    });
    // Their postings, outside the locks (a day is about 500,000 rows at 10M entries): hidden by the
    // floor until then, and a batch stored in those hours since keeps its own (its batch is later).
    for (const hour of emptied) await removePostings(this.db, tenantId, hour);
    // The counts of those days after the entries, as on SQLite, and outside the lock: a day of
    // per-minute rollups is about 200,000 rows to delete.
    await this.db.transaction().execute(async (trx) => {
      for (const rollups of ROLLUP_TABLE_NAMES) {
        await sql`DELETE FROM ${sql.table(rollups)} WHERE tenant_id = ${tenantId} AND minute < ${cutoff}::bigint`.execute(trx);
      }
    });
    await this.#dropRemovedPartitions();
    return removed;
  }

  /** The hour partitions of log_blocks with their first millisecond. */
  async #attachedPartitions(db: Kysely<any> = this.db): Promise<Partition[]> {
    const { rows } = await sql<{ name: string }>`SELECT c.relname AS name FROM pg_inherits i
      JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'log_blocks'::regclass`.execute(db);
    return rows.flatMap(({ name }) => {
      const start = hourOfPartition('log_blocks', name);
      return start === null ? [] : [{ name, start }];
    });
  }

  /** Drops the tables retention detached (this run's, and any a stopped run left), one per transaction. */
  async #dropRemovedPartitions(): Promise<void> {
    const { rows } = await sql<{ name: string }>`SELECT relname AS name FROM pg_class
      WHERE relkind = 'r' AND left(relname, ${REMOVED_PREFIX.length}) = ${REMOVED_PREFIX}`.execute(this.db);
    for (const { name } of rows) await sql`DROP TABLE IF EXISTS ${sql.table(name)}`.execute(this.db);
  }

  protected async planWhere(tenantId: string, from: number, end: number, condition: Condition): Promise<PostgresPlan> {
    // The tenant's count of attribute numbers beside its facets (a cache with as many is right).
    const patterned = hasFieldPatterns(condition);
    const [facets, { rows }] = await Promise.all([
      patterned ? null : readFacetLookup(this.reads, tenantId, condition),
      sql<{ codes: string }>`SELECT count(*)::text AS codes FROM log_attribute_codes WHERE tenant_id = ${tenantId}`.execute(this.reads),
    ]);
    await this.#codes.sync(this.reads, tenantId, Number(rows[0]?.codes ?? 0));
    // A field-name pattern names fields once the tenant's attribute names are known, then its facets are read.
    if (patterned) condition = expandFieldPatterns(condition, knownFields(this.#codes.namesOf(tenantId)));
    return this.#planOf(tenantId, from, end, condition, facets ?? (await readFacetLookup(this.reads, tenantId, condition)));
  }

  #planOf(tenantId: string, from: number, end: number, condition: Condition, facets: FacetLookup): PostgresPlan {
    const keyOf = (name: string) => this.#codes.keyOf(tenantId, name);
    return {
      where: sql`l.tenant_id = ${tenantId} AND l.ts >= ${from}::bigint AND l.ts < ${end}::bigint AND (${compilePostgres(condition, keyOf)})`,
      fields: postgresFields(keyOf),
      entries: (found) => this.#codes.entries(this.reads, tenantId, found),
      tenantId,
      from,
      end,
      postings: postingsPlan(condition, facets),
    };
  }

  /** Counted from the postings where they tell (#postingsCounts), up to the bound as rows are. */
  protected override async countMatches(plan: PostgresPlan, bound: number | undefined): Promise<BoundedTotal> {
    const counts = await this.#postingsCounts(plan, null, bound);
    if (counts === null) return super.countMatches(plan, bound);
    return boundedTotal(
      counts.reduce((sum, row) => sum + row.count, 0),
      bound,
    );
  }

  protected override readonly countsByValueInIndex = true;

  protected override async indexBuckets(plan: PostgresPlan, intervalMs: number | null): Promise<BucketCount[] | null> {
    return this.#postingsCounts(plan, intervalMs);
  }

  protected override async countBuckets(plan: PostgresPlan, intervalMs: number, groupField: FieldRef | null): Promise<BucketCount[]> {
    const counts = groupField === null ? await this.#postingsCounts(plan, intervalMs) : null;
    return counts ?? super.countBuckets(plan, intervalMs, groupField);
  }

  /**
   * In one pass over the postings (postingsCountsByValue) when they count the plan and the column is
   * faceted: each match counted under the facet its entry has.
   */
  protected override async indexCountsByValue(
    ask: ValueCountsAsked,
    plan: PostgresPlan,
  ): Promise<{ all: BucketCount[]; byValue: BucketCount[][] } | null> {
    if (!plan.postings?.exactByPairs) return super.indexCountsByValue(ask, plan);
    const equalities: Condition[] = ask.values.map((value) => ({ kind: 'equals', field: { kind: 'column', column: ask.column }, value }));
    const facets = await readFacetLookup(this.reads, plan.tenantId, { kind: 'or', children: equalities });
    const tokens = equalities.map((equality) => postingsPlan(equality, facets)?.expr);
    if (!tokens.every((expr) => expr?.kind === 'token')) return super.indexCountsByValue(ask, plan);
    const found = await postingsCountsByValue(
      this.reads,
      plan.tenantId,
      plan.from,
      plan.end,
      plan.postings.expr,
      tokens.map((expr) => (expr as { token: string }).token),
      ask.intervalMs,
      ROWS_AT_MOST,
    );
    if (found === null) return null;
    // A value's candidates are of that value: checked on the rows with the plan's condition alone.
    const all = await this.#withCandidates(plan, found.all, ask.intervalMs);
    const byValue: BucketCount[][] = [];
    for (const counts of found.byValue) byValue.push((await this.#withCandidates(plan, counts, ask.intervalMs))!);
    return all === null ? null : { all, byValue };
  }

  /**
   * Counts from the postings: of an exact plan, from them alone; of one exact by pairs (a phrase of
   * two words), the matches they tell and the candidates' rows, each checked. Null for the rest, which
   * the core counts on the rows rowsOf gives: for candidates, the rows at their times, each checked.
   */
  async #postingsCounts(plan: PostgresPlan, intervalMs: number | null, stopAbove = Infinity): Promise<BucketCount[] | null> {
    if (plan.postings === null || !plan.postings.exactByPairs) return null;
    const found = await postingsCounts(
      this.reads,
      plan.tenantId,
      plan.from,
      plan.end,
      plan.postings.expr,
      intervalMs,
      stopAbove,
      ROWS_AT_MOST,
    );
    return this.#withCandidates(plan, found, intervalMs);
  }

  /** What the postings counted of a plan, with its candidates checked on their rows and added; null stays null. */
  async #withCandidates(plan: PostgresPlan, found: PostingsCounts | null, intervalMs: number | null): Promise<BucketCount[] | null> {
    if (found === null || found.candidates.length === 0) return found?.counts ?? null;
    const candidates: PostgresPlan = { ...plan };
    this.#hits.set(candidates, Promise.resolve(found.candidates));
    const checked =
      intervalMs === null
        ? [{ bucket: 0, group: null, count: await this.countRows(candidates, undefined) }]
        : await super.countBuckets(candidates, intervalMs, null);
    const counts = new Map<number, number>();
    for (const { bucket, count } of [...found.counts, ...checked]) counts.set(bucket, (counts.get(bucket) ?? 0) + count);
    return [...counts].map(([bucket, count]) => ({ bucket, group: null, count }));
  }

  /**
   * The entries a plan's condition is checked on (`l`): with postings, those they found (every read
   * but pages and counts, which read them a part at a time); with too many (candidateHits), or
   * without postings, every entry of the range's blocks. Of the columns the condition and `reads`
   * name only: every array unnested is decompressed.
   */
  protected override async rowsOf(plan: PostgresPlan, reads: RawBuilder<unknown>): Promise<RawBuilder<unknown>> {
    const hits = plan.postings === null ? null : await this.#hitsOf(plan, plan.postings);
    const columns = columnsRead(sql`${plan.where} ${reads}`, this.reads);
    return hits === null ? entriesInRange(plan.tenantId, plan.from, plan.end, columns) : entriesAt(plan.tenantId, hits, columns);
  }

  /** candidateHits of a plan, read once per plan (a search sorted by a field asks rowsOf for its count and its page). */
  #hitsOf(plan: PostgresPlan, postings: PostingsPlan): Promise<Hit[] | null> {
    let hits = this.#hits.get(plan);
    if (hits === undefined) {
      hits = candidateHits(this.reads, plan.tenantId, plan.from, plan.end, postings.expr, ROWS_AT_MOST);
      this.#hits.set(plan, hits);
    }
    return hits;
  }

  /**
   * Newest (or oldest) first. With postings: the first matches (matchHits), each checked; candidates
   * that do not match, and matches before a search_after cursor in its millisecond, leave the page
   * short, and four times as many more are read. Without: the range's blocks nearest its end (or
   * start) first, a few at a time (#walkBlocks).
   */
  protected override async timePage(plan: PostgresPlan, page: TimePage): Promise<StoredLogEntry[]> {
    const skip = page.after ? 0 : page.offset;
    const wanted = skip + page.limit;
    let [lo, hi] = [plan.from, plan.end];
    if (page.after) {
      if (page.order === 'desc') hi = Math.min(hi, page.after.timestamp + 1);
      else lo = Math.max(lo, page.after.timestamp);
    }
    if (plan.postings === null) {
      const found = await this.#walkBlocks(plan, page, lo, hi, wanted);
      return found.length === 0
        ? []
        : (await this.timeSorted(plan, plan.where, page, wanted, 0, entriesAt(plan.tenantId, found))).slice(skip, wanted);
    }
    const found: StoredLogEntry[] = [];
    const hits = new HitsTaken(matchHits(this.reads, plan.tenantId, lo, hi, plan.postings.expr, page.order));
    try {
      for (let want = Math.min(wanted, HITS_PER_STATEMENT); found.length < wanted; want = Math.min(4 * want, HITS_PER_STATEMENT)) {
        const chunk = await hits.take(want);
        if (chunk.length === 0) break;
        found.push(...(await this.timeSorted(plan, plan.where, page, wanted - found.length, 0, entriesAt(plan.tenantId, chunk))));
      }
    } finally {
      await hits.close();
    }
    return found.slice(skip, wanted);
  }

  /**
   * The first `wanted` entries of [lo, hi) in the page's order that match, without postings: the
   * range's blocks an hour at a time, nearest its end (start) first, and in an hour those that reach
   * nearest first, 4, 8, 16… at a time; an entry found is final once no unread block reaches as near.
   * The walk reads the columns the condition needs; the caller reads what else it needs of the entries found.
   */
  async #walkBlocks(plan: PostgresPlan, page: TimePage, lo: number, hi: number, wanted: number): Promise<Hit[]> {
    const descending = page.order === 'desc';
    const edgeOf = (block: BlockSpan): number => (descending ? block.last_ts : block.first_ts);
    const nearer = (a: number, b: number): number => (descending ? b - a : a - b); // < 0: a is nearer
    const byTime = (a: Hit, b: Hit): number => nearer(a.ts, b.ts) || (descending ? b.id - a.id : a.id - b.id);
    const where = this.pastCursor(sql`${plan.where} AND l.ts >= ${lo}::bigint AND l.ts < ${hi}::bigint`, page);
    const columns = columnsRead(where, this.reads);
    let found: Hit[] = [];
    walk: for (let hour: number | null = null; found.length < wanted;) {
      const next = await nextHourOfBlocks(this.reads, plan.tenantId, lo, hi, hour, page.order);
      if (next === null) break;
      hour = next.hour;
      const blocks = next.blocks.sort((a, b) => nearer(edgeOf(a), edgeOf(b)));
      for (let start = 0, size = 4; start < blocks.length; start += size, size *= 2) {
        const chunk = blocks.slice(start, start + size);
        const firstTimes = chunk.map((block) => block.first_ts);
        const read = entriesOfBlocks(
          plan.tenantId,
          chunk.map((block) => block.first_id),
          Math.min(...firstTimes),
          Math.max(...firstTimes),
          columns,
        );
        const { rows } = await sql<Hit>`SELECT l.id, l.ts FROM ${read} l WHERE ${where}
          ORDER BY l.ts ${descending ? sql`DESC` : sql`ASC`}, l.id ${descending ? sql`DESC` : sql`ASC`} LIMIT ${wanted}`.execute(
          this.reads,
        );
        found = [...found, ...rows.map((row) => ({ id: Number(row.id), ts: Number(row.ts) }))].sort(byTime).slice(0, wanted);
        const unread = blocks[start + size];
        if (unread !== undefined && found.length === wanted && nearer(found.at(-1)!.ts, edgeOf(unread)) < 0) break walk;
      }
    }
    return found;
  }

  /**
   * The newest `n` matches as the hits of their entries (read of the columns `reads` names): found
   * as a page newest first finds them (timePage), their entries not read whole.
   */
  protected override async newestMatches(plan: PostgresPlan, n: number, reads: RawBuilder<unknown>): Promise<NewestMatches> {
    const hits = await this.#newestHits(plan, n + 1);
    return {
      rows: entriesAt(plan.tenantId, hits.slice(0, n), columnsRead(reads, this.reads)),
      where: sql`TRUE`,
      more: hits.length > n,
    };
  }

  /** The newest `n` matches (ties by id), newest first: from exact postings alone; else their candidates checked on the rows. */
  async #newestHits(plan: PostgresPlan, n: number): Promise<Hit[]> {
    const page: TimePage = { order: 'desc', offset: 0, limit: n, after: undefined };
    if (plan.postings === null) return this.#walkBlocks(plan, page, plan.from, plan.end, n);
    const { exact } = plan.postings;
    const columns = columnsRead(plan.where, this.reads);
    const found: Hit[] = [];
    const hits = new HitsTaken(matchHits(this.reads, plan.tenantId, plan.from, plan.end, plan.postings.expr, 'desc'));
    try {
      for (let want = Math.min(n, HITS_PER_STATEMENT); found.length < n; want = Math.min(4 * want, HITS_PER_STATEMENT)) {
        const chunk = await hits.take(want);
        if (chunk.length === 0) break;
        if (exact) {
          // A chunk holds every hit of its last time: sorted, its first ones are the newest.
          found.push(...chunk.sort(newestFirst).slice(0, n - found.length));
          continue;
        }
        const { rows } = await sql<{ id: string; ts: string }>`SELECT l.id, l.ts FROM ${entriesAt(plan.tenantId, chunk, columns)} l
          WHERE ${plan.where} ORDER BY l.ts DESC, l.id DESC LIMIT ${n - found.length}`.execute(this.reads);
        found.push(...rows.map((row) => ({ id: Number(row.id), ts: Number(row.ts) })));
      }
    } finally {
      await hits.close();
    }
    return found;
  }
}

const newestFirst = (a: Hit, b: Hit): number => b.ts - a.ts || b.id - a.id;

/** Hits per statement that reads their entries (a bigint[] parameter). */
const HITS_PER_STATEMENT = 20_000;
/** Matches (or candidates) whose blocks are read by id, at most (candidateHits): past it, the range's blocks. */
const ROWS_AT_MOST = 200_000;

/** Hits from matchHits, at least `n` at a time (and every one of the last one's time), in its order. */
class HitsTaken {
  #buffer: Hit[] = [];
  #at = 0;
  constructor(private readonly source: AsyncGenerator<Hit[]>) {}

  async take(n: number): Promise<Hit[]> {
    const taken: Hit[] = [];
    for (;;) {
      if (this.#at === this.#buffer.length) {
        if (taken.length >= n) break;
        const next = await this.source.next();
        if (next.done) break;
        [this.#buffer, this.#at] = [next.value, 0];
        continue;
      }
      const hit = this.#buffer[this.#at]!;
      // A time's hits all come in one chunk of the source (matchHits): the page needs all of them.
      if (taken.length >= n && hit.ts !== taken.at(-1)!.ts) break;
      taken.push(hit);
      this.#at += 1;
    }
    return taken;
  }

  async close(): Promise<void> {
    await this.source.return(undefined);
  }
}
