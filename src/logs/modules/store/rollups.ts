import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Condition } from '../query/condition.js';
import type { FieldRef } from '../query/fields.js';
import { HOUR, mod } from './minutes.js';

/**
 * Reads from the per-minute rollups (written with each batch, write-batch.ts): which rollup table
 * can count a condition's matches, and the counts of its whole minutes. Store-core decides when to
 * use them and counts the ragged minutes at a range's edges from the rows.
 */

/** The per-minute rollup tables and the columns each counts by. */
const ROLLUP_TABLES = { log_rollups: ['level', 'service'], log_host_rollups: ['host'] } as const;
export type RollupTable = keyof typeof ROLLUP_TABLES;
/** Each per-minute rollup table's twin by hour (ROLLUP_BUCKETS in write-batch.ts). */
const HOURLY_ROLLUPS: Record<RollupTable, string> = { log_rollups: 'log_rollups_hourly', log_host_rollups: 'log_host_rollups_hourly' };
export type RollupColumn = (typeof ROLLUP_TABLES)[RollupTable][number];
export interface RollupFilter {
  column: RollupColumn;
  value: string;
  /** Counts every other value (`NOT level:info`), none included. */
  negated?: boolean;
}

/** The rolled-up column of a field; undefined for any other field. */
export function rollupColumn(field: FieldRef): RollupColumn | undefined {
  return field.kind === 'column' && (field.column === 'level' || field.column === 'service' || field.column === 'host')
    ? field.column
    : undefined;
}

/** The rollup table that counts by every filtered column and the group column, or null. */
export function rollupTable(filters: readonly RollupFilter[], group: RollupColumn | null): RollupTable | null {
  const needed = [...filters.map((filter) => filter.column), ...(group === null ? [] : [group])];
  for (const [table, columns] of Object.entries(ROLLUP_TABLES) as [RollupTable, readonly RollupColumn[]][]) {
    if (needed.every((column) => columns.includes(column))) return table;
  }
  return null;
}

/** The rolled-up column equalities (and their negations) a condition consists of, or null when rollups cannot answer it. */
export function rollupFilters(condition: Condition): RollupFilter[] | null {
  if (condition.kind === 'all') return [];
  if (condition.kind === 'equals') {
    const column = rollupColumn(condition.field);
    return column ? [{ column, value: condition.value }] : null;
  }
  if (condition.kind === 'not' && condition.child.kind === 'equals') {
    const column = rollupColumn(condition.child.field);
    // The rollups keep "none" as '': `NOT field:""` cannot be told from them.
    return column && condition.child.value !== '' ? [{ column, value: condition.child.value, negated: true }] : null;
  }
  if (condition.kind === 'and') {
    const parts = condition.children.map(rollupFilters);
    return parts.every((part) => part !== null) ? parts.flat() : null;
  }
  return null;
}

/** The dialect's expressions these reads use (store-core's ReadDialect). */
interface RollupSql {
  int: (value: number) => RawBuilder<unknown>;
  text: (value: string) => RawBuilder<unknown>;
  readonly sumOfCounts: RawBuilder<unknown>;
}

/** A read of whole minutes [minutes[0], minutes[1]) from a rollup table. */
export interface MinutesRead {
  tenantId: string;
  minutes: [number, number];
  filters: readonly RollupFilter[];
  table: RollupTable;
  groupColumn: RollupColumn | null;
  /** A whole number of minutes per bucket; null: one bucket, 0. */
  intervalMs: number | null;
}

/** Counts of whole minutes per bucket and group, from the rollup table (and its hourly twin for whole hours). */
export async function rolledUpMinutes(
  reads: Kysely<any>,
  { int, text, sumOfCounts }: RollupSql,
  { tenantId, minutes, filters, table, groupColumn, intervalMs }: MinutesRead,
): Promise<{ bucket: number; group: string | null; count: number }[]> {
  const counts: { bucket: number; group: string | null; count: number }[] = [];
  // Grouped only by what varies: a constant key in GROUP BY made the sort half as slow again.
  const keys = [
    ...(intervalMs === null ? [] : [sql`minute - (((minute % ${int(intervalMs)}) + ${int(intervalMs)}) % ${int(intervalMs)}) AS bucket`]),
    ...(groupColumn === null ? [] : [sql`${sql.ref(groupColumn)} AS grp`]),
  ];
  const filterSql = filters.map((filter) => sql` AND ${sql.ref(filter.column)} ${filter.negated ? sql`<>` : sql`=`} ${text(filter.value)}`);
  // Whole hours from the hourly twin when buckets are whole hours (or there are none): over ten
  // days that is 240 rows a level and service instead of 14,400 (docs/benchmarks.md).
  for (const [name, pieceLo, pieceHi] of pieces(minutes, table, HOURLY_ROLLUPS[table], intervalMs === null || intervalMs % HOUR === 0)) {
    const { rows } = await sql<{ bucket?: number; grp?: string; n: number }>`
      SELECT ${sql.join([...keys, sql`${sumOfCounts} AS n`])}
      FROM ${sql.table(name)} WHERE tenant_id = ${tenantId} AND minute >= ${int(pieceLo)} AND minute < ${int(pieceHi)}${sql.join(filterSql, sql``)}
      ${keys.length > 0 ? sql`GROUP BY ${sql.join(keys.map((_, index) => sql.lit(index + 1)))}` : sql``}`.execute(reads);
    for (const row of rows)
      counts.push({ bucket: Number(row.bucket ?? 0), group: row.grp === '' ? null : (row.grp ?? null), count: Number(row.n) });
  }
  return counts;
}

/** [lo, hi) as [table, from, to) pieces: whole hours from the hourly table when `byHour`, the minutes around them from the other. */
function pieces([lo, hi]: [number, number], table: string, hourlyTable: string, byHour: boolean): [string, number, number][] {
  const [hourLo, hourHi] = [lo + mod(-lo, HOUR), hi - mod(hi, HOUR)];
  const all: [string, number, number][] =
    byHour && hourLo < hourHi
      ? [
          [table, lo, hourLo],
          [hourlyTable, hourLo, hourHi],
          [table, hourHi, hi],
        ]
      : [[table, lo, hi]];
  return all.filter(([, pieceLo, pieceHi]) => pieceLo < pieceHi);
}

/** Whether an entry with this index rollup key (write-batch.ts's indexRollupKey: '' for none) satisfies an `_index` filter. */
export type IndexTest = (idx: string) => boolean;

/**
 * An `_index` filter as the index rollups can settle it: equalities and prefixes (`logs`, `logs-*`,
 * what an index pattern becomes, elastic-dsl.ts's indexQuery), ORed or ANDed, tested as the rows
 * are (compile-sqlite.ts, compile-postgres.ts): an entry without `_index` satisfies none, and only
 * string values are counted (indexRollupKey), which equal a value exactly and start with a prefix
 * as text. Undefined for any other condition.
 */
function indexTest(condition: Condition): IndexTest | undefined {
  if (condition.kind === 'equals' || condition.kind === 'prefix') {
    if (condition.field.kind !== 'attribute' || condition.field.name !== '_index') return undefined;
    const value = condition.value;
    return condition.kind === 'equals' ? (idx) => idx !== '' && idx === value : (idx) => idx !== '' && idx.startsWith(value);
  }
  if (condition.kind === 'and' || condition.kind === 'or') {
    const tests = condition.children.map(indexTest);
    if (tests.some((test) => test === undefined)) return undefined;
    const all = tests as IndexTest[];
    return condition.kind === 'and' ? (idx) => all.every((test) => test(idx)) : (idx) => all.some((test) => test(idx));
  }
  return undefined;
}

/** A condition as its `_index` filter (the ANDed parts that are one) and the rest (`all` when nothing else), or null without one. */
export function splitIndexFilter(condition: Condition): { test: IndexTest; rest: Condition } | null {
  const whole = indexTest(condition);
  if (whole) return { test: whole, rest: { kind: 'all' } };
  if (condition.kind !== 'and') return null;
  const tests: IndexTest[] = [];
  const rest: Condition[] = [];
  for (const child of condition.children) {
    const test = indexTest(child);
    if (test) tests.push(test);
    else rest.push(child);
  }
  if (tests.length === 0) return null;
  return {
    test: (idx) => tests.every((test) => test(idx)),
    rest: rest.length === 0 ? { kind: 'all' } : rest.length === 1 ? rest[0]! : { kind: 'and', children: rest },
  };
}

/**
 * The entries of whole minutes [minutes[0], minutes[1]) by their index rollup key (write-batch.ts's
 * indexRollupKey: '' for none), or null when not known: known when the index rollups count as many
 * entries as the host rollups (both written in each batch's transaction; entries stored before the
 * index rollups existed, or with an `_index` that is not a non-empty string, are not counted by
 * index, which leaves their minutes unknown).
 */
export async function indexRollupCounts(
  reads: Kysely<any>,
  { int }: RollupSql,
  tenantId: string,
  minutes: [number, number],
): Promise<Map<string, number> | null> {
  const selects: RawBuilder<unknown>[] = [];
  for (const [name, lo, hi] of pieces(minutes, 'log_index_rollups', 'log_index_rollups_hourly', true)) {
    selects.push(sql`SELECT 0 AS total, idx, sum(count) AS n FROM ${sql.table(name)}
      WHERE tenant_id = ${tenantId} AND minute >= ${int(lo)} AND minute < ${int(hi)} GROUP BY idx`);
  }
  for (const [name, lo, hi] of pieces(minutes, 'log_host_rollups', 'log_host_rollups_hourly', true)) {
    selects.push(sql`SELECT 1 AS total, '' AS idx, sum(count) AS n FROM ${sql.table(name)}
      WHERE tenant_id = ${tenantId} AND minute >= ${int(lo)} AND minute < ${int(hi)}`);
  }
  const { rows } = await sql<{ total: number; idx: string; n: number | string | null }>`${sql.join(selects, sql` UNION ALL `)}`.execute(
    reads,
  );
  let [entries, counted] = [0, 0];
  const byIndex = new Map<string, number>();
  for (const row of rows) {
    const n = Number(row.n ?? 0);
    if (Number(row.total) === 1) entries += n;
    else if (n > 0) {
      counted += n;
      byIndex.set(row.idx, (byIndex.get(row.idx) ?? 0) + n);
    }
  }
  return counted === entries ? byIndex : null;
}

/**
 * Whether every entry of whole minutes [minutes[0], minutes[1]) satisfies an `_index` filter
 * ('all'), none does ('none'), or neither or not known (null: indexRollupCounts).
 */
export async function indexCoverage(
  reads: Kysely<any>,
  rollupSql: RollupSql,
  tenantId: string,
  minutes: [number, number],
  test: IndexTest,
): Promise<'all' | 'none' | null> {
  const byIndex = await indexRollupCounts(reads, rollupSql, tenantId, minutes);
  if (byIndex === null) return null;
  let [entries, matching] = [0, 0];
  for (const [idx, n] of byIndex) {
    entries += n;
    if (test(idx)) matching += n;
  }
  return matching === entries ? 'all' : matching === 0 ? 'none' : null;
}
