import { sql, type Kysely } from 'kysely';
import { readFacetLookup } from '../facet-dictionary.js';
import { expandFieldPatterns, hasFieldPatterns, knownFields } from '../../query/condition.js';
import type { FieldRef } from '../../query/fields.js';
import type {
  AggregateRequest,
  AppendOptions,
  AppendResult,
  DistinctRequest,
  FieldStatsRequest,
  GroupCountsRequest,
  HistogramRequest,
  LogEntry,
  NumericValuesRequest,
  SearchRequest,
  StoredLogEntry,
  TopMessagesRequest,
} from '../log-store.js';
import { DAY, mod } from '../minutes.js';
import type { Condition } from '../../query/condition.js';
import { compileSqlite, indexQuery, sqliteFields } from '../condition-sql/compile-sqlite.js';
import {
  LogStoreCore,
  type BucketCount,
  type NewestMatches,
  type DocumentIdWindow,
  type ReadDialect,
  type TimePage,
} from '../store-core.js';
import { FtsHours, hourOfId } from './fts-hours.js';
import { SqliteReads, type SqlitePlan } from './sqlite-reads.js';
import { removeBefore } from './sqlite-retention.js';
import { SQLITE_ENTRY_COLUMNS } from './sqlite-rows.js';
import { appendBatch, writerCaches, type WriterCaches } from './sqlite-writes.js';
import { idWindow } from './time-ids.js';

/** SQLite's reads: bound values as they are, instr for substrings. */
const sqliteReads: ReadDialect = {
  int: (value) => sql`${value}`,
  text: (value) => sql`${value}`,
  sumOfCounts: sql`sum(count)`,
  entryColumns: SQLITE_ENTRY_COLUMNS,
  containsIgnoringCase: (value, needle) => sql`instr(lower(${value}), ${needle.toLowerCase()}) > 0`,
  fieldNameOrder: sql`name`,
  calendarStart: (unit) => {
    const day = sql`date(l.ts / 1000, 'unixepoch')`;
    const start =
      unit === 'week'
        ? sql`date(l.ts / 1000, 'unixepoch', '-6 days', 'weekday 1')`
        : unit === 'month'
          ? sql`date(${day}, 'start of month')`
          : unit === 'year'
            ? sql`date(${day}, 'start of year')`
            : sql`date(${day}, 'start of month', printf('-%d months', (CAST(strftime('%m', ${day}) AS INTEGER) - 1) % 3))`;
    return sql`(CAST(strftime('%s', ${start}) AS INTEGER) * 1000)`;
  },
};

/**
 * The SQLite log store (docs/log-store.md): entries keyed by time-ordered ids (time-ids.ts), per
 * tenant and hour a contentless FTS5 table of their words and facets (fts-hours.ts, facets.ts) under
 * the same ids, per-minute rollups by level and service and by host, and a field catalogue. Here: the
 * plan of a read; the writes are sqlite-writes.ts, retention sqlite-retention.ts, the reads the index
 * answers sqlite-reads.ts.
 */
export class SqliteLogStore extends LogStoreCore<SqlitePlan> {
  readonly #caches: WriterCaches = writerCaches();
  /** The reads that time-ordered ids and the index answer without LogStoreCore's SQL. */
  readonly #idReads: SqliteReads;

  constructor(
    private readonly db: Kysely<any>,
    options: { reads?: Kysely<any> | undefined; documentIds?: DocumentIdWindow | undefined } = {},
  ) {
    super(db, options.reads ?? db, sqliteReads, options.documentIds);
    this.#idReads = new SqliteReads(this.reads);
  }

  // A read lists the tenant's hour tables, then reads them in later statements; retention may drop
  // one in between (reads are not one snapshot: the read pool runs each statement on its own). The
  // read is then planned again, without the dropped hour.
  override search(request: SearchRequest) {
    return readAgainIfIndexDropped(() => super.search(request));
  }
  override histogram(request: HistogramRequest) {
    return readAgainIfIndexDropped(() => super.histogram(request));
  }
  override distinct(request: DistinctRequest) {
    return readAgainIfIndexDropped(() => super.distinct(request));
  }
  override fieldStats(request: FieldStatsRequest) {
    return readAgainIfIndexDropped(() => super.fieldStats(request));
  }
  override topMessages(request: TopMessagesRequest) {
    return readAgainIfIndexDropped(() => super.topMessages(request));
  }
  override groupCounts(request: GroupCountsRequest) {
    return readAgainIfIndexDropped(() => super.groupCounts(request));
  }
  override aggregate(request: AggregateRequest) {
    return readAgainIfIndexDropped(() => super.aggregate(request));
  }
  override numericValues(request: NumericValuesRequest) {
    return readAgainIfIndexDropped(() => super.numericValues(request));
  }

  append(tenantId: string, entries: readonly LogEntry[], options: AppendOptions = {}): Promise<AppendResult> {
    return appendBatch(this.db, this.#caches, this.documentIds, tenantId, entries, options.prepared);
  }

  /**
   * The tenant's entries before 00:00 UTC of `before`'s day, hidden from reads first (purging).
   * Their index tables (an hour each) and rollups go, then their rows, 5,000 per transaction, so
   * ingestion interleaves with a large purge; last, the index and rollups once more, for an entry
   * older than the cutoff that arrived meanwhile.
   */
  async removeOlderThan(tenantId: string, before: number): Promise<number> {
    const cutoff = before - mod(before, DAY);
    // Its index tables go: the writer asks again whether an hour's table exists.
    return this.purging(tenantId, cutoff, () => removeBefore(this.db, tenantId, cutoff)).finally(() => this.#caches.hours.forget(tenantId));
  }

  /**
   * The plan of a read over [from, end): the ids of the range, whether displaced entries are
   * involved, and the FTS5 query of the tenant's matches when the index answers the condition alone.
   */
  protected async planWhere(tenantId: string, from: number, end: number, condition: Condition): Promise<SqlitePlan | null> {
    if (end <= from) return null;
    const range = idWindow(from, end);
    const { hi } = range;
    const { rows } = await sql<{ hours: string; displaced: string; codes: number }>`SELECT
      (SELECT count(*) FROM log_attribute_codes WHERE tenant_id = ${tenantId}) AS codes,
      (SELECT json_group_array(hour) FROM log_fts_hours WHERE tenant_id = ${tenantId} AND hour BETWEEN ${hourOfId(range.lo)} AND ${hourOfId(hi)}) AS hours,
      (SELECT json_group_array(id) FROM log_displaced WHERE tenant_id = ${tenantId} AND ((ts >= ${from} AND ts < ${end}) OR id BETWEEN ${range.lo} AND ${hi})) AS displaced`.execute(
      this.reads,
    );
    const hours = JSON.parse(rows[0]?.hours ?? '[]') as number[];
    const displacedIds = JSON.parse(rows[0]?.displaced ?? '[]') as number[];
    // No index in the range: the tenant stored nothing there.
    if (hours.length === 0 && displacedIds.length === 0) return null;
    const { lo } = range;
    const displaced = displacedIds.length > 0;
    // A displaced entry's words are in the table of its id's hour, which may lie outside the range.
    const fts = new FtsHours(
      tenantId,
      [...new Set([...hours, ...displacedIds.map(hourOfId)])].sort((a, b) => a - b),
    );
    await this.#caches.codes.sync(this.reads, tenantId, Number(rows[0]?.codes ?? 0));
    if (hasFieldPatterns(condition)) condition = expandFieldPatterns(condition, knownFields(this.#caches.codes.namesOf(tenantId)));
    const facets = await readFacetLookup(this.reads, tenantId, condition);
    const keyOf = (name: string) => this.#caches.codes.keyOf(tenantId, name);
    const ids = displaced
      ? sql`(l.id BETWEEN ${lo} AND ${hi} OR l.id IN (SELECT id FROM log_displaced WHERE tenant_id = ${tenantId} AND ts >= ${from} AND ts < ${end}))`
      : sql`l.id BETWEEN ${lo} AND ${hi}`;
    const [lookupLo, lookupHi] = displaced ? [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER] : [lo, hi];
    const matches = compileSqlite(condition, { matchingIds: (match) => fts.matchingIds(match, lookupLo, lookupHi), facets, keyOf });
    return {
      where: sql`${ids} AND l.tenant_id = ${tenantId} AND l.ts >= ${from} AND l.ts < ${end} AND (${matches})`,
      from,
      end,
      lo,
      hi,
      displaced,
      fts,
      index: displaced ? null : indexQuery(condition, facets),
      fields: sqliteFields(keyOf),
      entries: (found) => this.#caches.codes.entries(this.reads, tenantId, found),
    };
  }

  protected override async countRows(plan: SqlitePlan, bound: number | undefined): Promise<number> {
    return plan.index === null ? super.countRows(plan, bound) : this.#idReads.countRows(plan, plan.index, bound);
  }

  protected override async timePage(plan: SqlitePlan, page: TimePage): Promise<StoredLogEntry[]> {
    return plan.displaced ? super.timePage(plan, page) : this.#idReads.timePage(plan, page);
  }

  /**
   * No more matches than `n` (counted in the index alone, when it answers the plan): every match's
   * row, read in one pass. Else the newest, walked in id order as a page is (SqliteReads.pageRows),
   * then their rows by id.
   */
  protected override async newestMatches(plan: SqlitePlan, n: number): Promise<NewestMatches> {
    let found: { id: number | string }[];
    if (plan.displaced) {
      // Displaced entries' ids are not in time order: sorted by their times.
      ({ rows: found } = await sql<{ id: number | string }>`SELECT l.id FROM log_entries l WHERE ${plan.where}
        ORDER BY l.ts DESC, l.id DESC LIMIT ${n + 1}`.execute(this.reads));
    } else {
      if (plan.index !== null && (await this.#idReads.countRows(plan, plan.index, n)) <= n)
        return { rows: sql`log_entries`, where: plan.where, more: false };
      found = await this.#idReads.pageRows(plan, { order: 'desc', offset: 0, limit: n + 1, after: undefined }, sql`l.id, l.ts`);
    }
    const ids = JSON.stringify(found.slice(0, n).map((row) => Number(row.id)));
    return {
      rows: sql`(SELECT * FROM log_entries WHERE id IN (SELECT value FROM json_each(${ids})))`,
      where: sql`TRUE`,
      more: found.length > n,
    };
  }

  protected override async countBuckets(plan: SqlitePlan, intervalMs: number, groupField: FieldRef | null): Promise<BucketCount[]> {
    const { index } = plan;
    if (index === null || groupField !== null || intervalMs % 1000 !== 0) return super.countBuckets(plan, intervalMs, groupField);
    return this.#idReads.countBuckets(plan, index, intervalMs);
  }
}

/** Runs a read again (a few times at most) when an index table it planned with was dropped meanwhile. */
async function readAgainIfIndexDropped<T>(read: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await read();
    } catch (error) {
      if (attempt >= 3 || !/no such table: log_fts_/.test((error as Error | undefined)?.message ?? '')) throw error;
    }
  }
}
