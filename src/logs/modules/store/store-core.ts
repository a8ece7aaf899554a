import { sql, type Kysely, type RawBuilder } from 'kysely';
import { FIXED_FIELDS, resolveField, type FieldRef } from '../query/fields.js';
import { QuerySyntaxError } from '../query/errors.js';
import type { Condition } from '../query/condition.js';
import { MAX_BUCKETS } from '../query/time-range.js';
import {
  type AggregateRequest,
  type AggregateRow,
  type AppendOptions,
  type AppendResult,
  type CalendarUnit,
  type NumericValuesRequest,
  type AttributeValue,
  type DistinctRequest,
  type FieldInfo,
  type FieldStats,
  type FieldStatsRequest,
  type GroupCount,
  type GroupCountsRequest,
  type HistogramBucket,
  type HistogramRequest,
  type LogEntry,
  type LogStore,
  type SearchRequest,
  type SearchResult,
  type StoredLogEntry,
  type TopMessage,
  type TopMessagesRequest,
} from './log-store.js';
import { compareText, MINUTE, mod, splitByMinute } from './minutes.js';
import { nextTurn, type PreparedEntry } from './write-batch.js';
import {
  indexCoverage,
  indexRollupCounts,
  rolledUpMinutes,
  rollupColumn,
  rollupFilters,
  rollupTable,
  splitIndexFilter,
  type IndexTest,
  type RollupColumn,
  type RollupFilter,
  type RollupTable,
} from './rollups.js';
import { dict } from '../../../shared/dict.js';

const EVERYTHING: Condition = { kind: 'all' };

/** The columns of a stored entry as PostgreSQL's reads select them (SQLite's: sqlite-rows.ts). */
export const ENTRY_COLUMNS = sql`l.id, l.tenant_id, l.ts, l.level, l.service, l.host, l.trace_id, l.span_id, l.message, l.attributes`;

/**
 * The few expressions in which the dialects' reads differ. Everything else a read does is written
 * once, in LogStoreCore (as kysely's own query compiler has one base and small per-dialect overrides).
 */
export interface ReadDialect {
  /** A bound integer compared with a bigint column (PostgreSQL: cast, or it is taken as text). */
  int: (value: number) => RawBuilder<unknown>;
  /** A bound text value compared with a text column. */
  text: (value: string) => RawBuilder<unknown>;
  /** The sum of rollup counts, as an integer. */
  readonly sumOfCounts: RawBuilder<unknown>;
  /** What a read selects of `log_entries l` for an entry (EntryRow). */
  readonly entryColumns: RawBuilder<unknown>;
  /** `value` contains `needle`, case-insensitively. */
  containsIgnoringCase: (value: RawBuilder<unknown>, needle: string) => RawBuilder<unknown>;
  /** ORDER BY of field names: code-unit order on both. */
  readonly fieldNameOrder: RawBuilder<unknown>;
  /** The start (epoch ms, UTC) of the calendar week, month, quarter or year of `l.ts`. */
  calendarStart: (unit: CalendarUnit) => RawBuilder<unknown>;
}

export interface DocumentIdWindow {
  now: () => number;
  windowMs: number;
}

/** A day: shippers retry within minutes; a day covers a shipper that was down overnight. */
export const DEFAULT_DOCUMENT_ID_WINDOW: DocumentIdWindow = { now: Date.now, windowMs: 86_400_000 };

/** A field's expressions over a row of `log_entries l`, as a plan's tenant stores it. */
export interface FieldSql {
  /** Its value as text (null when absent). */
  value: (field: FieldRef) => RawBuilder<unknown>;
  /** Its ORDER BY expression. */
  sort: (field: FieldRef) => RawBuilder<unknown>;
  /** Its value as a number (JSON numbers and numeric strings), else NULL. */
  number: (field: FieldRef) => RawBuilder<unknown>;
}

/** How a read finds the entries of a condition over a time range. */
export interface ReadPlan {
  /** The whole row condition over `log_entries l`: tenant, time range and the condition. */
  where: RawBuilder<unknown>;
  /** Fields in the tenant's rows (SQLite: attribute names by number, attribute-codes.ts). */
  fields: FieldSql;
  /** Read rows as entries. */
  entries: (rows: readonly EntryRow[]) => Promise<StoredLogEntry[]>;
}

/** The rows a page sorted by time is cut from, and how it is sorted. */
export interface TimePage {
  order: 'asc' | 'desc';
  offset: number;
  limit: number;
  after: { timestamp: number; id: number } | undefined;
}

/**
 * search, histogram, fields and distinct, once for both dialects. A dialect supplies append and
 * removeOlderThan (their storage differs: FTS5 and id windows; hour partitions and tsvector), the
 * WHERE clause of a condition (planWhere) and the expressions of ReadDialect.
 */
export abstract class LogStoreCore<Plan extends ReadPlan = ReadPlan> implements LogStore {
  protected constructor(
    /** The service's database: writes, and the health check. */
    protected readonly writes: Kysely<any>,
    /** Reads run here (the read pool in the service, sqlite/threads/read-pool.ts), else on the service's database. */
    protected readonly reads: Kysely<any>,
    private readonly dialect: ReadDialect,
    /** How long senders' document ids are remembered (LogEntry.documentId). */
    protected readonly documentIds: DocumentIdWindow = DEFAULT_DOCUMENT_ID_WINDOW,
  ) {}

  abstract append(tenantId: string, entries: readonly LogEntry[], options?: AppendOptions): Promise<AppendResult>;
  abstract removeOlderThan(tenantId: string, before: number): Promise<number>;

  async forgetDocumentIds(now: number): Promise<number> {
    let forgotten = 0;
    // In batches, so that a day of ids never holds the write lock for long.
    for (;;) {
      const result = await sql`DELETE FROM log_document_ids WHERE (tenant_id, doc_id) IN
        (SELECT tenant_id, doc_id FROM log_document_ids WHERE expires_at <= ${now} LIMIT 5000)`.execute(this.writes);
      const removed = Number(result.numAffectedRows ?? 0);
      forgotten += removed;
      if (removed < 5000) return forgotten;
      await nextTurn();
    }
  }

  /** The WHERE of a condition over [from, end); null when nothing can match. */
  protected abstract planWhere(tenantId: string, from: number, end: number, condition: Condition): Promise<Plan | null>;

  /** planWhere, or null when [from, end) is empty (`from` past `end` once #visibleFrom moved it). */
  async #plan(tenantId: string, from: number, end: number, condition: Condition): Promise<Plan | null> {
    return from >= end ? null : this.planWhere(tenantId, from, end, condition);
  }

  /**
   * `from`, or later while retention removes the tenant's older entries (purging): every public read
   * asks this once, first, and reads entries and rollups from there on; the one place that hides
   * what is being removed.
   */
  async #visibleFrom(tenantId: string, from: number): Promise<number> {
    const { rows } = await sql<{ hidden_before: number | string }>`SELECT hidden_before FROM log_retention_floors
      WHERE tenant_id = ${tenantId}`.execute(this.reads);
    return rows.length === 0 ? from : Math.max(from, Number(rows[0]!.hidden_before));
  }

  /**
   * Runs retention's removal of the tenant's entries before `cutoff`, with those entries hidden from
   * every read first: one small write, so a day leaves every answer at once at any size, whatever
   * the removal then takes (deleting rows, dropping index tables or partitions, one transaction
   * after another). Once they are removed they stop being hidden, so an entry older than the cutoff
   * that arrives later is found, as without retention. A removal that fails leaves them hidden;
   * the next one ends that.
   */
  protected async purging<T>(tenantId: string, cutoff: number, removal: () => Promise<T>): Promise<T> {
    const floor = this.dialect.int(cutoff);
    await sql`INSERT INTO log_retention_floors (tenant_id, hidden_before) VALUES (${tenantId}, ${floor})
      ON CONFLICT (tenant_id) DO UPDATE SET hidden_before = excluded.hidden_before
      WHERE log_retention_floors.hidden_before < excluded.hidden_before`.execute(this.writes);
    const result = await removal();
    // Unless a removal with a later cutoff began meanwhile: its entries stay hidden until it ends.
    await sql`DELETE FROM log_retention_floors WHERE tenant_id = ${tenantId} AND hidden_before <= ${floor}`.execute(this.writes);
    return result;
  }

  async search(input: SearchRequest): Promise<SearchResult> {
    const request = normalizeRange(input);
    const condition = request.condition ?? EVERYTHING;
    const end = request.to + 1;
    const from = await this.#visibleFrom(request.tenantId, request.from);
    const plan = await this.#plan(request.tenantId, from, end, condition);
    if (plan === null) return { entries: [], total: 0, totalRelation: 'eq' };
    const offset = request.offset ?? (request.page - 1) * request.limit;
    const sortField = resolveField(request.sort?.field ?? '@timestamp');
    const order = request.sort?.order === 'asc' ? 'asc' : 'desc';
    let after: TimePage['after'];
    if (request.after) {
      if (sortField.kind !== 'timestamp' || !/^-?\d{1,18}$/.test(request.after.id))
        throw new RangeError('search_after needs a sort on @timestamp');
      after = { timestamp: Math.floor(request.after.timestamp), id: Number(request.after.id) };
    }

    const { total, totalRelation } = await this.#countMatches(request.tenantId, from, end, condition, plan, request.trackTotal);
    if (total === 0 || (offset >= total && totalRelation === 'eq' && !after) || request.limit === 0)
      return { entries: [], total, totalRelation };
    const entries =
      sortField.kind === 'timestamp'
        ? await this.timePage(plan, { order, offset, limit: request.limit, after })
        : await this.#fieldPage(plan, sortField, order, offset, request.limit);
    return { entries, total, totalRelation };
  }

  /**
   * The number of matches, exact or (past `bound`) a lower bound. Level, service and host filters
   * are counted from the rollups (exact and cheap at any size); anything else by countMatches.
   */
  async #countMatches(
    tenantId: string,
    from: number,
    end: number,
    condition: Condition,
    plan: Plan,
    bound: number | undefined,
  ): Promise<{ total: number; totalRelation: 'eq' | 'gte' }> {
    const rollups = rollupPlan(condition, null);
    const counts = rollups === null ? null : await this.#rollupCounts(tenantId, from, end, condition, rollups, null, null);
    if (counts !== null) {
      let total = 0;
      for (const row of counts) total += row.count;
      return { total, totalRelation: 'eq' };
    }
    return this.countMatches(plan, bound);
  }

  /** The number of a plan's matches: exact, or `bound` marked 'gte' when there are more and counting them all would cost. */
  protected async countMatches(plan: Plan, bound: number | undefined): Promise<BoundedTotal> {
    return boundedTotal(await this.countRows(plan, bound), bound);
  }

  /** The matching rows, counted to one past `bound` at most. */
  protected async countRows(plan: Plan, bound: number | undefined): Promise<number> {
    const { rows } = await (
      bound === undefined
        ? sql<{ total: number }>`SELECT count(*) AS total FROM ${await this.rowsOf(plan, sql``)} l WHERE ${plan.where}`
        : sql<{
            total: number;
          }>`SELECT count(*) AS total FROM (SELECT 1 FROM ${await this.rowsOf(plan, sql``)} l WHERE ${plan.where} LIMIT ${bound + 1}) bounded`
    ).execute(this.reads);
    return Number(rows[0]?.total ?? 0);
  }

  /**
   * The rows a plan's `where` is checked on, as `l`: log_entries, or fewer that hold every match (a
   * dialect that finds its matches by other means: PostgreSQL's postings). `reads`: what else the
   * query computes over `l` (a dialect that stores columns apart reads only those it needs).
   */
  protected async rowsOf(_plan: Plan, _reads: RawBuilder<unknown>): Promise<RawBuilder<unknown>> {
    return sql`log_entries`;
  }

  /** A page of matches sorted by time (ties by id); dialects walk their time order where they have one. */
  protected async timePage(plan: Plan, page: TimePage): Promise<StoredLogEntry[]> {
    return this.timeSorted(plan, plan.where, page, page.limit, page.after ? 0 : page.offset);
  }

  /**
   * Rows of `where` sorted by time (ties by id) past `page.after`, `limit` of them from `offset`;
   * `rows`: what `l` is, when not the whole log_entries (a subquery the dialect plans itself).
   */
  protected async timeSorted(
    plan: Plan,
    where: RawBuilder<unknown>,
    page: TimePage,
    limit: number,
    offset: number,
    rows: RawBuilder<unknown> = sql`log_entries`,
  ): Promise<StoredLogEntry[]> {
    const order = page.order === 'asc' ? sql`ASC` : sql`DESC`;
    const { rows: found } = await sql<EntryRow>`SELECT ${this.dialect.entryColumns} FROM ${rows} l WHERE ${this.pastCursor(where, page)}
      ORDER BY l.ts ${order}, l.id ${order} LIMIT ${limit} OFFSET ${offset}`.execute(this.reads);
    return plan.entries(found);
  }

  /** `where`, and past the page's `after` cursor (search_after) in its order when it has one. */
  protected pastCursor(where: RawBuilder<unknown>, page: TimePage): RawBuilder<unknown> {
    if (!page.after) return where;
    const [ts, id] = [this.dialect.int(page.after.timestamp), this.dialect.int(page.after.id)];
    const beyond = page.order === 'asc' ? sql`>` : sql`<`;
    return sql`${where} AND (l.ts ${beyond} ${ts} OR (l.ts = ${ts} AND l.id ${beyond} ${id}))`;
  }

  /** Every match is read to sort it by a field's value. */
  async #fieldPage(plan: Plan, field: FieldRef, direction: 'asc' | 'desc', offset: number, limit: number): Promise<StoredLogEntry[]> {
    const order = direction === 'asc' ? sql`ASC` : sql`DESC`;
    const sort = plan.fields.sort(field);
    const { rows } =
      await sql<EntryRow>`SELECT ${this.dialect.entryColumns} FROM ${await this.rowsOf(plan, sql`${this.dialect.entryColumns}, ${sort}`)} l
      WHERE ${plan.where} ORDER BY ${sort} ${order} NULLS LAST, l.ts ${order}, l.id ${order}
      LIMIT ${limit} OFFSET ${offset}`.execute(this.reads);
    return plan.entries(rows);
  }

  async histogram(input: HistogramRequest): Promise<HistogramBucket[]> {
    const request = normalizeRange(input);
    const starts = bucketStarts(request.from, request.to, request.intervalMs);
    const condition = request.condition ?? EVERYTHING;
    const groupField = request.groupBy === undefined ? null : resolveField(request.groupBy);
    const end = request.to + 1;
    const from = await this.#visibleFrom(request.tenantId, request.from);
    // Whole minutes filtered and grouped only by rolled-up columns come from the per-minute rollups.
    const groupColumn = groupField === null ? null : (rollupColumn(groupField) ?? undefined);
    const rollups = groupColumn === undefined || request.intervalMs % MINUTE !== 0 ? null : rollupPlan(condition, groupColumn);
    const counts =
      (rollups === null
        ? null
        : await this.#rollupCounts(request.tenantId, from, end, condition, rollups, groupField, request.intervalMs)) ??
      (groupField === null
        ? null
        : await this.#countsValueByValue(request.tenantId, from, end, condition, request.intervalMs, groupField)) ??
      (await this.#bucketCounts(request.tenantId, from, end, condition, request.intervalMs, groupField));
    return fillBuckets(starts, counts, groupField !== null, request.nullGroup ?? '');
  }

  /**
   * Matches grouped by level, service or host (per bucket of `intervalMs`; null: one bucket, 0)
   * counted in the dialect's index, a value at a time (the
   * condition and `field:value`), when it has few values in the range (the rollups say which) and the
   * index counts each alone; what no value took (entries without one) is the remainder of the
   * ungrouped counts. Null when that cannot be done: the rows are then read and grouped.
   */
  async #countsValueByValue(
    tenantId: string,
    from: number,
    end: number,
    condition: Condition,
    intervalMs: number | null,
    groupField: FieldRef,
  ): Promise<BucketCount[] | null> {
    const column = rollupColumn(groupField);
    if (!this.countsByValueInIndex || column === undefined || from >= end) return null;
    const plan = await this.#plan(tenantId, from, end, condition);
    if (plan === null) return [];
    const present = await this.#everyEntryCounts(tenantId, from, end, groupField);
    const values = [
      ...new Set(present.map((row) => row.group).filter((value): value is string => typeof value === 'string' && value !== '')),
    ];
    if (values.length > GROUP_VALUES_COUNTED_APART) return null;
    const counted = await this.indexCountsByValue({ tenantId, from, end, condition, column, values, intervalMs }, plan);
    if (counted === null) return null;
    const left = new Map<number, number>();
    for (const row of counted.all) left.set(row.bucket, (left.get(row.bucket) ?? 0) + row.count);
    const counts: BucketCount[] = [];
    counted.byValue.forEach((buckets, index) => {
      for (const row of buckets) {
        if (row.count === 0) continue;
        counts.push({ bucket: row.bucket, group: values[index]!, count: row.count });
        left.set(row.bucket, (left.get(row.bucket) ?? 0) - row.count);
      }
    });
    for (const [bucket, count] of left) if (count > 0) counts.push({ bucket, group: null, count });
    return counts;
  }

  /** Whether indexBuckets can answer (a dialect that has one says so), so that #countsValueByValue is tried. */
  protected readonly countsByValueInIndex: boolean = false;

  /**
   * indexBuckets of a plan (`all`), and of it with each value of a rolled-up column (`byValue`, in
   * the order of `ask.values`), or null when the index cannot count one of them. Here one plan and
   * one count a value; a dialect may count them all at once.
   */
  protected async indexCountsByValue(ask: ValueCountsAsked, plan: Plan): Promise<{ all: BucketCount[]; byValue: BucketCount[][] } | null> {
    const all = await this.indexBuckets(plan, ask.intervalMs);
    if (all === null) return null;
    const byValue: BucketCount[][] = [];
    for (const value of ask.values) {
      const ofValue = await this.#plan(ask.tenantId, ask.from, ask.end, {
        kind: 'and',
        children: [ask.condition, { kind: 'equals', field: { kind: 'column', column: ask.column }, value }],
      });
      const buckets = ofValue === null ? [] : await this.indexBuckets(ofValue, ask.intervalMs);
      if (buckets === null) return null;
      byValue.push(buckets);
    }
    return { all, byValue };
  }

  /**
   * A plan's matches per time bucket counted in the dialect's index, or null when it cannot. Only
   * PostgreSQL's postings: grouping its rows reads each from its block (a histogram by level of a common
   * word: 0.2–0.9 s an hour at 10M a day, against 0.1–0.2 s value by value); SQLite reads rows fast
   * enough that counting value by value in FTS5 measured no cheaper (docs/benchmarks.md, issue 41).
   */
  protected async indexBuckets(_plan: Plan, _intervalMs: number | null): Promise<BucketCount[] | null> {
    return null;
  }

  /** Matches of [from, end) counted per time bucket (and group). */
  async #bucketCounts(
    tenantId: string,
    from: number,
    end: number,
    condition: Condition,
    intervalMs: number,
    groupField: FieldRef | null,
  ): Promise<BucketCount[]> {
    const plan = await this.#plan(tenantId, from, end, condition);
    return plan === null ? [] : this.countBuckets(plan, intervalMs, groupField);
  }

  /** A plan's matches counted per time bucket (and group), from the rows. */
  protected async countBuckets(plan: Plan, intervalMs: number, groupField: FieldRef | null): Promise<BucketCount[]> {
    const interval = this.dialect.int(intervalMs);
    const group = groupField ? sql`, ${plan.fields.value(groupField)} AS grp` : sql``;
    // Floor, also before 1970 (% keeps the sign of the dividend).
    const { rows } = await sql<{ bucket: number; grp?: string | null; n: number }>`
      SELECT l.ts - (((l.ts % ${interval}) + ${interval}) % ${interval}) AS bucket${group}, count(*) AS n
      FROM ${await this.rowsOf(plan, sql`l.ts${group}`)} l WHERE ${plan.where} GROUP BY 1${groupField ? sql`, 2` : sql``}`.execute(
      this.reads,
    );
    return rows.map((row) => ({ bucket: Number(row.bucket), group: row.grp ?? null, count: Number(row.n) }));
  }

  /**
   * Counts of [from, end) from a rollup table for its whole minutes and from the rows for the ragged
   * edges, per bucket of `intervalMs` (a whole number of minutes; null: one bucket, 0) and group.
   * Null when the plan's `_index` filter is not settled for those minutes (rollupPlan): the caller
   * reads the rows.
   */
  async #rollupCounts(
    tenantId: string,
    from: number,
    end: number,
    condition: Condition,
    { filters, table, indexTest }: RollupPlan,
    groupField: FieldRef | null,
    intervalMs: number | null,
  ): Promise<BucketCount[] | null> {
    const counts: BucketCount[] = [];
    if (from >= end) return counts;
    const { minutes, edges } = splitByMinute(from, end - 1);
    if (minutes) {
      const groupColumn = groupField === null ? null : rollupColumn(groupField)!;
      const rolledUp = await rolledUpMinutes(this.reads, this.dialect, { tenantId, minutes, filters, table, groupColumn, intervalMs });
      // The `_index` filter is settled after the counts were read: entries are only ever added, so
      // when every entry of those minutes (or none) satisfies it now, every one (or none) of those
      // counted did, whatever batches came meanwhile.
      const coverage = indexTest === null ? 'all' : await indexCoverage(this.reads, this.dialect, tenantId, minutes, indexTest);
      if (coverage === null) return null;
      if (coverage === 'all') counts.push(...rolledUp);
    }
    for (const [edgeFrom, edgeEnd] of edges) {
      const edge = await this.#bucketCounts(tenantId, edgeFrom, edgeEnd, condition, intervalMs ?? MINUTE, groupField);
      counts.push(...(intervalMs === null ? edge.map((row) => ({ ...row, bucket: 0 })) : edge));
    }
    return counts;
  }

  /** Every entry of [from, end) counted by a rolled-up column (per one bucket, 0), from the rollups. */
  async #everyEntryCounts(tenantId: string, from: number, end: number, field: FieldRef): Promise<BucketCount[]> {
    const plan: RollupPlan = { filters: [], table: rollupTable([], rollupColumn(field)!)!, indexTest: null };
    // Never null: there is no `_index` filter to settle.
    return (await this.#rollupCounts(tenantId, from, end, EVERYTHING, plan, field, null))!;
  }

  async fields(tenantId: string): Promise<FieldInfo[]> {
    const { rows } =
      await sql<FieldInfo>`SELECT name, type FROM log_fields WHERE tenant_id = ${tenantId} ORDER BY ${this.dialect.fieldNameOrder}`.execute(
        this.reads,
      );
    const fixed = new Set<string>(FIXED_FIELDS.map((field) => field.name));
    return [...FIXED_FIELDS.map((field) => ({ ...field })), ...rows.filter((row) => !fixed.has(row.name))];
  }

  async distinct(request: DistinctRequest): Promise<{ value: string; count: number }[]> {
    const field = resolveField(request.field);
    if (field.kind === 'timestamp') throw new QuerySyntaxError(`${request.field} has no distinct values`, 0);
    const from = await this.#visibleFrom(request.tenantId, request.from ?? Number.MIN_SAFE_INTEGER);
    const end = (request.to ?? Number.MAX_SAFE_INTEGER - 1) + 1;
    const values = new Map<string, number>();
    const add = (value: string | number | null, count: number): void => {
      if (value === null) return;
      const key = String(value);
      values.set(key, (values.get(key) ?? 0) + count);
    };

    if (rollupColumn(field)) {
      // Few values, answered from the per-minute rollups (plus the ragged minutes at the edges).
      const counts = await this.#everyEntryCounts(request.tenantId, from, end, field);
      for (const row of counts) add(row.group ?? null, row.count);
      return sortDistinct(values, request.q, request.limit);
    }
    if (field.kind === 'attribute' && field.name === '_index') {
      // The indexes and their entries (`_cat/indices`): from the index rollups where they count every entry.
      const counts = await this.#indexCounts(request.tenantId, from, end, field);
      if (counts !== null) {
        for (const [idx, n] of counts) if (idx !== '') add(idx, n);
        return sortDistinct(values, request.q, request.limit);
      }
    }
    for (const row of await this.#distinctOnRows(request.tenantId, from, end, field, request.q, request.limit)) add(row.value, row.n);
    return sortDistinct(values, request.q, request.limit);
  }

  /** A field's values in [from, end) and their entries, read from the rows: the most frequent `limit` (null: all). */
  async #distinctOnRows(
    tenantId: string,
    from: number,
    end: number,
    field: FieldRef,
    q: string | undefined,
    limit: number | null,
  ): Promise<{ value: string | number; n: number }[]> {
    const plan = await this.#plan(tenantId, from, end, EVERYTHING);
    if (plan === null) return [];
    const value = plan.fields.value(field);
    const needle = q === undefined || q === '' ? sql`` : sql` AND ${this.dialect.containsIgnoringCase(value, q)}`;
    const { rows } = await sql<{ value: string | number; n: number | string }>`
      SELECT ${value} AS value, count(*) AS n FROM ${await this.rowsOf(plan, value)} l
      WHERE ${plan.where} AND ${value} IS NOT NULL${needle}
      GROUP BY 1 ORDER BY 2 DESC, 1 ASC${limit === null ? sql`` : sql` LIMIT ${limit}`}`.execute(this.reads);
    return rows.map((row) => ({ value: row.value, n: Number(row.n) }));
  }

  /**
   * Entries of [from, end) by their index rollup key ('' for none): the whole minutes from the index
   * rollups, the ragged ones at the edges from the rows; null when the rollups do not count every
   * entry of those minutes (rollups.ts indexRollupCounts), for the caller to read the rows.
   */
  async #indexCounts(tenantId: string, from: number, end: number, field: FieldRef): Promise<Map<string, number> | null> {
    if (from >= end) return new Map();
    const { minutes, edges } = splitByMinute(from, end - 1);
    const counts = minutes === null ? new Map<string, number>() : await indexRollupCounts(this.reads, this.dialect, tenantId, minutes);
    if (counts === null) return null;
    for (const [edgeFrom, edgeEnd] of edges) {
      for (const row of await this.#distinctOnRows(tenantId, edgeFrom, edgeEnd, field, undefined, null)) {
        const idx = String(row.value);
        counts.set(idx, (counts.get(idx) ?? 0) + row.n);
      }
    }
    return counts;
  }

  async fieldStats(input: FieldStatsRequest): Promise<FieldStats> {
    const request = normalizeRange(input);
    const field = resolveField(request.field);
    if (field.kind === 'timestamp') throw new QuerySyntaxError(`${request.field} has no distinct values`, 0);
    const from = await this.#visibleFrom(request.tenantId, request.from);
    const condition = request.condition ?? EVERYTHING;
    // Level, service or host under a condition of level, service and host (in)equalities: from the rollups.
    const column = rollupColumn(field);
    const rollups = column === undefined ? null : rollupPlan(condition, column);
    const counts =
      rollups === null ? null : await this.#rollupCounts(request.tenantId, from, request.to + 1, condition, rollups, field, null);
    if (counts !== null) return rolledUpStats(counts, request.limit);
    const byValue =
      column === undefined ? null : await this.#countsValueByValue(request.tenantId, from, request.to + 1, condition, null, field);
    if (byValue !== null) return rolledUpStats(byValue, request.limit);
    const plan = await this.#plan(request.tenantId, from, request.to + 1, condition);
    if (plan === null) return { matched: 0, counted: 0, present: 0, distinct: 0, values: [] };
    const value = plan.fields.value(field);
    if (request.sample !== undefined) {
      // The newest `sample` matches; only when there are more is every match counted (its rows are not read).
      const newest = await this.newestMatches(plan, request.sample, value);
      const stats = await this.#countValues(newest.rows, newest.where, value, request.limit);
      if (!newest.more) return { ...stats, matched: stats.counted };
      const { total } = await this.#countMatches(request.tenantId, from, request.to + 1, condition, plan, undefined);
      return { ...stats, matched: total };
    }
    const stats = await this.#countValues(await this.rowsOf(plan, value), plan.where, value, request.limit);
    return { ...stats, matched: stats.counted };
  }

  /**
   * The rows (`rows`, as `l`, to be read with `where`) of the newest `n` matches of a plan (by time,
   * ties by id), and whether there are more matches (`reads`: what the query computes over them, as
   * for rowsOf).
   */
  protected abstract newestMatches(plan: Plan, n: number, reads: RawBuilder<unknown>): Promise<NewestMatches>;

  /** A field's values over the rows `rows` (as `l`) that `where` keeps: how many rows, how many have it, its distinct and most frequent values. */
  async #countValues(
    rows: RawBuilder<unknown>,
    where: RawBuilder<unknown>,
    value: RawBuilder<unknown>,
    limit: number,
  ): Promise<Omit<FieldStats, 'matched'>> {
    // One pass over the rows, counted by value; from those counts, the totals (the row with `top`
    // 0) and the most frequent values (the others).
    const { rows: found } = await sql<{
      value: string | number | null;
      n: number | string;
      present: number | string | null;
      distinct: number | string | null;
      top: number | string;
    }>`
      WITH counted AS MATERIALIZED (SELECT ${value} AS value, count(*) AS n FROM ${rows} l WHERE ${where} GROUP BY 1)
      SELECT NULL AS value, sum(n) AS n, sum(CASE WHEN value IS NOT NULL THEN n ELSE 0 END) AS present, count(value) AS ${sql.ref('distinct')}, 0 AS top
      FROM counted
      UNION ALL
      SELECT * FROM (SELECT value, n, CAST(NULL AS BIGINT) AS present, CAST(NULL AS BIGINT) AS ${sql.ref('distinct')}, 1 AS top FROM counted
        WHERE value IS NOT NULL ORDER BY n DESC, value ASC LIMIT ${limit}) most`.execute(this.reads);
    const totals = found.find((row) => Number(row.top) === 0);
    const values = new Map<string, number>();
    for (const row of found) if (Number(row.top) === 1) values.set(String(row.value), (values.get(String(row.value)) ?? 0) + Number(row.n));
    return {
      counted: Number(totals?.n ?? 0),
      present: Number(totals?.present ?? 0),
      distinct: Number(totals?.distinct ?? 0),
      values: sortDistinct(values, undefined, limit),
    };
  }

  async topMessages({ tenantId, from, to, levels, limit }: TopMessagesRequest): Promise<TopMessage[]> {
    const ofLevels: Condition = {
      kind: 'or',
      children: levels.map((level) => ({ kind: 'equals', field: { kind: 'column', column: 'level' }, value: level })),
    };
    const plan = levels.length === 0 ? null : await this.#plan(tenantId, await this.#visibleFrom(tenantId, from), to, ofLevels);
    if (plan === null) return [];
    const [range, source] = [plan.where, await this.rowsOf(plan, sql`l.message, l.ts, l.service`)];
    const { rows } = await sql<{ message: string; n: number | string; last_seen: number | string }>`
      SELECT l.message, count(*) AS n, max(l.ts) AS last_seen FROM ${source} l WHERE ${range}
      GROUP BY l.message ORDER BY 2 DESC, 1 ASC LIMIT ${limit}`.execute(this.reads);
    if (rows.length === 0) return [];
    // One more query for the services of those messages.
    const { rows: pairs } = await sql<{ message: string; service: string }>`
      SELECT DISTINCT l.message, l.service FROM ${source} l WHERE ${range} AND l.service IS NOT NULL
        AND l.message IN (${sql.join(rows.map((row) => sql`${row.message}`))})
      ORDER BY 1, 2`.execute(this.reads);
    return rows.map((row) => ({
      message: row.message,
      count: Number(row.n),
      lastSeen: Number(row.last_seen),
      services: pairs
        .filter((pair) => pair.message === row.message)
        .slice(0, 5)
        .map((pair) => pair.service),
    }));
  }

  async groupCounts({ tenantId, from, to, groups, limit }: GroupCountsRequest): Promise<GroupCount[]> {
    const plan = await this.#plan(tenantId, await this.#visibleFrom(tenantId, from), to, EVERYTHING);
    if (plan === null) return [];
    const keys = groups.map((names) => {
      const values = names.map((name) => plan.fields.value(resolveField(name)));
      return values.length === 1 ? values[0]! : sql`coalesce(${sql.join(values)})`;
    });
    const { rows } = await sql<Record<string, string | number | null>>`
      SELECT ${sql.join(keys.map((key, index) => sql`${key} AS ${sql.ref(`k${index}`)}`))}, count(*) AS n, max(l.ts) AS last_seen
      FROM ${await this.rowsOf(plan, sql`${sql.join(keys)}, l.ts`)} l WHERE ${plan.where}
      GROUP BY ${sql.join(keys.map((_, index) => sql.lit(index + 1)))} ORDER BY ${sql.lit(keys.length + 1)} DESC LIMIT ${limit}`.execute(
      this.reads,
    );
    return rows.map((row) => ({
      keys: keys.map((_, index) => (row[`k${index}`] === null || row[`k${index}`] === undefined ? null : String(row[`k${index}`]))),
      count: Number(row.n),
      lastSeen: Number(row.last_seen),
    }));
  }

  async aggregate(input: AggregateRequest): Promise<AggregateRow[]> {
    const request = normalizeRange(input);
    const from = await this.#visibleFrom(request.tenantId, request.from);
    const plan = await this.#plan(request.tenantId, from, request.to + 1, request.condition ?? EVERYTHING);
    if (plan === null) return [];
    const keys = this.#groupKeys(plan, request.groups);
    const metrics = request.metrics.map((metric) => {
      const field = resolveField(metric.field);
      if (metric.kind === 'cardinality') return sql`count(DISTINCT ${plan.fields.value(field)})`;
      return sql`${sql.raw(metric.kind)}(${plan.fields.number(field)})`;
    });
    const selected = [...keys, sql`count(*)`, ...metrics].map((expression, index) => sql`${expression} AS ${sql.ref(`c${index}`)}`);
    const { rows } = await sql<Record<string, unknown>>`SELECT ${sql.join(selected)} FROM ${await this.rowsOf(plan, sql.join(selected))} l
      WHERE ${plan.where} ${keys.length > 0 ? sql`GROUP BY ${sql.join(keys.map((_, index) => sql.lit(index + 1)))}` : sql``}
      LIMIT ${request.maxGroups + 1}`.execute(this.reads);
    if (rows.length > request.maxGroups) throw new RangeError(`more than ${request.maxGroups} groups`);
    return rows.map((row) => ({
      keys: keys.map((_, index) => groupKey(request.groups[index]!, row[`c${index}`])),
      count: Number(row[`c${keys.length}`]),
      metrics: metrics.map((_, index) => numberOrNull(row[`c${keys.length + 1 + index}`])),
    }));
  }

  async numericValues(input: NumericValuesRequest): Promise<{ keys: (number | string | null)[]; value: number }[]> {
    const request = normalizeRange(input);
    const from = await this.#visibleFrom(request.tenantId, request.from);
    const plan = await this.#plan(request.tenantId, from, request.to + 1, request.condition ?? EVERYTHING);
    if (plan === null) return [];
    const keys = this.#groupKeys(plan, request.groups);
    const value = plan.fields.number(resolveField(request.field));
    const selected = [...keys, value].map((expression, index) => sql`${expression} AS ${sql.ref(`c${index}`)}`);
    const { rows } = await sql<Record<string, unknown>>`SELECT ${sql.join(selected)} FROM ${await this.rowsOf(plan, sql.join(selected))} l
      WHERE ${plan.where} AND ${value} IS NOT NULL LIMIT ${request.maxValues + 1}`.execute(this.reads);
    if (rows.length > request.maxValues) throw new RangeError(`more than ${request.maxValues} values`);
    return rows.map((row) => ({
      keys: keys.map((_, index) => groupKey(request.groups[index]!, row[`c${index}`])),
      value: Number(row[`c${keys.length}`]),
    }));
  }

  #groupKeys(plan: Plan, groups: AggregateRequest['groups']): RawBuilder<unknown>[] {
    return groups.map((group) => {
      if (group.kind === 'field') return plan.fields.value(resolveField(group.field));
      if (group.kind === 'calendar') return this.dialect.calendarStart(group.unit);
      if (!Number.isSafeInteger(group.intervalMs) || group.intervalMs <= 0)
        throw new RangeError('the interval must be a positive whole number of ms');
      const interval = this.dialect.int(group.intervalMs);
      // Floor, also before 1970 (% keeps the sign of the dividend).
      return sql`(l.ts - ((l.ts % ${interval}) + ${interval}) % ${interval})`;
    });
  }

  async ping(): Promise<void> {
    await sql`SELECT 1 FROM log_rollups LIMIT 1`.execute(this.writes);
  }
}

/** What the rollups count by: level, service and host filters, in a table that has their columns. */
interface RollupPlan {
  filters: readonly RollupFilter[];
  table: RollupTable;
  /** An `_index` filter ANDed with them, settled from the index rollups (rollups.ts, indexCoverage); null: none. */
  indexTest: IndexTest | null;
}

/**
 * How the rollups count a condition's matches grouped by `group`, or null when they cannot. An
 * `_index` filter (what a named index or pattern adds, elastic-dsl.ts's indexQuery) ANDed with
 * filters the rollups count is kept apart, for #rollupCounts to settle.
 */
function rollupPlan(condition: Condition, group: RollupColumn | null): RollupPlan | null {
  const filters = rollupFilters(condition);
  if (filters !== null) {
    const table = rollupTable(filters, group);
    return table === null ? null : { filters, table, indexTest: null };
  }
  const split = splitIndexFilter(condition);
  const rest = split === null ? null : rollupFilters(split.rest);
  const table = rest === null ? null : rollupTable(rest, group);
  return split === null || rest === null || table === null ? null : { filters: rest, table, indexTest: split.test };
}

function groupKey(group: AggregateRequest['groups'][number], value: unknown): number | string | null {
  if (value === null || value === undefined) return null;
  return group.kind === 'field' ? String(value as string | number) : Number(value);
}

function numberOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(value);
}

/** The counts LogStoreCore.indexCountsByValue is asked for: a condition's matches in [from, end), and those of each value of `column`. */
export interface ValueCountsAsked {
  tenantId: string;
  from: number;
  end: number;
  condition: Condition;
  column: NonNullable<ReturnType<typeof rollupColumn>>;
  values: readonly string[];
  intervalMs: number | null;
}

/** What LogStoreCore.newestMatches finds. */
export interface NewestMatches {
  rows: RawBuilder<unknown>;
  where: RawBuilder<unknown>;
  /** More matches than the newest asked for. */
  more: boolean;
}

export interface BoundedTotal {
  total: number;
  totalRelation: 'eq' | 'gte';
}

/** A count of matches as a search reports it: past `bound`, the bound as a lower bound. */
export function boundedTotal(total: number, bound: number | undefined): BoundedTotal {
  return bound !== undefined && total > bound ? { total: bound, totalRelation: 'gte' } : { total, totalRelation: 'eq' };
}

/** Bucket starts from the one holding `from` to the one holding `to`, aligned to the epoch. */
export function bucketStarts(from: number, to: number, intervalMs: number): number[] {
  if (!Number.isInteger(intervalMs) || intervalMs <= 0) throw new RangeError('interval must be a positive whole number of milliseconds');
  const first = from - mod(from, intervalMs);
  const last = to - mod(to, intervalMs);
  const count = (last - first) / intervalMs + 1;
  if (count > MAX_BUCKETS) throw new RangeError(`more than ${MAX_BUCKETS} histogram buckets: choose a larger interval`);
  return Array.from({ length: Math.max(0, count) }, (_, index) => first + index * intervalMs);
}

export interface BucketCount {
  bucket: number;
  group?: string | null;
  count: number;
}

function fillBuckets(starts: readonly number[], counts: readonly BucketCount[], grouped: boolean, nullGroup: string): HistogramBucket[] {
  const buckets = new Map<number, HistogramBucket>(
    starts.map((ts) => [ts, grouped ? { ts, count: 0, groups: dict<number>() } : { ts, count: 0 }]),
  );
  for (const row of counts) {
    const bucket = buckets.get(row.bucket);
    if (!bucket) continue;
    bucket.count += row.count;
    if (grouped) {
      const key = row.group ?? nullGroup;
      bucket.groups![key] = (bucket.groups![key] ?? 0) + row.count;
    }
  }
  return [...buckets.values()];
}

/** A stored entry as a driver returns it: ids and times may be strings (int8), attributes JSON text (SQLite). */
export interface EntryRow extends Omit<PreparedEntry, 'ts' | 'attributes'> {
  id: number | string;
  tenant_id: string;
  ts: number | string;
  attributes: string | Record<string, AttributeValue>;
}

export function toStoredEntry(row: EntryRow): StoredLogEntry {
  const entry: StoredLogEntry = {
    id: String(row.id),
    tenant_id: row.tenant_id,
    timestamp: Number(row.ts),
    message: row.message,
    attributes: typeof row.attributes === 'string' ? (JSON.parse(row.attributes) as Record<string, AttributeValue>) : row.attributes,
  };
  if (row.level !== null) entry.level = row.level;
  if (row.service !== null) entry.service = row.service;
  if (row.host !== null) entry.host = row.host;
  if (row.trace_id !== null) entry.trace_id = row.trace_id;
  if (row.span_id !== null) entry.span_id = row.span_id;
  return entry;
}

/** Values of a histogram's group counted one at a time in the index (#countsValueByValue) at most; more are grouped on the rows. */
const GROUP_VALUES_COUNTED_APART = 8;

/** A field's statistics from counts per value (null or '': entries without it, as the rollups keep them). */
function rolledUpStats(counts: readonly BucketCount[], limit: number): FieldStats {
  const values = new Map<string, number>();
  let matched = 0;
  for (const row of counts) {
    matched += row.count;
    if (row.group === null || row.group === undefined || row.group === '') continue;
    const value = String(row.group);
    values.set(value, (values.get(value) ?? 0) + row.count);
  }
  let present = 0;
  for (const n of values.values()) present += n;
  return { matched, counted: matched, present, distinct: values.size, values: sortDistinct(values, undefined, limit) };
}

function sortDistinct(values: Map<string, number>, q: string | undefined, limit: number): { value: string; count: number }[] {
  const needle = q?.toLowerCase();
  return [...values.entries()]
    .filter(([value]) => value !== '' && (needle === undefined || value.toLowerCase().includes(needle)))
    .sort((a, b) => b[1] - a[1] || compareText(a[0], b[0]))
    .slice(0, limit)
    .map(([value, count]) => ({ value, count }));
}

/** Whole milliseconds and a page of at least 1, whatever the caller passed. */
function normalizeRange<T extends { from: number; to: number; page?: number; limit?: number }>(request: T): T {
  const normalized = { ...request, from: Math.floor(request.from), to: Math.floor(request.to) };
  if (request.page !== undefined) normalized.page = Math.max(1, Math.floor(request.page));
  if (request.limit !== undefined) normalized.limit = Math.max(0, Math.floor(request.limit));
  return normalized;
}
