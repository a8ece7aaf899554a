import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { StoredLogEntry } from '../log-store.js';
import { mod } from '../minutes.js';
import type { BucketCount, EntryRow, ReadPlan, TimePage } from '../store-core.js';
import { mapInParallel } from '../../../../shared/map-in-parallel.js';
import type { FtsHours, HourSlice } from './fts-hours.js';
import { SQLITE_ENTRY_COLUMNS } from './sqlite-rows.js';
import { firstIdOf, idSecond, idSecondOf, lastIdOf } from './time-ids.js';

/**
 * A read over [from, end) on SQLite. `index`: the FTS5 query that finds exactly the matches in the
 * tenant's index among the ids of [lo, hi] (all of them but the first and last seconds' entries
 * outside the range), when the index answers the condition alone and no displaced entry is involved;
 * reads then count, page and bucket from the index without touching rows.
 */
export interface SqlitePlan extends ReadPlan {
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
 * SQLite's own ways to read a plan (sqlite-store.ts plans it): whole seconds counted and bucketed in
 * the full-text index alone, and pages sorted by time walked in id order, since ids are times
 * (time-ids.ts). LogStoreCore reads everything else.
 */
export class SqliteReads {
  constructor(private readonly reads: Kysely<any>) {}

  /** With the plan's index: whole seconds counted in FTS5 alone, the ragged first and last seconds on their rows. */
  async countRows(plan: SqlitePlan, index: string, bound: number | undefined): Promise<number> {
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
   * in time order without sorting every match. Not for a plan with displaced entries.
   */
  async timePage(plan: SqlitePlan, page: TimePage): Promise<StoredLogEntry[]> {
    return plan.entries(await this.pageRows(plan, page));
  }

  /** The rows of timePage's page, not yet read as entries; of `columns` (those of an entry by default; `l.id, l.ts` at least). */
  async pageRows(plan: SqlitePlan, page: TimePage, columns: RawBuilder<unknown> = SQLITE_ENTRY_COLUMNS): Promise<EntryRow[]> {
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
      const chunk = await this.#chunk(plan, lo, hi, page.order, wanted - found.length, columns);
      if (chunk === null) break;
      found.push(...chunk.rows.filter(beyond).sort(descending ? newestFirst : oldestFirst));
      if (descending) hi = chunk.next;
      else lo = chunk.next;
    }
    return found.slice(page.after ? 0 : page.offset, wanted);
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
    columns: RawBuilder<unknown>,
  ): Promise<{ rows: EntryRow[]; next: number } | null> {
    const descending = order === 'desc';
    const first = await this.#rowsOf(plan, lo, hi, order, count, columns);
    if (first.lastId === null) return null;
    const second = idSecond(first.lastId);
    // The rest of the last second: its entries are in arrival order, so all of them are sorted together.
    const [restLo, restHi] = descending
      ? [Math.max(lo, firstIdOf(second)), first.lastId - 1]
      : [first.lastId + 1, Math.min(hi, lastIdOf(second))];
    const rest = restLo > restHi ? [] : (await this.#rowsOf(plan, restLo, restHi, order, undefined, columns)).rows;
    return { rows: [...first.rows, ...rest], next: descending ? firstIdOf(second) - 1 : lastIdOf(second) + 1 };
  }

  /**
   * Matching rows among ids [lo, hi] in id order, at most `limit` ids looked at, and the last id looked
   * at (null: none). From the index when the plan has one (rows outside the time range left out), else
   * checked on the rows.
   */
  async #rowsOf(
    plan: SqlitePlan,
    lo: number,
    hi: number,
    order: 'asc' | 'desc',
    limit: number | undefined,
    columns: RawBuilder<unknown> = SQLITE_ENTRY_COLUMNS,
  ) {
    const direction = order === 'asc' ? sql`ASC` : sql`DESC`;
    const inRange = (row: EntryRow) => Number(row.ts) >= plan.from && Number(row.ts) < plan.end;
    if (plan.index === null) {
      const { rows } = await sql<EntryRow>`SELECT ${columns} FROM log_entries l WHERE ${plan.where} AND l.id BETWEEN ${lo} AND ${hi}
        ORDER BY l.id ${direction} LIMIT ${limit ?? -1}`.execute(this.reads);
      return { rows, lastId: rows.length > 0 ? Number(rows.at(-1)!.id) : null };
    }
    // Hour by hour in the walk's order, until `limit` ids were looked at.
    const found: EntryRow[] = [];
    let seen = 0;
    let lastId: number | null = null;
    for (const slice of plan.fts.slices(lo, hi, order)) {
      const table = sql.table(slice.table);
      const { rows } = await sql<EntryRow>`SELECT ${columns} FROM (SELECT rowid AS id FROM ${table}
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

  /** With the plan's index, buckets of whole seconds: whole seconds bucketed in FTS5 alone, the ragged ones on their rows. */
  async countBuckets(plan: SqlitePlan, index: string, intervalMs: number): Promise<BucketCount[]> {
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
   * FILTER (WHERE rowid >= …)`; a `GROUP BY` costs three times FTS5's own count); with more, each
   * match's second is grouped.
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
