import { sql, type Kysely, type RawBuilder } from 'kysely';
import { FIXED_FIELDS, resolveField, type FieldRef } from './fields.js';
import {
  QuerySyntaxError,
  type AggregateRequest,
  type AggregateRow,
  type AppendResult,
  type CalendarUnit,
  type NumericValuesRequest,
  type AttributeValue,
  type DistinctRequest,
  type FieldInfo,
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
import { compareText, mod, splitByMinute } from './minutes.js';
import { both, filtersToCondition, toCondition, type Condition } from './query/condition.js';
import { parseQuery } from './query/parser.js';
import type { PreparedEntry } from './write-batch.js';

/** A histogram with more buckets than this is refused (the HTTP layer picks coarser intervals). */
export const MAX_BUCKETS = 10_000;

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
  /** A field's value in a row of `log_entries l`, as text (null when absent). */
  fieldValue: (field: FieldRef) => RawBuilder<unknown>;
  /** The ORDER BY expression of a field. */
  sortExpression: (field: FieldRef) => RawBuilder<unknown>;
  /** `value` contains `needle`, case-insensitively. */
  containsIgnoringCase: (value: RawBuilder<unknown>, needle: string) => RawBuilder<unknown>;
  /** ORDER BY of field names: code-unit order on both. */
  readonly fieldNameOrder: RawBuilder<unknown>;
  /** A field's value as a number (JSON numbers and numeric strings), else NULL. */
  numberValue: (field: FieldRef) => RawBuilder<unknown>;
  /** The start (epoch ms, UTC) of the calendar week, month, quarter or year of `l.ts`. */
  calendarStart: (unit: CalendarUnit) => RawBuilder<unknown>;
}

/** The WHERE clause of a read over [from, end); `textFirst`: count the matches in the page's own pass. */
export interface DocumentIdWindow {
  now: () => number;
  windowMs: number;
}

/** A day: shippers retry within minutes; a day covers a shipper that was down overnight. */
export const DEFAULT_DOCUMENT_ID_WINDOW: DocumentIdWindow = { now: Date.now, windowMs: 86_400_000 };

export interface ReadPlan {
  where: RawBuilder<unknown>;
  textFirst: boolean;
}

/**
 * search, histogram, fields and distinct, once for both dialects. A dialect supplies append and
 * removeOlderThan (their storage differs: FTS5 and id windows; hour partitions and tsvector), the
 * WHERE clause of a condition (planWhere) and the expressions of ReadDialect.
 */
export abstract class LogStoreCore implements LogStore {
  protected constructor(
    /** The service's database: writes, and the health check. */
    protected readonly writes: Kysely<any>,
    /** Reads run here (the read pool in the service, read-pool/), else on the service's database. */
    protected readonly reads: Kysely<any>,
    private readonly dialect: ReadDialect,
    /** How long senders' document ids are remembered (LogEntry.documentId). */
    protected readonly documentIds: DocumentIdWindow = DEFAULT_DOCUMENT_ID_WINDOW,
  ) {}

  abstract append(tenantId: string, entries: readonly LogEntry[]): Promise<AppendResult>;
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
    }
  }

  /** The WHERE of a condition over [from, end); null when nothing can match. */
  protected abstract planWhere(tenantId: string, from: number, end: number, condition: Condition): Promise<ReadPlan | null>;

  async search(input: SearchRequest): Promise<SearchResult> {
    const request = normalizeRange(input);
    const plan = await this.planWhere(request.tenantId, request.from, request.to + 1, requestCondition(request.query, request.filters));
    if (plan === null) return { entries: [], total: 0, totalRelation: 'eq' };
    const { where } = plan;
    const offset = request.offset ?? (request.page - 1) * request.limit;
    const order = request.sort?.order === 'asc' ? sql`ASC` : sql`DESC`;
    const sortField = resolveField(request.sort?.field ?? '@timestamp');
    let pageWhere = where;
    if (request.after) {
      if (sortField.kind !== 'timestamp' || !/^\d{1,18}$/.test(request.after.id))
        throw new RangeError('search_after needs a sort on @timestamp');
      const { int } = this.dialect;
      const [ts, id] = [int(Math.floor(request.after.timestamp)), int(Number(request.after.id))];
      const beyond = request.sort?.order === 'asc' ? sql`>` : sql`<`;
      pageWhere = sql`${where} AND (l.ts ${beyond} ${ts} OR (l.ts = ${ts} AND l.id ${beyond} ${id}))`;
    }
    // Every match is read to sort it anyway: count in the same pass (one full-text lookup, not two).
    const textFirst = plan.textFirst && !request.after;
    const orderBy =
      sortField.kind === 'timestamp'
        ? sql`l.ts ${order}, l.id ${order}`
        : sql`${this.dialect.sortExpression(sortField)} ${order} NULLS LAST, l.ts ${order}, l.id ${order}`;
    const columns = sql`l.id, l.tenant_id, l.ts, l.level, l.service, l.host, l.trace_id, l.span_id, l.message, l.attributes`;

    if (textFirst) {
      const { rows } = await sql<EntryRow & { total: number }>`SELECT ${columns}, count(*) OVER () AS total
        FROM log_entries l WHERE ${where} ORDER BY ${orderBy} LIMIT ${request.limit} OFFSET ${offset}`.execute(this.reads);
      if (rows.length > 0) return { entries: rows.map(toStoredEntry), total: Number(rows[0]!.total), totalRelation: 'eq' };
    }
    // Counting stops one past the bound: past it the total is only "at least".
    const bound = request.trackTotal;
    const { rows: counted } = await (
      bound === undefined
        ? sql<{ total: number }>`SELECT count(*) AS total FROM log_entries l WHERE ${where}`
        : sql<{ total: number }>`SELECT count(*) AS total FROM (SELECT 1 FROM log_entries l WHERE ${where} LIMIT ${bound + 1}) bounded`
    ).execute(this.reads);
    const matches = Number(counted[0]?.total ?? 0);
    const totalRelation = bound !== undefined && matches > bound ? 'gte' : 'eq';
    const total = totalRelation === 'gte' ? bound! : matches;
    if (total === 0 || (offset >= total && totalRelation === 'eq' && !request.after) || textFirst)
      return { entries: [], total, totalRelation };
    const { rows } = await sql<EntryRow>`SELECT ${columns}
      FROM log_entries l WHERE ${pageWhere} ORDER BY ${orderBy} LIMIT ${request.limit} OFFSET ${offset}`.execute(this.reads);
    return { entries: rows.map(toStoredEntry), total, totalRelation };
  }

  async histogram(input: HistogramRequest): Promise<HistogramBucket[]> {
    const { int, text, sumOfCounts, fieldValue } = this.dialect;
    const request = normalizeRange(input);
    const starts = bucketStarts(request.from, request.to, request.intervalMs);
    const condition = requestCondition(request.query, request.filters);
    const groupField = request.groupBy === undefined ? undefined : resolveField(request.groupBy);
    const interval = int(request.intervalMs);
    const counts: BucketCount[] = [];

    const rawCounts = async (from: number, end: number): Promise<void> => {
      const plan = await this.planWhere(request.tenantId, from, end, condition);
      if (plan === null) return;
      const { rows } = await sql<{ bucket: number; grp?: string | null; n: number }>`
        SELECT l.ts - (l.ts % ${interval}) AS bucket${groupField ? sql`, ${fieldValue(groupField)} AS grp` : sql``}, count(*) AS n
        FROM log_entries l WHERE ${plan.where} GROUP BY 1${groupField ? sql`, 2` : sql``}`.execute(this.reads);
      for (const row of rows) counts.push({ bucket: Number(row.bucket), group: row.grp ?? null, count: Number(row.n) });
    };

    // Whole minutes filtered and grouped only by level and service come from the per-minute rollups.
    const filters = rollupFilters(condition);
    const groupColumn = groupField === undefined ? null : rollupColumn(groupField);
    if (filters !== null && groupColumn !== undefined && request.intervalMs % 60_000 === 0) {
      const { minutes, edges } = splitByMinute(request.from, request.to);
      for (const [from, end] of edges) await rawCounts(from, end);
      if (minutes) {
        const filterSql = filters.map((filter) => sql` AND ${sql.ref(filter.column)} = ${text(filter.value)}`);
        const { rows } = await sql<{ bucket: number; grp?: string; n: number }>`
          SELECT minute - (minute % ${interval}) AS bucket${groupColumn ? sql`, ${sql.ref(groupColumn)} AS grp` : sql``}, ${sumOfCounts} AS n
          FROM log_rollups WHERE tenant_id = ${request.tenantId} AND minute >= ${int(minutes[0])} AND minute < ${int(minutes[1])}${sql.join(filterSql, sql``)}
          GROUP BY 1${groupColumn ? sql`, 2` : sql``}`.execute(this.reads);
        for (const row of rows)
          counts.push({ bucket: Number(row.bucket), group: row.grp === '' ? null : (row.grp ?? null), count: Number(row.n) });
      }
    } else {
      await rawCounts(request.from, request.to + 1);
    }
    return fillBuckets(starts, counts, groupField !== undefined);
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
    const { int, sumOfCounts, fieldValue, containsIgnoringCase } = this.dialect;
    const field = resolveField(request.field);
    if (field.kind === 'timestamp') throw new QuerySyntaxError(`${request.field} has no distinct values`, 0);
    const from = request.from ?? Number.MIN_SAFE_INTEGER;
    const to = request.to ?? Number.MAX_SAFE_INTEGER - 1;
    const values = new Map<string, number>();
    const add = (value: string | number | null, count: number): void => {
      if (value === null) return;
      const key = String(value);
      values.set(key, (values.get(key) ?? 0) + count);
    };

    const column = rollupColumn(field);
    if (column) {
      // Few values, answered from the per-minute rollups (plus the ragged minutes at the edges).
      const { minutes, edges } = splitByMinute(from, to);
      for (const [edgeFrom, edgeEnd] of edges) {
        const { rows } = await sql<{ value: string | null; n: number }>`SELECT ${sql.ref(column)} AS value, count(*) AS n FROM log_entries
          WHERE tenant_id = ${request.tenantId} AND ts >= ${int(edgeFrom)} AND ts < ${int(edgeEnd)} GROUP BY 1`.execute(this.reads);
        for (const row of rows) add(row.value, Number(row.n));
      }
      if (minutes) {
        const { rows } = await sql<{ value: string; n: number }>`SELECT ${sql.ref(column)} AS value, ${sumOfCounts} AS n FROM log_rollups
          WHERE tenant_id = ${request.tenantId} AND minute >= ${int(minutes[0])} AND minute < ${int(minutes[1])} GROUP BY 1`.execute(
          this.reads,
        );
        for (const row of rows) add(row.value, Number(row.n));
      }
      return sortDistinct(values, request.q, request.limit);
    }

    const value = fieldValue(field);
    const needle = request.q === undefined || request.q === '' ? sql`` : sql` AND ${containsIgnoringCase(value, request.q)}`;
    const { rows } = await sql<{ value: string | number; n: number }>`SELECT ${value} AS value, count(*) AS n FROM log_entries l
      WHERE l.tenant_id = ${request.tenantId} AND l.ts >= ${int(from)} AND l.ts <= ${int(to)} AND ${value} IS NOT NULL${needle}
      GROUP BY 1 ORDER BY 2 DESC, 1 ASC LIMIT ${request.limit}`.execute(this.reads);
    for (const row of rows) add(row.value, Number(row.n));
    return sortDistinct(values, request.q, request.limit);
  }

  async topMessages({ tenantId, from, to, levels, limit }: TopMessagesRequest): Promise<TopMessage[]> {
    const { int } = this.dialect;
    const range = sql`l.tenant_id = ${tenantId} AND l.ts >= ${int(from)} AND l.ts < ${int(to)} AND l.level IN (${sql.join(levels.map((level) => sql`${level}`))})`;
    const { rows } = await sql<{ message: string; n: number | string; last_seen: number | string }>`
      SELECT l.message, count(*) AS n, max(l.ts) AS last_seen FROM log_entries l WHERE ${range}
      GROUP BY l.message ORDER BY 2 DESC, 1 ASC LIMIT ${limit}`.execute(this.reads);
    if (rows.length === 0) return [];
    // One more query for the services of those messages.
    const { rows: pairs } = await sql<{ message: string; service: string }>`
      SELECT DISTINCT l.message, l.service FROM log_entries l WHERE ${range} AND l.service IS NOT NULL
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
    const { int, fieldValue } = this.dialect;
    const keys = groups.map((names) => {
      const values = names.map((name) => fieldValue(resolveField(name)));
      return values.length === 1 ? values[0]! : sql`coalesce(${sql.join(values)})`;
    });
    const { rows } = await sql<Record<string, string | number | null>>`
      SELECT ${sql.join(keys.map((key, index) => sql`${key} AS ${sql.ref(`k${index}`)}`))}, count(*) AS n, max(l.ts) AS last_seen
      FROM log_entries l WHERE l.tenant_id = ${tenantId} AND l.ts >= ${int(from)} AND l.ts < ${int(to)}
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
    const plan = await this.planWhere(request.tenantId, request.from, request.to + 1, requestCondition(request.query, request.filters));
    if (plan === null) return [];
    const keys = this.#groupKeys(request.groups);
    const metrics = request.metrics.map((metric) => {
      const field = resolveField(metric.field);
      if (metric.kind === 'cardinality') return sql`count(DISTINCT ${this.dialect.fieldValue(field)})`;
      return sql`${sql.raw(metric.kind)}(${this.dialect.numberValue(field)})`;
    });
    const selected = [...keys, sql`count(*)`, ...metrics].map((expression, index) => sql`${expression} AS ${sql.ref(`c${index}`)}`);
    const { rows } = await sql<Record<string, unknown>>`SELECT ${sql.join(selected)} FROM log_entries l WHERE ${plan.where}
      ${keys.length > 0 ? sql`GROUP BY ${sql.join(keys.map((_, index) => sql.lit(index + 1)))}` : sql``}
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
    const plan = await this.planWhere(request.tenantId, request.from, request.to + 1, requestCondition(request.query, request.filters));
    if (plan === null) return [];
    const keys = this.#groupKeys(request.groups);
    const value = this.dialect.numberValue(resolveField(request.field));
    const selected = [...keys, value].map((expression, index) => sql`${expression} AS ${sql.ref(`c${index}`)}`);
    const { rows } = await sql<Record<string, unknown>>`SELECT ${sql.join(selected)} FROM log_entries l
      WHERE ${plan.where} AND ${value} IS NOT NULL LIMIT ${request.maxValues + 1}`.execute(this.reads);
    if (rows.length > request.maxValues) throw new RangeError(`more than ${request.maxValues} values`);
    return rows.map((row) => ({
      keys: keys.map((_, index) => groupKey(request.groups[index]!, row[`c${index}`])),
      value: Number(row[`c${keys.length}`]),
    }));
  }

  #groupKeys(groups: AggregateRequest['groups']): RawBuilder<unknown>[] {
    return groups.map((group) => {
      if (group.kind === 'field') return this.dialect.fieldValue(resolveField(group.field));
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

function groupKey(group: AggregateRequest['groups'][number], value: unknown): number | string | null {
  if (value === null || value === undefined) return null;
  return group.kind === 'field' ? String(value as string | number) : Number(value);
}

function numberOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(value);
}

export function requestCondition(query: string | undefined, filters: SearchRequest['filters']): Condition {
  return both(toCondition(parseQuery(query ?? '')), filtersToCondition(filters ?? []));
}

/** `level` and `service`, the columns the rollups keep; undefined for any other field. */
function rollupColumn(field: FieldRef): 'level' | 'service' | undefined {
  return field.kind === 'column' && (field.column === 'level' || field.column === 'service') ? field.column : undefined;
}

/** The level/service equalities a condition consists of, or null when rollups cannot answer it. */
export function rollupFilters(condition: Condition): { column: 'level' | 'service'; value: string }[] | null {
  if (condition.kind === 'all') return [];
  if (condition.kind === 'equals') {
    const column = rollupColumn(condition.field);
    return column ? [{ column, value: condition.value }] : null;
  }
  if (condition.kind === 'and') {
    const parts = condition.children.map(rollupFilters);
    return parts.every((part) => part !== null) ? parts.flat() : null;
  }
  return null;
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

interface BucketCount {
  bucket: number;
  group?: string | null;
  count: number;
}

function fillBuckets(starts: readonly number[], counts: readonly BucketCount[], grouped: boolean): HistogramBucket[] {
  const buckets = new Map<number, HistogramBucket>(starts.map((ts) => [ts, grouped ? { ts, count: 0, groups: {} } : { ts, count: 0 }]));
  for (const row of counts) {
    const bucket = buckets.get(row.bucket);
    if (!bucket) continue;
    bucket.count += row.count;
    if (grouped) {
      const key = row.group ?? '';
      bucket.groups![key] = (bucket.groups![key] ?? 0) + row.count;
    }
  }
  return [...buckets.values()];
}

/** A stored entry as a driver returns it: ids and times may be strings (int8), attributes JSON text (SQLite). */
interface EntryRow extends Omit<PreparedEntry, 'ts' | 'attributes'> {
  id: number | string;
  tenant_id: string;
  ts: number | string;
  attributes: string | Record<string, AttributeValue>;
}

function toStoredEntry(row: EntryRow): StoredLogEntry {
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
