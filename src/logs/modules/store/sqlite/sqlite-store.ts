import { sql, type CompiledQuery, type Kysely, type RawBuilder } from 'kysely';
import { facetDictionaryWrites, loadFacetDictionary, readFacetLookup } from './facet-dictionary.js';
import { FacetDictionary, type FacetDictionaryRow } from './facets.js';
import { FtsHours, ftsTableName, hourOfId, type HourSlice } from './fts-hours.js';
import type {
  AggregateRequest,
  AppendResult,
  DistinctRequest,
  GroupCountsRequest,
  HistogramRequest,
  LogEntry,
  NumericValuesRequest,
  SearchRequest,
  StoredLogEntry,
  TopMessagesRequest,
} from './log-store.js';
import { DAY, mod } from './minutes.js';
import type { Condition } from './query/condition.js';
import { compileSqlite, indexQuery, sqliteFields } from './query/compile-sqlite.js';
import {
  LogStoreCore,
  type BucketCount,
  type DocumentIdWindow,
  type EntryRow,
  type ReadDialect,
  type ReadPlan,
  type TimePage,
} from './store-core.js';
import { assignIds, clampSecond, firstIdOf, idSecond, idWindow, IDS_PER_SECOND, lastIdOf, secondOf } from './time-ids.js';
import { rowInserts, rowWidth } from './sqlite-insert.js';
import { AttributeCodes, storeAttributeCodes, type AttributeCodeRow } from './attribute-codes.js';
import {
  ATTRIBUTES_VALUE,
  ENTRY_INSERT_COLUMNS,
  ID_VALUE,
  isHexId,
  levelCode,
  SQLITE_ENTRY_COLUMNS,
  TS_OFFSET_VALUE,
} from './sqlite-rows.js';
import { runInOrder, type RowsStatement } from '../../../shared/db/sqlite-thread.js';
import { packValues, setPackedNumber, type PackedValues } from '../../../shared/db/packed-values.js';
import { mapInParallel } from '../../../shared/map-in-parallel.js';
import { ftsBody } from './tokenize.js';
import {
  batchRollups,
  documentIdsOf,
  FieldCatalogueCache,
  nextTurn,
  PREPARE_CHUNK,
  prepareEntriesInTurns,
  ROLLUP_TABLE_NAMES,
  splitByDocumentId,
  type BatchRollups,
  type PreparedEntry,
} from './write-batch.js';
import type { FieldRef } from './fields.js';

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

/** Rows deleted per retention transaction, so ingestion is never blocked for long. */
const RETENTION_BATCH = 5_000;

/**
 * A read over [from, end) on SQLite. `index`: the FTS5 query that finds exactly the matches in the
 * tenant's index among the ids of [lo, hi] (all of them but the first and last seconds' entries
 * outside the range), when the index answers the condition alone and no displaced entry is involved;
 * reads then count, page and bucket from the index without touching rows.
 */
interface SqlitePlan extends ReadPlan {
  /** The tenant's hour tables of the full-text index that the read touches. */
  fts: FtsHours;
  from: number;
  end: number;
  lo: number;
  hi: number;
  index: string | null;
  /** Entries with ids outside their second's block (time-ids.ts) may match: no walk in id order. */
  displaced: boolean;
}

/**
 * The SQLite log store (docs/log-store.md): entries keyed by time-ordered ids (time-ids.ts), per
 * tenant and hour a contentless FTS5 table of their words and facets (fts-hours.ts, facets.ts) under
 * the same ids, per-minute rollups by level and service and by host, and a field catalogue.
 */
export class SqliteLogStore extends LogStoreCore<SqlitePlan> {
  readonly #fields = new FieldCatalogueCache();
  readonly #facets = new FacetDictionary();
  readonly #codes = new AttributeCodes();

  constructor(
    private readonly db: Kysely<any>,
    options: { reads?: Kysely<any> | undefined; documentIds?: DocumentIdWindow | undefined } = {},
  ) {
    super(db, options.reads ?? db, sqliteReads, options.documentIds);
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

  async append(tenantId: string, entries: readonly LogEntry[]): Promise<AppendResult> {
    if (entries.length === 0) return { duplicates: [] };
    const ids = documentIdsOf(entries);
    const caches = { fields: this.#fields, facets: this.#facets, codes: this.#codes };
    // Before the writer is ours: while another batch's statements run on the SQLite thread.
    const ready = await prepareBatch(tenantId, entries, caches);
    let duplicates: number[] = [];
    let written: Written | undefined;
    // One IMMEDIATE transaction per batch: the write lock is taken up front (no deadlock on upgrade),
    // and with WAL + synchronous=FULL the COMMIT returns only once the batch is on disk.
    await this.#inWriteTransaction(
      async ({ connection, opened, commitWith }) => {
        let batch = ready;
        if (ids.length > 0) {
          // Under the write lock: no other batch can store one of these ids meanwhile.
          const now = this.documentIds.now();
          const { rows: known } = await sql<{ doc_id: string }>`SELECT doc_id FROM log_document_ids
          WHERE tenant_id = ${tenantId} AND expires_at > ${now} AND doc_id IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`.execute(
            connection,
          );
          const split = splitByDocumentId(entries, new Set(known.map((row) => row.doc_id)));
          duplicates = split.duplicates;
          batch = await withoutPlaces(ready, new Set(duplicates), caches);
          await sql`INSERT INTO log_document_ids (tenant_id, doc_id, expires_at)
          SELECT ${tenantId}, value, ${now + this.documentIds.windowMs} FROM json_each(${JSON.stringify(split.newIds)}) WHERE true
          ON CONFLICT (tenant_id, doc_id) DO UPDATE SET expires_at = excluded.expires_at`.execute(connection);
        }
        if (batch.entries.length > 0) written = await writePrepared(connection, batch, caches, opened[0] as BatchState, commitWith);
      },
      () => {
        // Still holding the writer: the next batch sees what this one added to the caches.
        if (!written) return;
        this.#fields.remember(tenantId, written.newFields);
        this.#codes.remember(tenantId, written.newCodes);
        this.#facets.remember(tenantId, written.newValues, written.newlyUnfaceted);
      },
      // Read with the BEGIN, in one message: for the batch as prepared, which holds every second and
      // hour of what is written (fewer when repeated document ids leave the batch).
      batchStateQuery(tenantId, ready.entries).compile(this.db),
    );
    return { duplicates };
  }

  /**
   * The tenant's entries before 00:00 UTC of `before`'s day, hidden from reads first (purging).
   * Their index tables (an hour each) and rollups go, then their rows, 5,000 per transaction, so
   * ingestion interleaves with a large purge; last, the index and rollups once more, for an entry
   * older than the cutoff that arrived meanwhile.
   */
  async removeOlderThan(tenantId: string, before: number): Promise<number> {
    const cutoff = before - mod(before, DAY);
    return this.purging(tenantId, cutoff, () => this.#removeBefore(tenantId, cutoff));
  }

  async #removeBefore(tenantId: string, cutoff: number): Promise<number> {
    const { hi } = idWindow(Number.MIN_SAFE_INTEGER, cutoff);
    await this.#removeIndexAndCounts(tenantId, cutoff, hi);
    let removed = 0;
    // Time-ordered ids: the tenant's entries before the cutoff are its ids up to `hi`, deleted a range
    // of 5,000 at a time from where the last range ended (a range is one walk over adjacent pages; the
    // same entries deleted id by id cost twice as long).
    let lo = Number.MIN_SAFE_INTEGER;
    for (;;) {
      const batch = await this.#inWriteTransaction(async ({ connection }) => {
        const { rows } = await sql<{ upTo: number | null; n: number }>`SELECT max(id) AS upTo, count(*) AS n FROM
          (SELECT id FROM log_entries WHERE id BETWEEN ${lo} AND ${hi} AND tenant_id = ${tenantId} AND ts < ${cutoff}
            ORDER BY id LIMIT ${RETENTION_BATCH})`.execute(connection);
        const { upTo, n } = rows[0]!;
        if (upTo === null) return 0;
        await sql`DELETE FROM log_entries WHERE id BETWEEN ${lo} AND ${upTo} AND tenant_id = ${tenantId} AND ts < ${cutoff}`.execute(
          connection,
        );
        lo = Number(upTo) + 1;
        return Number(n);
      });
      removed += batch;
      if (batch === 0) break;
      // Let waiting writes take the connection between batches: without it the next batch took the
      // lock first every time, and ingestion waited for the whole purge (measured: 36 s at 10M).
      await nextTurn();
    }
    // Displaced entries (time-ids.ts) before the cutoff, wherever their ids are.
    for (;;) {
      const batch = await this.#inWriteTransaction(async ({ connection }) => {
        const { rows } = await sql<{ id: number }>`SELECT id FROM log_displaced WHERE tenant_id = ${tenantId} AND ts < ${cutoff}
          LIMIT ${RETENTION_BATCH}`.execute(connection);
        if (rows.length === 0) return 0;
        const ids = JSON.stringify(rows.map((row) => row.id));
        const result = await sql`DELETE FROM log_entries WHERE id IN (SELECT value FROM json_each(${ids}))`.execute(connection);
        await sql`DELETE FROM log_displaced WHERE id IN (SELECT value FROM json_each(${ids}))`.execute(connection);
        removed += Number(result.numAffectedRows ?? 0);
        return rows.length;
      });
      if (batch === 0) break;
      await nextTurn();
    }
    await this.#removeIndexAndCounts(tenantId, cutoff, hi);
    return removed;
  }

  /**
   * The tenant's index tables of whole hours of ids up to `hi` (one transaction each; a displaced
   * entry's hour may be later, it stays) and its rollups before the cutoff.
   */
  async #removeIndexAndCounts(tenantId: string, cutoff: number, hi: number): Promise<void> {
    const { rows: hours } = await sql<{ hour: number }>`SELECT hour FROM log_fts_hours
      WHERE tenant_id = ${tenantId} AND hour < ${hourOfId(hi + 1)}`.execute(this.db);
    for (const { hour } of hours) {
      await this.#inWriteTransaction(async ({ connection }) => {
        await sql`DROP TABLE IF EXISTS ${sql.table(ftsTableName(tenantId, hour))}`.execute(connection);
        await sql`DELETE FROM log_fts_hours WHERE tenant_id = ${tenantId} AND hour = ${hour}`.execute(connection);
      });
      await nextTurn();
    }
    await this.#inWriteTransaction(async ({ connection }) => {
      for (const table of ROLLUP_TABLE_NAMES) {
        await sql`DELETE FROM ${sql.table(table)} WHERE tenant_id = ${tenantId} AND minute < ${cutoff}`.execute(connection);
      }
    });
  }

  /**
   * Runs `work` in an IMMEDIATE transaction on the writer's connection; `committed` before another may
   * start. Each message to the SQLite thread is a hop that the batch after this one waits behind, so
   * the `opening` query (if any) goes with the BEGIN, and `work` may end with its writes and the COMMIT
   * in one list (WriteTransaction).
   */
  async #inWriteTransaction<T>(
    work: (transaction: WriteTransaction) => Promise<T>,
    committed?: () => void,
    opening?: CompiledQuery,
  ): Promise<T> {
    return this.db.connection().execute(async (connection) => {
      let open = true;
      const commitWith = async (writes: readonly (CompiledQuery | RowsStatement)[]): Promise<void> => {
        await runInOrder(connection, [...writes, sql`COMMIT`.compile(connection)]);
        open = false;
      };
      try {
        const opened = await runInOrder(connection, [sql`BEGIN IMMEDIATE`.compile(connection), ...(opening ? [opening] : [])]);
        const result = await work({ connection, opened, commitWith });
        if (open) await sql`COMMIT`.execute(connection);
        committed?.();
        return result;
      } catch (error) {
        await sql`ROLLBACK`.execute(connection).catch(() => undefined);
        throw error;
      }
    });
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
    const facets = await readFacetLookup(this.reads, tenantId, condition);
    await this.#codes.sync(this.reads, tenantId, Number(rows[0]?.codes ?? 0));
    const keyOf = (name: string) => this.#codes.keyOf(tenantId, name);
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
      entries: (found) => this.#codes.entries(this.reads, tenantId, found),
    };
  }

  /** With the index: whole seconds counted in FTS5 alone, the ragged first and last seconds on their rows. */
  protected override async countRows(plan: SqlitePlan, bound: number | undefined): Promise<number> {
    const { index } = plan;
    if (index === null) return super.countRows(plan, bound);
    const split = splitBySecond(plan);
    let total = 0;
    for (const edge of split.edges) total += (await this.#rowsOf(plan, edge.lo, edge.hi, 'desc', undefined)).rows.length;
    if (split.whole) {
      const limit = bound === undefined ? -1 : Math.max(0, bound + 1 - total);
      const { rows } = await sql<{ n: number }>`SELECT count(*) AS n FROM
        (${plan.fts.matchingIds(index, split.whole.lo, split.whole.hi)} LIMIT ${limit})`.execute(this.reads);
      total += Number(rows[0]?.n ?? 0);
    }
    return total;
  }

  /**
   * Walks the range in id order, a chunk at a time, always to the end of a second (within a second,
   * ids follow arrival, not time), and sorts each chunk by time: the first `offset + limit` matches
   * in time order without sorting every match.
   */
  protected override async timePage(plan: SqlitePlan, page: TimePage): Promise<StoredLogEntry[]> {
    if (plan.displaced) return super.timePage(plan, page);
    const descending = page.order === 'desc';
    let { lo, hi } = plan;
    if (page.after) {
      const second = idSecondOf(page.after.timestamp);
      if (descending) hi = Math.min(hi, lastIdOf(second));
      else lo = Math.max(lo, firstIdOf(second));
    }
    const beyond = (row: EntryRow): boolean => {
      const after = page.after;
      if (!after) return true;
      const [ts, id] = [Number(row.ts), Number(row.id)];
      return descending
        ? ts < after.timestamp || (ts === after.timestamp && id < after.id)
        : ts > after.timestamp || (ts === after.timestamp && id > after.id);
    };
    const wanted = (page.after ? 0 : page.offset) + page.limit;
    const found: EntryRow[] = [];
    while (found.length < wanted && lo <= hi) {
      const chunk = await this.#chunk(plan, lo, hi, page.order, wanted - found.length);
      if (chunk === null) break;
      found.push(...chunk.rows.filter(beyond).sort(descending ? newestFirst : oldestFirst));
      if (descending) hi = chunk.next;
      else lo = chunk.next;
    }
    return plan.entries(found.slice(page.after ? 0 : page.offset, wanted));
  }

  /**
   * At least `count` matching rows in id order from [lo, hi] (fewer at the end), to the end of the
   * last second they reach, and where to go on from; null when no id of [lo, hi] matches.
   */
  async #chunk(
    plan: SqlitePlan,
    lo: number,
    hi: number,
    order: 'asc' | 'desc',
    count: number,
  ): Promise<{ rows: EntryRow[]; next: number } | null> {
    const descending = order === 'desc';
    const first = await this.#rowsOf(plan, lo, hi, order, count);
    if (first.lastId === null) return null;
    const second = idSecond(first.lastId);
    // The rest of the last second: its entries are in arrival order, so all of them are sorted together.
    const [restLo, restHi] = descending
      ? [Math.max(lo, firstIdOf(second)), first.lastId - 1]
      : [first.lastId + 1, Math.min(hi, lastIdOf(second))];
    const rest = restLo > restHi ? [] : (await this.#rowsOf(plan, restLo, restHi, order, undefined)).rows;
    return { rows: [...first.rows, ...rest], next: descending ? firstIdOf(second) - 1 : lastIdOf(second) + 1 };
  }

  /**
   * Matching rows among ids [lo, hi] in id order, at most `limit` ids looked at, and the last id looked
   * at (null: none). From the index when the plan has one (rows outside the time range left out), else
   * checked on the rows.
   */
  async #rowsOf(plan: SqlitePlan, lo: number, hi: number, order: 'asc' | 'desc', limit: number | undefined) {
    const direction = order === 'asc' ? sql`ASC` : sql`DESC`;
    const inRange = (row: EntryRow) => Number(row.ts) >= plan.from && Number(row.ts) < plan.end;
    if (plan.index === null) {
      const { rows } =
        await sql<EntryRow>`SELECT ${SQLITE_ENTRY_COLUMNS} FROM log_entries l WHERE ${plan.where} AND l.id BETWEEN ${lo} AND ${hi}
        ORDER BY l.id ${direction} LIMIT ${limit ?? -1}`.execute(this.reads);
      return { rows, lastId: rows.length > 0 ? Number(rows.at(-1)!.id) : null };
    }
    // Hour by hour in the walk's order, until `limit` ids were looked at.
    const found: EntryRow[] = [];
    let seen = 0;
    let lastId: number | null = null;
    for (const slice of plan.fts.slices(lo, hi, order)) {
      const table = sql.table(slice.table);
      const { rows } = await sql<EntryRow>`SELECT ${SQLITE_ENTRY_COLUMNS} FROM (SELECT rowid AS id FROM ${table}
          WHERE ${table} MATCH ${plan.index} AND rowid BETWEEN ${slice.lo} AND ${slice.hi} ORDER BY rowid ${direction}
          LIMIT ${limit === undefined ? -1 : limit - seen}) m
        CROSS JOIN log_entries l ON l.id = m.id ORDER BY l.id ${direction}`.execute(this.reads);
      if (rows.length === 0) continue;
      found.push(...rows.filter(inRange));
      seen += rows.length;
      lastId = Number(rows.at(-1)!.id);
      if (limit !== undefined && seen >= limit) break;
    }
    return { rows: found, lastId };
  }

  /** With the index and buckets of whole seconds: whole seconds bucketed in FTS5 alone, the ragged ones on their rows. */
  protected override async countBuckets(plan: SqlitePlan, intervalMs: number, groupField: FieldRef | null): Promise<BucketCount[]> {
    const { index } = plan;
    if (index === null || groupField !== null || intervalMs % 1000 !== 0) return super.countBuckets(plan, intervalMs, groupField);
    const split = splitBySecond(plan);
    const counts: BucketCount[] = [];
    for (const edge of split.edges) {
      for (const row of (await this.#rowsOf(plan, edge.lo, edge.hi, 'asc', undefined)).rows) {
        const ts = Number(row.ts);
        counts.push({ bucket: ts - mod(ts, intervalMs), group: null, count: 1 });
      }
    }
    if (split.whole) {
      // An hour table a statement: the read pool runs them side by side, a few at a time, so that a
      // month's 720 statements do not queue ahead of every other read of the service.
      const hours = await mapInParallel(plan.fts.slices(split.whole.lo, split.whole.hi), HOUR_STATEMENTS_AT_ONCE, (slice) =>
        this.#countHourBuckets(slice, index, intervalMs),
      );
      counts.push(...hours.flat());
    }
    return counts;
  }

  /**
   * The matches of FTS5 query `index` in one hour's slice of whole seconds, per bucket. When a few
   * buckets start inside the slice, one pass counts the matches at or past each start (`count(*)
   * FILTER (WHERE rowid >= …)`; a `GROUP BY` costs three times FTS5's own count: docs/benchmarks.md,
   * "Issue 15: SQLite at 10M"); with more, each match's second is grouped.
   */
  async #countHourBuckets(slice: HourSlice, index: string, intervalMs: number): Promise<BucketCount[]> {
    const table = sql.table(slice.table);
    const first = idSecond(slice.lo) * 1000;
    const firstBucket = first - mod(first, intervalMs);
    const starts: number[] = [];
    for (let bucket = firstBucket + intervalMs; bucket <= idSecond(slice.hi) * 1000; bucket += intervalMs) starts.push(bucket);
    const matches = sql`FROM ${table} WHERE ${table} MATCH ${index} AND rowid BETWEEN ${slice.lo} AND ${slice.hi}`;
    if (starts.length > FEW_BUCKET_STARTS) {
      // The second of an id is id >> 21 (an arithmetic shift: right before 1970 too).
      const { rows } = await sql<{
        bucket: number;
        n: number;
      }>`SELECT s - (((s % ${intervalMs}) + ${intervalMs}) % ${intervalMs}) AS bucket, count(*) AS n
        FROM (SELECT (rowid >> 21) * 1000 AS s ${matches}) GROUP BY 1`.execute(this.reads);
      return rows.map((row) => ({ bucket: Number(row.bucket), group: null, count: Number(row.n) }));
    }
    // atOrPast[i]: the matches from the start of bucket i on (bucket 0: all of them).
    const columns = [sql`count(*)`, ...starts.map((start) => sql`count(*) FILTER (WHERE rowid >= ${firstIdOf(start / 1000)})`)];
    const { rows } = await sql<Record<string, number>>`SELECT ${sql.join(
      columns.map((column, bucket) => sql`${column} AS ${sql.ref(`b${bucket}`)}`),
    )} ${matches}`.execute(this.reads);
    const atOrPast = columns.map((_, bucket) => Number(rows[0]?.[`b${bucket}`] ?? 0));
    const counts: BucketCount[] = [];
    atOrPast.forEach((n, bucket) => {
      const count = n - (atOrPast[bucket + 1] ?? 0);
      if (count > 0) counts.push({ bucket: firstBucket + bucket * intervalMs, group: null, count });
    });
    return counts;
  }
}

/** Hour statements of one histogram in the read pool at once: its two workers busy and one more each queued. */
const HOUR_STATEMENTS_AT_ONCE = 4;

/** Bucket starts inside an hour up to which #countHourBuckets compares ids instead of grouping seconds. */
const FEW_BUCKET_STARTS = 8;

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

/** The ids of the whole seconds of a plan's range, and of its ragged first and last seconds. */
function splitBySecond(plan: SqlitePlan): { whole: { lo: number; hi: number } | null; edges: { lo: number; hi: number }[] } {
  const first = idSecond(plan.lo);
  const last = idSecond(plan.hi);
  const firstWhole = plan.from <= first * 1000 ? first : first + 1;
  const lastWhole = plan.end >= (last + 1) * 1000 ? last : last - 1;
  const edges: { lo: number; hi: number }[] = [];
  if (firstWhole > first) edges.push({ lo: firstIdOf(first), hi: lastIdOf(first) });
  if (lastWhole < last && (last !== first || firstWhole === first)) edges.push({ lo: firstIdOf(last), hi: lastIdOf(last) });
  const whole = firstWhole <= lastWhole ? { lo: firstIdOf(firstWhole), hi: lastIdOf(lastWhole) } : null;
  return { whole, edges };
}

const newestFirst = (a: EntryRow, b: EntryRow): number => Number(b.ts) - Number(a.ts) || Number(b.id) - Number(a.id);
const oldestFirst = (a: EntryRow, b: EntryRow): number => Number(a.ts) - Number(b.ts) || Number(a.id) - Number(b.id);

const ENTRY_WIDTH = rowWidth(ENTRY_INSERT_COLUMNS);
const FTS_INSERT_COLUMNS = ['rowid', 'body', 'facets'];
const FTS_WIDTH = FTS_INSERT_COLUMNS.length;

/** What #inWriteTransaction hands its work. */
interface WriteTransaction {
  connection: Kysely<any>;
  /** The rows of the `opening` query, read in the same message as the BEGIN. */
  opened: readonly unknown[];
  /** Runs `writes`, then the COMMIT, in one message to the SQLite thread: the transaction ends there. */
  commitWith: (writes: readonly (CompiledQuery | RowsStatement)[]) => Promise<void>;
}

/** What a batch's write added that the caches learn once it is committed. */
interface Written {
  newFields: ReturnType<FieldCatalogueCache['newFields']>;
  newCodes: AttributeCodeRow[];
  newValues: FacetDictionaryRow[];
  newlyUnfaceted: string[];
}

/**
 * Writes a batch of one tenant inside the caller's transaction: entries under time-ordered ids,
 * their words and facets, displaced ids, rollups, new catalogue fields and fields that stop being
 * faceted. Also what the migration to time-ordered ids re-stores every entry with.
 */
export async function writeEntries(
  connection: Kysely<any>,
  tenantId: string,
  entries: readonly LogEntry[],
  caches: WriterCaches,
): Promise<Written> {
  return writePrepared(connection, await prepareBatch(tenantId, entries, caches), caches);
}

/** What a writer keeps between batches: read while a batch is prepared, updated only under the writer, once a batch committed. */
export interface WriterCaches {
  fields: FieldCatalogueCache;
  facets: FacetDictionary;
  codes: AttributeCodes;
}

/**
 * What a batch's write can compute before it takes the writer, so that with batches in flight it
 * runs beside another batch's statements: the entries cleaned and in time order (one second's ids
 * then follow the order of their times where they can), each with its place in the batch; the
 * values of their rows but the ids; their words for the index; rollups and new catalogue fields;
 * and their facets, as the tenant's dictionary stood (`facetsAt`): taken again under the writer
 * when the dictionary changed meanwhile.
 */
interface PreparedBatch {
  tenantId: string;
  entries: PreparedEntry[];
  places: number[];
  /** ENTRY_INSERT_COLUMNS' values of each entry, its id and time offset (0 here) filled in under the writer. */
  entryValues: unknown[];
  /**
   * The same packed for the SQLite thread (packed-values.ts), made here rather than under the writer;
   * undefined when a name had no number yet: the writer gives it one, then encodes and packs.
   */
  packed: PackedValues | undefined;
  bodies: string[];
  rollups: BatchRollups[];
  newFields: ReturnType<FieldCatalogueCache['newFields']>;
  facets: ReturnType<FacetDictionary['facetsOf']> | undefined;
  facetsAt: string | undefined;
  /** The index rows with these facets, by the hour of each entry's second (its id's, unless displaced), their ids 0. */
  indexed: IndexRows | undefined;
}

/** A batch's index rows (FTS_INSERT_COLUMNS) by hour of their ids, packed; the rows of each hour hold consecutive entries from `first`. */
type IndexRows = Map<number, { first: number; rows: PackedValues }>;

function indexRows(
  bodies: readonly string[],
  facets: readonly (readonly string[])[],
  hourOf: (index: number) => number,
  idOf: (index: number) => number,
): IndexRows {
  const byHour = new Map<number, { first: number; values: unknown[] }>();
  for (let index = 0; index < bodies.length; index += 1) {
    const hour = hourOf(index);
    let group = byHour.get(hour);
    if (!group) byHour.set(hour, (group = { first: index, values: [] }));
    group.values.push(idOf(index), bodies[index], facets[index]!.join(' '));
  }
  return new Map([...byHour].map(([hour, { first, values }]) => [hour, { first, rows: packValues(values) }]));
}

async function prepareBatch(tenantId: string, entries: readonly LogEntry[], caches: WriterCaches): Promise<PreparedBatch> {
  const cleaned = await prepareEntriesInTurns(entries);
  const places = cleaned.map((_, place) => place).sort((a, b) => cleaned[a]!.ts - cleaned[b]!.ts);
  return preparedOf(
    tenantId,
    places.map((place) => cleaned[place]!),
    places,
    caches,
  );
}

async function preparedOf(tenantId: string, sorted: PreparedEntry[], places: number[], caches: WriterCaches): Promise<PreparedBatch> {
  const entryValues = new Array<unknown>(sorted.length * ENTRY_WIDTH);
  const bodies = new Array<string>(sorted.length);
  let encoded = true;
  let at = 0;
  for (let index = 0; index < sorted.length; index += 1) {
    if (index > 0 && index % PREPARE_CHUNK === 0) await nextTurn();
    const entry = sorted[index]!;
    entryValues[at++] = 0;
    entryValues[at++] = tenantId;
    entryValues[at++] = 0;
    entryValues[at++] = levelCode(entry.level);
    entryValues[at++] = entry.service;
    entryValues[at++] = entry.host;
    // Each id's hex (made bytes by the insert) or its text.
    const { trace_id: trace, span_id: span } = entry;
    const traceHex = isHexId(trace);
    const spanHex = isHexId(span);
    entryValues[at++] = traceHex ? trace : null;
    entryValues[at++] = traceHex ? null : trace;
    entryValues[at++] = spanHex ? span : null;
    entryValues[at++] = spanHex ? null : span;
    entryValues[at++] = entry.message;
    const attributes = encoded ? caches.codes.encode(tenantId, entry.attributes) : undefined;
    if (attributes === undefined) encoded = false;
    entryValues[at++] = attributes;
    bodies[index] = ftsBody(entry.message);
  }
  await nextTurn();
  // Taken last: the dictionary may have changed while this batch waited for turns of the event loop.
  const facetsAt = caches.facets.stateOf(tenantId);
  const facets = facetsAt === undefined ? undefined : caches.facets.facetsOf(tenantId, sorted);
  return {
    tenantId,
    entries: sorted,
    places,
    entryValues,
    packed: encoded ? packValues(entryValues) : undefined,
    bodies,
    rollups: batchRollups(sorted),
    // The catalogue only grows: fields it learns meanwhile are stored again, which changes nothing.
    newFields: caches.fields.newFields(tenantId, sorted),
    facets,
    facetsAt,
    // In time order, so each hour's entries are consecutive.
    indexed:
      facets &&
      indexRows(
        bodies,
        facets.facets,
        (index) => hourOfSecond(idSecondOf(sorted[index]!.ts)),
        () => 0,
      ),
  };
}

/** The batch without the entries at `places` (repeated document ids), prepared again: rare. */
function withoutPlaces(batch: PreparedBatch, places: ReadonlySet<number>, caches: WriterCaches): Promise<PreparedBatch> {
  if (places.size === 0) return Promise.resolve(batch);
  const kept = batch.places.flatMap((place, index) => (places.has(place) ? [] : [index]));
  return preparedOf(
    batch.tenantId,
    kept.map((index) => batch.entries[index]!),
    kept.map((index) => batch.places[index]!),
    caches,
  );
}

/** The second of the ids an entry at `ts` gets (unless displaced: time-ids.ts). */
const idSecondOf = (ts: number): number => clampSecond(secondOf(ts));
/** The hour (its index table's, fts-hours.ts) of a second's ids. */
const hourOfSecond = (second: number): number => hourOfId(firstIdOf(second));

/** What the writer reads before a batch's writes (batchStateQuery): as JSON, one row. */
interface BatchState {
  /** How many attribute numbers the tenant has (attribute-codes.ts). */
  codes: number;
  /** [second, the last id used in it or null] for each second of the batch. */
  used: string;
  /** Which of the batch's hours have their index table (an entry displaced into another hour finds out below). */
  known: string;
}

/** The writer's one read before a batch's writes (under the writer: no other batch writes meanwhile). */
function batchStateQuery(tenantId: string, entries: readonly PreparedEntry[]): RawBuilder<BatchState> {
  const seconds = [...new Set(entries.map((entry) => idSecondOf(entry.ts)))];
  const hours = [...new Set(seconds.map(hourOfSecond))];
  return sql<BatchState>`SELECT
      (SELECT count(*) FROM log_attribute_codes WHERE tenant_id = ${tenantId}) AS codes,
      (SELECT json_group_array(json_array(value, (SELECT max(id) FROM log_entries
        WHERE id BETWEEN value * ${IDS_PER_SECOND} AND value * ${IDS_PER_SECOND} + ${IDS_PER_SECOND - 1}))) FROM json_each(${JSON.stringify(seconds)})) AS used,
      (SELECT json_group_array(hour) FROM log_fts_hours
        WHERE tenant_id = ${tenantId} AND hour IN (SELECT value FROM json_each(${JSON.stringify(hours)}))) AS known`;
}

/**
 * Writes a prepared batch under the writer: `opened` is its state if read already (with the BEGIN), and
 * `finish` runs the batch's list of writes (with the COMMIT, from append).
 */
async function writePrepared(
  connection: Kysely<any>,
  batch: PreparedBatch,
  caches: WriterCaches,
  opened?: BatchState,
  finish: (writes: readonly (CompiledQuery | RowsStatement)[]) => Promise<unknown> = (writes) => runInOrder(connection, writes),
): Promise<Written> {
  const { tenantId, entries: prepared, entryValues, newFields } = batch;
  await loadFacetDictionary(connection, tenantId, caches.facets);
  const facetsHeld = batch.facets !== undefined && batch.facetsAt === caches.facets.stateOf(tenantId);
  const { facets, newValues, newlyUnfaceted } = facetsHeld ? batch.facets! : caches.facets.facetsOf(tenantId, prepared);
  const state = opened ?? (await batchStateQuery(tenantId, prepared).execute(connection)).rows[0]!;
  const used = JSON.parse(state.used) as [number, number | null][];
  await caches.codes.sync(connection, tenantId, Number(state.codes));
  // Names without a number (rare: a tenant's first batches, new fields) are numbered here, then every
  // entry's attributes encoded with them. An encoding made before stays right: numbers never change.
  let newCodes: AttributeCodeRow[] = [];
  let rows = batch.packed;
  if (!rows) {
    const numbered = caches.codes.numbered(
      tenantId,
      prepared.map((entry) => entry.attributes),
    );
    newCodes = numbered.rows;
    prepared.forEach((entry, index) => (entryValues[index * ENTRY_WIDTH + ATTRIBUTES_VALUE] = numbered.encode(entry.attributes)));
    rows = packValues(entryValues);
  }
  const known = new Set(JSON.parse(state.known) as number[]);
  const lastUsed = new Map(used.map(([second, top]) => [second, top ?? undefined]));
  const ids = await assignIds(
    prepared.map((entry) => entry.ts),
    async (second) => {
      if (lastUsed.has(second)) return lastUsed.get(second);
      // A second this batch spilled into (more than 2^21 entries in one second): rare.
      const { rows } = await sql<{ top: number | null }>`SELECT max(id) AS top FROM log_entries
        WHERE id BETWEEN ${firstIdOf(second)} AND ${lastIdOf(second)}`.execute(connection);
      return rows[0]?.top === null || rows[0]?.top === undefined ? undefined : Number(rows[0].top);
    },
  );
  const displaced = prepared.flatMap((entry, index) => (ids[index]!.displaced ? [[ids[index]!.id, entry.ts]] : []));
  // Each hour of ids has its table (fts-hours.ts), made at its first entry. Contentless: the text lives
  // once, in log_entries; the index holds our own tokens (tokenize.ts) and the entry's facets. No
  // deletes (retention drops whole tables), so no per-entry sizes are kept (columnsize=0).
  for (let index = 0; index < prepared.length; index += 1) {
    const { id } = ids[index]!;
    setPackedNumber(rows, index * ENTRY_WIDTH + ID_VALUE, id);
    setPackedNumber(rows, index * ENTRY_WIDTH + TS_OFFSET_VALUE, prepared[index]!.ts - idSecond(id) * 1000);
  }
  // The index rows as prepared, given their ids, unless the facets changed or an entry was displaced
  // (its id then lies in another second, perhaps another hour).
  let indexedByHour = facetsHeld && displaced.length === 0 ? batch.indexed : undefined;
  if (indexedByHour) {
    for (const { first, rows: hourRows } of indexedByHour.values()) {
      for (let row = 0; row * FTS_WIDTH < hourRows.kinds.length; row += 1) setPackedNumber(hourRows, row * FTS_WIDTH, ids[first + row]!.id);
    }
  } else {
    indexedByHour = indexRows(
      batch.bodies,
      facets,
      (index) => hourOfId(ids[index]!.id),
      (index) => ids[index]!.id,
    );
  }
  // The batch's writes in order, in one message to the SQLite thread (sqlite-thread.ts, runInOrder).
  const writes: (CompiledQuery | RowsStatement)[] = [rowInserts('log_entries', ENTRY_INSERT_COLUMNS, rows)];
  if (newCodes.length > 0) writes.push(storeAttributeCodes(connection, tenantId, newCodes).compile());
  for (const [hour, { rows: indexed }] of indexedByHour) {
    const table = sql.table(ftsTableName(tenantId, hour));
    if (!known.has(hour)) {
      writes.push(
        sql`INSERT INTO log_fts_hours (tenant_id, hour) VALUES (${tenantId}, ${hour}) ON CONFLICT DO NOTHING`.compile(connection),
        sql`CREATE VIRTUAL TABLE IF NOT EXISTS ${table} USING fts5(body, facets, content='', columnsize=0)`.compile(connection),
        // FTS5 merges a level's segments once it holds `automerge` of them (default 4): an hour of
        // 5,000-entry batches rewrote each posting often enough to cost 6.6 µs an entry; at 8 it costs
        // 3.8, and an hour's lookups measured the same (docs/benchmarks.md).
        sql`INSERT INTO ${table} (${table}, rank) VALUES ('automerge', 8)`.compile(connection),
      );
    }
    writes.push(rowInserts(ftsTableName(tenantId, hour), FTS_INSERT_COLUMNS, indexed));
  }
  if (displaced.length > 0) {
    writes.push(
      sql`INSERT INTO log_displaced (id, tenant_id, ts) SELECT value ->> 0, ${tenantId}, value ->> 1
      FROM json_each(${JSON.stringify(displaced)})`.compile(connection),
    );
  }
  // Per minute and per hour (the hourly tables answer counts over days: migration 0130).
  for (const { table, hostTable, rows, hostRows } of batch.rollups) {
    const rollups = JSON.stringify(rows.map((row) => [row.minute, row.level, row.service, row.count]));
    const hostRollups = JSON.stringify(hostRows.map((row) => [row.minute, row.host, row.count]));
    writes.push(
      sql`INSERT INTO ${sql.table(table)} (tenant_id, minute, level, service, count)
      SELECT ${tenantId}, value ->> 0, value ->> 1, value ->> 2, value ->> 3 FROM json_each(${rollups}) WHERE true
      ON CONFLICT (tenant_id, minute, level, service) DO UPDATE SET count = count + excluded.count`.compile(connection),
      sql`INSERT INTO ${sql.table(hostTable)} (tenant_id, minute, host, count)
      SELECT ${tenantId}, value ->> 0, value ->> 1, value ->> 2 FROM json_each(${hostRollups}) WHERE true
      ON CONFLICT (tenant_id, minute, host) DO UPDATE SET count = count + excluded.count`.compile(connection),
    );
  }
  if (newFields.length > 0) {
    writes.push(
      sql`INSERT INTO log_fields (tenant_id, name, type)
      SELECT ${tenantId}, value ->> 0, value ->> 1 FROM json_each(${JSON.stringify(newFields.map((field) => [field.name, field.type]))}) WHERE true
      ON CONFLICT (tenant_id, name) DO UPDATE SET type = 'string' WHERE log_fields.type <> excluded.type`.compile(connection),
    );
  }
  writes.push(...facetDictionaryWrites(connection, tenantId, newValues, newlyUnfaceted));
  await finish(writes);
  return { newFields, newCodes, newValues, newlyUnfaceted };
}
