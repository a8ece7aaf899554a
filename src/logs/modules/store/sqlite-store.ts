import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { DistinctRequest, FieldInfo, HistogramBucket, HistogramRequest, LogEntry, LogStore, SearchRequest, SearchResult } from './log-store.js';
import { FIXED_FIELDS, resolveField } from './fields.js';
import {
  DAY,
  MINUTE,
  FieldCatalogueCache,
  bucketStarts,
  fillBuckets,
  mod,
  normalizeRange,
  prepareEntries,
  rollupFilters,
  rollupRows,
  sortDistinct,
  splitByMinute,
  toStoredEntry,
  type BucketCount,
  type EntryRow,
} from './common.js';
import { both, filtersToCondition, hasText, toCondition, type Condition } from './query/condition.js';
import { compileSqlite, ftsMatchExpression, sqliteFieldValue, sqliteSortExpression } from './query/compile-sqlite.js';
import { parseQuery } from './query/parser.js';
import { QuerySyntaxError } from './log-store.js';
import { ftsBody } from './tokenize.js';

/** Rows deleted per retention transaction, so ingestion is never blocked for long. */
const RETENTION_BATCH = 5_000;

/**
 * The SQLite log store: one table, a contentless FTS5 index of our tokens keyed by the entry id,
 * per-minute rollups and a field catalogue (docs/log-store.md).
 */
export class SqliteLogStore implements LogStore {
  readonly #fields = new FieldCatalogueCache();

  /** See DRIVE_FROM_TEXT_ABOVE; tests lower it to cover both plans. */
  readonly #textFirstAbove: number;

  /** Reads (search, histogram, fields, distinct): the read pool in the service (read-pool/), else `db`. */
  readonly #reads: Kysely<any>;

  constructor(
    private readonly db: Kysely<any>,
    options: { textFirstAboveIds?: number | undefined; reads?: Kysely<any> | undefined } = {},
  ) {
    this.#textFirstAbove = options.textFirstAboveIds ?? DRIVE_FROM_TEXT_ABOVE;
    this.#reads = options.reads ?? db;
  }

  async append(tenantId: string, entries: readonly LogEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const prepared = prepareEntries(entries);
    const rows = JSON.stringify(
      prepared.map((entry) => [entry.ts, entry.level, entry.service, entry.host, entry.trace_id, entry.span_id, entry.message, entry.attributes]),
    );
    const bodies = JSON.stringify(prepared.map((entry) => ftsBody(entry.message)));
    const rollups = JSON.stringify(rollupRows(prepared).map((row) => [row.minute, row.level, row.service, row.count]));
    const newFields = this.#fields.newFields(tenantId, prepared);
    const ranges = minuteIndexRanges(prepared);

    // One IMMEDIATE transaction per batch: the write lock is taken up front (no deadlock on upgrade),
    // and with WAL + synchronous=FULL the COMMIT returns only once the batch is on disk.
    await this.db.connection().execute(async (connection) => {
      await sql`BEGIN IMMEDIATE`.execute(connection);
      try {
        const { rows: top } = await sql<{ top: number }>`SELECT coalesce(max(id), 0) AS top FROM log_entries`.execute(connection);
        const base = Number(top[0]?.top ?? 0) + 1;
        // json_each turns one bound JSON array into rows: one statement per table, whatever the batch size.
        await sql`INSERT INTO log_entries (id, tenant_id, ts, level, service, host, trace_id, span_id, message, attributes)
          SELECT ${base} + key, ${tenantId}, value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5, value ->> 6, value -> 7
          FROM json_each(${rows})`.execute(connection);
        await sql`INSERT INTO log_entries_fts (rowid, body) SELECT ${base} + key, value FROM json_each(${bodies})`.execute(connection);
        await sql`INSERT INTO log_id_ranges (tenant_id, minute, min_id, max_id)
          SELECT ${tenantId}, value ->> 0, ${base} + (value ->> 1), ${base} + (value ->> 2) FROM json_each(${ranges}) WHERE true
          ON CONFLICT (tenant_id, minute) DO UPDATE SET min_id = min(min_id, excluded.min_id), max_id = max(max_id, excluded.max_id)`.execute(connection);
        await sql`INSERT INTO log_rollups (tenant_id, minute, level, service, count)
          SELECT ${tenantId}, value ->> 0, value ->> 1, value ->> 2, value ->> 3 FROM json_each(${rollups}) WHERE true
          ON CONFLICT (tenant_id, minute, level, service) DO UPDATE SET count = count + excluded.count`.execute(connection);
        if (newFields.length > 0) {
          await sql`INSERT INTO log_fields (tenant_id, name, type)
            SELECT ${tenantId}, value ->> 0, value ->> 1 FROM json_each(${JSON.stringify(newFields.map((field) => [field.name, field.type]))}) WHERE true
            ON CONFLICT (tenant_id, name) DO UPDATE SET type = 'string' WHERE log_fields.type <> excluded.type`.execute(connection);
        }
        await sql`COMMIT`.execute(connection);
      } catch (error) {
        await sql`ROLLBACK`.execute(connection).catch(() => undefined);
        throw error;
      }
    });
    this.#fields.remember(tenantId, newFields);
  }

  async search(input: SearchRequest): Promise<SearchResult> {
    const request = normalizeRange(input);
    const condition = requestCondition(request.query, request.filters);
    const plan = await this.#where(request.tenantId, request.from, request.to + 1, condition);
    if (plan === null) return { entries: [], total: 0 };
    const { where, textFirst } = plan;
    const offset = (request.page - 1) * request.limit;
    const order = request.sort?.order === 'asc' ? sql`ASC` : sql`DESC`;
    const sortField = resolveField(request.sort?.field ?? '@timestamp');
    const orderBy =
      sortField.kind === 'timestamp'
        ? sql`l.ts ${order}, l.id ${order}`
        : sql`${sqliteSortExpression(sortField)} ${order} NULLS LAST, l.ts ${order}, l.id ${order}`;
    const columns = sql`l.id, l.tenant_id, l.ts, l.level, l.service, l.host, l.trace_id, l.span_id, l.message, l.attributes`;

    if (textFirst) {
      // Every match is read to sort it anyway: count in the same pass (one FTS5 lookup, not two).
      const { rows } = await sql<EntryRow & { total: number }>`SELECT ${columns}, count(*) OVER () AS total
        FROM log_entries l WHERE ${where} ORDER BY ${orderBy} LIMIT ${request.limit} OFFSET ${offset}`.execute(this.#reads);
      if (rows.length > 0) return { entries: rows.map(toStoredEntry), total: Number(rows[0]!.total) };
    }
    const { rows: counted } = await sql<{ total: number }>`SELECT count(*) AS total FROM log_entries l WHERE ${where}`.execute(this.#reads);
    const total = Number(counted[0]?.total ?? 0);
    if (total === 0 || offset >= total || textFirst) return { entries: [], total };
    const { rows } = await sql<EntryRow>`SELECT ${columns}
      FROM log_entries l WHERE ${where} ORDER BY ${orderBy} LIMIT ${request.limit} OFFSET ${offset}`.execute(this.#reads);
    return { entries: rows.map(toStoredEntry), total };
  }

  async histogram(input: HistogramRequest): Promise<HistogramBucket[]> {
    const request = normalizeRange(input);
    const starts = bucketStarts(request.from, request.to, request.intervalMs);
    const condition = requestCondition(request.query, request.filters);
    const groupField = request.groupBy === undefined ? undefined : resolveField(request.groupBy);
    const interval = request.intervalMs;
    const counts: BucketCount[] = [];

    const rawCounts = async (from: number, end: number): Promise<void> => {
      const plan = await this.#where(request.tenantId, from, end, condition);
      if (plan === null) return;
      const { where } = plan;
      const { rows } = await sql<{ bucket: number; grp?: string | null; n: number }>`
        SELECT l.ts - (l.ts % ${interval}) AS bucket${groupField ? sql`, ${sqliteFieldValue(groupField)} AS grp` : sql``}, count(*) AS n
        FROM log_entries l WHERE ${where} GROUP BY 1${groupField ? sql`, 2` : sql``}`.execute(this.#reads);
      for (const row of rows) counts.push({ bucket: Number(row.bucket), group: row.grp ?? null, count: Number(row.n) });
    };

    const filters = rollupFilters(condition);
    const groupColumn = groupField === undefined ? null : groupField.kind === 'column' && (groupField.column === 'level' || groupField.column === 'service') ? groupField.column : undefined;
    if (filters !== null && groupColumn !== undefined && interval % 60_000 === 0) {
      const { minutes, edges } = splitByMinute(request.from, request.to);
      for (const [from, end] of edges) await rawCounts(from, end);
      if (minutes) {
        const filterSql = filters.map((filter) => sql` AND ${sql.ref(filter.column)} = ${filter.value}`);
        const { rows } = await sql<{ bucket: number; grp?: string; n: number }>`
          SELECT minute - (minute % ${interval}) AS bucket${groupColumn ? sql`, ${sql.ref(groupColumn)} AS grp` : sql``}, sum(count) AS n
          FROM log_rollups WHERE tenant_id = ${request.tenantId} AND minute >= ${minutes[0]} AND minute < ${minutes[1]}${sql.join(filterSql, sql``)}
          GROUP BY 1${groupColumn ? sql`, 2` : sql``}`.execute(this.#reads);
        for (const row of rows) counts.push({ bucket: Number(row.bucket), group: row.grp === '' ? null : (row.grp ?? null), count: Number(row.n) });
      }
    } else {
      await rawCounts(request.from, request.to + 1);
    }
    return fillBuckets(starts, counts, groupField !== undefined);
  }

  async fields(tenantId: string): Promise<FieldInfo[]> {
    const { rows } = await sql<FieldInfo>`SELECT name, type FROM log_fields WHERE tenant_id = ${tenantId} ORDER BY name`.execute(this.#reads);
    const fixed = new Set<string>(FIXED_FIELDS.map((field) => field.name));
    return [...FIXED_FIELDS.map((field) => ({ ...field })), ...rows.filter((row) => !fixed.has(row.name))];
  }

  async distinct(request: DistinctRequest): Promise<{ value: string; count: number }[]> {
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

    if (field.kind === 'column' && (field.column === 'level' || field.column === 'service')) {
      // Few values, answered from the per-minute rollups (plus the ragged minutes at the edges).
      const column = sql.ref(field.column);
      const { minutes, edges } = splitByMinute(from, to);
      for (const [edgeFrom, edgeEnd] of edges) {
        const { rows } = await sql<{ value: string | null; n: number }>`SELECT ${column} AS value, count(*) AS n FROM log_entries
          WHERE tenant_id = ${request.tenantId} AND ts >= ${edgeFrom} AND ts < ${edgeEnd} GROUP BY 1`.execute(this.#reads);
        for (const row of rows) add(row.value, Number(row.n));
      }
      if (minutes) {
        const { rows } = await sql<{ value: string; n: number }>`SELECT ${column} AS value, sum(count) AS n FROM log_rollups
          WHERE tenant_id = ${request.tenantId} AND minute >= ${minutes[0]} AND minute < ${minutes[1]} GROUP BY 1`.execute(this.#reads);
        for (const row of rows) add(row.value, Number(row.n));
      }
      return sortDistinct(values, request.q, request.limit);
    }

    const value = sqliteFieldValue(field);
    const needle = request.q === undefined || request.q === '' ? sql`` : sql` AND instr(lower(${value}), ${request.q.toLowerCase()}) > 0`;
    const { rows } = await sql<{ value: string | number; n: number }>`SELECT ${value} AS value, count(*) AS n FROM log_entries l
      WHERE l.tenant_id = ${request.tenantId} AND l.ts >= ${from} AND l.ts <= ${to} AND ${value} IS NOT NULL${needle}
      GROUP BY 1 ORDER BY 2 DESC, 1 ASC LIMIT ${request.limit}`.execute(this.#reads);
    for (const row of rows) add(row.value, Number(row.n));
    return sortDistinct(values, request.q, request.limit);
  }

  async removeOlderThan(tenantId: string, before: number): Promise<number> {
    const cutoff = before - mod(before, DAY);
    let removed = 0;
    for (;;) {
      const batch = await this.db.connection().execute(async (connection) => {
        await sql`BEGIN IMMEDIATE`.execute(connection);
        try {
          const { rows } = await sql<{ id: number }>`SELECT id FROM log_entries WHERE tenant_id = ${tenantId} AND ts < ${cutoff} LIMIT ${RETENTION_BATCH}`.execute(connection);
          if (rows.length > 0) {
            const ids = JSON.stringify(rows.map((row) => row.id));
            await sql`DELETE FROM log_entries_fts WHERE rowid IN (SELECT value FROM json_each(${ids}))`.execute(connection);
            await sql`DELETE FROM log_entries WHERE id IN (SELECT value FROM json_each(${ids}))`.execute(connection);
          } else {
            await sql`DELETE FROM log_rollups WHERE tenant_id = ${tenantId} AND minute < ${cutoff}`.execute(connection);
            await sql`DELETE FROM log_id_ranges WHERE tenant_id = ${tenantId} AND minute < ${cutoff}`.execute(connection);
          }
          await sql`COMMIT`.execute(connection);
          return rows.length;
        } catch (error) {
          await sql`ROLLBACK`.execute(connection).catch(() => undefined);
          throw error;
        }
      });
      removed += batch;
      if (batch === 0) return removed;
    }
  }

  /**
   * The WHERE clause of a search over [from, end). With text terms, first find the id window of the
   * tenant's rows in that range, so the FTS5 lookup stays inside it; null when the range is empty.
   */
  async #where(tenantId: string, from: number, end: number, condition: Condition): Promise<{ where: RawBuilder<unknown>; textFirst: boolean } | null> {
    let idWindow = { min: 0, max: 0 };
    if (hasText(condition)) {
      const { rows } = await sql<{ lo: number | null; hi: number | null }>`SELECT min(min_id) AS lo, max(max_id) AS hi FROM log_id_ranges
        WHERE tenant_id = ${tenantId} AND minute >= ${from - mod(from, MINUTE)} AND minute < ${end}`.execute(this.#reads);
      const window = rows[0];
      if (!window || window.lo === null || window.hi === null) return null;
      idWindow = { min: Number(window.lo), max: Number(window.hi) };
    }
    const matches = compileSqlite(condition, { idWindow });
    if (idWindow.max - idWindow.min > this.#textFirstAbove && hasRequiredTextLookup(condition)) {
      // A wide range: walking (tenant_id, ts) would visit every entry of it, while every result must
      // be among the full-text matches in the window. The unary + keeps SQLite off that index, so it
      // drives the query from the FTS5 matches and checks tenant and time on each row.
      return { where: sql`+l.tenant_id = ${tenantId} AND +l.ts >= ${from} AND +l.ts < ${end} AND (${matches})`, textFirst: true };
    }
    return { where: sql`l.tenant_id = ${tenantId} AND l.ts >= ${from} AND l.ts < ${end} AND (${matches})`, textFirst: false };
  }
}

/**
 * Above this many ids in the window, a query that requires a full-text match is driven from the
 * FTS5 matches rather than from the time index (measured: docs/benchmarks.md, "Log store").
 */
const DRIVE_FROM_TEXT_ABOVE = 200_000;

/** True when every result must satisfy one FTS5 lookup: a text condition, or AND with one. */
function hasRequiredTextLookup(condition: Condition): boolean {
  if (condition.kind === 'text') return ftsMatchExpression(condition.expr) !== null;
  if (condition.kind === 'and') return condition.children.some(hasRequiredTextLookup);
  return false;
}

/** Per minute of the batch: [minute, first index, last index] (ids are base + index). */
function minuteIndexRanges(entries: readonly { ts: number }[]): string {
  const ranges = new Map<number, [number, number, number]>();
  entries.forEach((entry, index) => {
    const minute = entry.ts - mod(entry.ts, MINUTE);
    const range = ranges.get(minute);
    if (range) range[2] = index;
    else ranges.set(minute, [minute, index, index]);
  });
  return JSON.stringify([...ranges.values()]);
}

export function requestCondition(query: string | undefined, filters: SearchRequest['filters']): Condition {
  return both(toCondition(parseQuery(query ?? '')), filtersToCondition(filters ?? []));
}
