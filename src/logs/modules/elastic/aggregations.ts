import { isPlainObject } from '../../../shared/text/storable-text.js';
import type { AggregateGroup, AggregateMetric, AggregateRow, CalendarUnit, LogStore, SearchRequest } from '../store/log-store.js';
import { parsingError, unsupported } from './elastic-errors.js';
import { dateValue, fieldName, shown } from '../query/elastic-dsl.js';
import { dict, type Dict } from '../../../shared/dict.js';

/**
 * Elasticsearch aggregations over the log store: bucket aggregations `date_histogram` and `terms`
 * (nested in any order) with the metrics `avg`, `sum`, `min`, `max`, `cardinality` and `percentiles`.
 * Each bucket level is one grouped query (store.aggregate) over the levels above it and itself.
 */

/** Elasticsearch's search.max_buckets is 65,536; a log console never needs more than this. */
export const MAX_GROUPS = 10_000;
/** Percentiles are exact (sorted values), so their input is bounded. */
export const MAX_PERCENTILE_VALUES = 200_000;

type MetricKind = AggregateMetric['kind'] | 'percentiles';

interface DateHistogram {
  kind: 'date_histogram';
  /** Fixed buckets of this many ms, or calendar buckets. */
  intervalMs: number;
  calendar: CalendarUnit | undefined;
  minDocCount: number;
  bounds: { min: number; max: number } | undefined;
  epochMillis: boolean;
}

interface Terms {
  kind: 'terms';
  field: string;
  size: number;
  minDocCount: number;
  order: { by: string; direction: 'asc' | 'desc' };
}

interface Metric {
  kind: MetricKind;
  field: string;
  percents: number[];
}

interface Agg {
  name: string;
  spec: DateHistogram | Terms | Metric;
  children: Agg[];
}

const FIXED_UNITS = dict<number>({ ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 });
/** Calendar intervals: minute, hour and day are fixed lengths in UTC; weeks (from Monday) to years are not. */
const CALENDAR = dict<number | CalendarUnit>({
  '1m': 60_000,
  minute: 60_000,
  '1h': 3_600_000,
  hour: 3_600_000,
  '1d': 86_400_000,
  day: 86_400_000,
  '1w': 'week',
  week: 'week',
  '1M': 'month',
  month: 'month',
  '1q': 'quarter',
  quarter: 'quarter',
  '1y': 'year',
  year: 'year',
});

function intervalOf(text: unknown, calendar: boolean): number | CalendarUnit {
  if (typeof text !== 'string') throw parsingError('[date_histogram] interval must be a string');
  if (calendar) {
    const interval = CALENDAR[text];
    if (interval === undefined) throw parsingError(`unknown calendar_interval [${text.slice(0, 20)}]`);
    return interval;
  }
  const match = /^(\d+)(ms|s|m|h|d)$/.exec(text);
  if (!match || Number(match[1]) === 0) throw parsingError(`failed to parse interval [${text.slice(0, 20)}]`);
  return Number(match[1]) * FIXED_UNITS[match[2]!]!;
}

/** The start of the calendar bucket holding `ms` (UTC; weeks from Monday). */
export function calendarFloor(ms: number, unit: CalendarUnit): number {
  const date = new Date(ms);
  const [year, month] = [date.getUTCFullYear(), date.getUTCMonth()];
  if (unit === 'year') return Date.UTC(year, 0, 1);
  if (unit === 'quarter') return Date.UTC(year, month - (month % 3), 1);
  if (unit === 'month') return Date.UTC(year, month, 1);
  return Date.UTC(year, month, date.getUTCDate()) - ((date.getUTCDay() + 6) % 7) * 86_400_000;
}

/** The start of the calendar bucket after the one starting at `start`. */
function calendarNext(start: number, unit: CalendarUnit): number {
  if (unit === 'week') return start + 7 * 86_400_000;
  const date = new Date(start);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + (unit === 'year' ? 12 : unit === 'quarter' ? 3 : 1), 1);
}

function only(spec: Record<string, unknown>, allowed: readonly string[], kind: string): void {
  for (const key of Object.keys(spec)) if (!allowed.includes(key)) throw unsupported(`the ${kind} option [${key.slice(0, 50)}]`);
}

function parseBucket(kind: string, spec: Record<string, unknown>, now: number): DateHistogram | Terms {
  if (kind === 'date_histogram') {
    only(
      spec,
      ['field', 'fixed_interval', 'calendar_interval', 'interval', 'min_doc_count', 'extended_bounds', 'format', 'time_zone', 'keyed'],
      kind,
    );
    if (spec.field !== undefined && !['@timestamp', 'timestamp'].includes(shown(spec.field))) {
      throw unsupported(`a date_histogram on [${shown(spec.field).slice(0, 50)}] (only @timestamp)`);
    }
    if (spec.time_zone !== undefined && !['UTC', 'Z', '+00:00', 'Etc/UTC'].includes(shown(spec.time_zone))) {
      throw unsupported(`the time_zone [${shown(spec.time_zone).slice(0, 50)}] (buckets are UTC)`);
    }
    if (spec.keyed === true) throw unsupported('keyed buckets');
    const interval =
      spec.fixed_interval !== undefined
        ? intervalOf(spec.fixed_interval, false)
        : spec.calendar_interval !== undefined
          ? intervalOf(spec.calendar_interval, true)
          : intervalOf(spec.interval, CALENDAR[shown(spec.interval)] !== undefined);
    let bounds: DateHistogram['bounds'];
    if (spec.extended_bounds !== undefined) {
      if (!isPlainObject(spec.extended_bounds)) throw parsingError('[extended_bounds] must be an object');
      const format = spec.format;
      bounds = {
        min: dateValue(spec.extended_bounds.min, format, now, false),
        max: dateValue(spec.extended_bounds.max, format, now, true),
      };
    }
    return {
      kind,
      intervalMs: typeof interval === 'number' ? interval : 0,
      calendar: typeof interval === 'number' ? undefined : interval,
      minDocCount: typeof spec.min_doc_count === 'number' ? spec.min_doc_count : 0,
      bounds,
      epochMillis: spec.format === 'epoch_millis',
    };
  }
  only(spec, ['field', 'size', 'order', 'min_doc_count', 'shard_size'], kind);
  if (typeof spec.field !== 'string') throw parsingError('[terms] needs a field');
  const size = spec.size === undefined ? 10 : Number(spec.size);
  if (!Number.isInteger(size) || size < 1 || size > MAX_GROUPS) throw parsingError(`[terms] size must be 1 to ${MAX_GROUPS}`);
  const minDocCount = spec.min_doc_count === undefined ? 1 : Number(spec.min_doc_count);
  if (!Number.isInteger(minDocCount) || minDocCount < 1) throw unsupported('[terms] min_doc_count below 1');
  const orders: unknown[] = spec.order === undefined ? [{ _count: 'desc' }] : Array.isArray(spec.order) ? spec.order : [spec.order];
  const first = orders[0];
  if (orders.length > 1 || !isPlainObject(first) || Object.keys(first).length !== 1)
    throw unsupported('a terms order on more than one key');
  const [by, direction] = Object.entries(first)[0]!;
  if (direction !== 'asc' && direction !== 'desc') throw parsingError('[terms] order must be asc or desc');
  return { kind: 'terms', field: fieldName(spec.field), size, minDocCount, order: { by, direction } };
}

const DEFAULT_PERCENTS = [1, 5, 25, 50, 75, 95, 99];

function parseMetric(kind: MetricKind, spec: Record<string, unknown>): Metric {
  only(spec, kind === 'percentiles' ? ['field', 'percents', 'keyed'] : ['field'], kind);
  if (typeof spec.field !== 'string') throw parsingError(`[${kind}] needs a field`);
  let percents = DEFAULT_PERCENTS;
  if (kind === 'percentiles' && spec.percents !== undefined) {
    if (!Array.isArray(spec.percents) || spec.percents.length === 0) throw parsingError('[percentiles] percents must be a list');
    percents = spec.percents.map(Number);
    if (percents.some((p) => !Number.isFinite(p) || p < 0 || p > 100)) throw parsingError('[percentiles] percents must be 0 to 100');
  }
  if (spec.keyed === false) throw unsupported('unkeyed percentiles');
  return { kind, field: fieldName(spec.field), percents };
}

export type Aggregation = Agg;

export function parseAggregations(aggs: unknown, now: number, depth = 0): Agg[] {
  if (aggs === undefined) return [];
  if (!isPlainObject(aggs)) throw parsingError('aggregations must be an object');
  if (depth > 5) throw unsupported('aggregations nested deeper than 5 levels');
  return Object.entries(aggs).map(([name, body]) => {
    if (!isPlainObject(body)) throw parsingError(`aggregation [${name}] must be an object`);
    const { aggs: sub, aggregations, meta: _meta, ...rest } = body;
    const types = Object.keys(rest);
    if (types.length !== 1) throw parsingError(`aggregation [${name}] must have exactly one type`);
    const kind = types[0]!;
    const spec = rest[kind];
    if (!isPlainObject(spec)) throw parsingError(`aggregation [${name}] is malformed`);
    const children = parseAggregations(sub ?? aggregations, now, depth + 1);
    if (kind === 'date_histogram' || kind === 'terms') return { name, spec: parseBucket(kind, spec, now), children };
    if (['avg', 'sum', 'min', 'max', 'cardinality', 'percentiles'].includes(kind)) {
      if (children.length > 0) throw parsingError(`metric aggregation [${name}] cannot have sub-aggregations`);
      return { name, spec: parseMetric(kind as MetricKind, spec), children };
    }
    throw unsupported(`the aggregation [${kind.slice(0, 50)}]`);
  });
}

type Filter = Pick<SearchRequest, 'tenantId' | 'condition' | 'from' | 'to'>;
type Key = number | string | null;

/** Rows of one level, by the keys of the levels above it. */
interface LevelResult {
  rows: Map<string, { keys: Key[]; count: number; metrics: Map<string, unknown> }[]>;
}

function groupOf(spec: DateHistogram | Terms): AggregateGroup {
  if (spec.kind === 'terms') return { kind: 'field', field: spec.field };
  return spec.calendar ? { kind: 'calendar', unit: spec.calendar } : { kind: 'time', intervalMs: spec.intervalMs };
}

function percentilesOf(values: number[], percents: number[]): Dict<number | null> {
  const sorted = [...values].sort((a, b) => a - b);
  const result = dict<number | null>();
  for (const p of percents) {
    const key = Number.isInteger(p) ? p.toFixed(1) : String(p);
    if (sorted.length === 0) {
      result[key] = null;
      continue;
    }
    // Linear interpolation between closest ranks (PostgreSQL's percentile_cont).
    const rank = (p / 100) * (sorted.length - 1);
    const low = Math.floor(rank);
    const high = Math.ceil(rank);
    result[key] = sorted[low]! + (sorted[high]! - sorted[low]!) * (rank - low);
  }
  return result;
}

/** Runs every aggregation and answers in Elasticsearch's shape. */
export async function runAggregations(store: LogStore, filter: Filter, aggs: Agg[]) {
  const levels = new Map<Agg, LevelResult>();

  const evaluate = async (agg: Agg | null, children: Agg[], groups: AggregateGroup[]): Promise<LevelResult> => {
    const metrics = children.filter((child) => child.spec.kind !== 'date_histogram' && child.spec.kind !== 'terms');
    const simple = metrics.filter((child) => child.spec.kind !== 'percentiles');
    const rows: AggregateRow[] = await store.aggregate({
      ...filter,
      groups,
      metrics: simple.map((child) => ({ kind: child.spec.kind as AggregateMetric['kind'], field: (child.spec as Metric).field })),
      maxGroups: MAX_GROUPS,
    });
    const level: LevelResult = { rows: new Map() };
    const byKeys = new Map<string, { keys: Key[]; count: number; metrics: Map<string, unknown> }>();
    for (const row of rows) {
      const entry = { keys: row.keys, count: row.count, metrics: new Map<string, unknown>() };
      simple.forEach((child, index) => entry.metrics.set(child.name, { value: row.metrics[index] ?? null }));
      byKeys.set(JSON.stringify(row.keys), entry);
      const parent = JSON.stringify(row.keys.slice(0, -1));
      level.rows.set(parent, [...(level.rows.get(parent) ?? []), entry]);
    }
    for (const child of metrics.filter((metric) => metric.spec.kind === 'percentiles')) {
      const spec = child.spec as Metric;
      const values = await store.numericValues({ ...filter, groups, field: spec.field, maxValues: MAX_PERCENTILE_VALUES });
      const grouped = new Map<string, number[]>();
      for (const { keys, value } of values) grouped.set(JSON.stringify(keys), [...(grouped.get(JSON.stringify(keys)) ?? []), value]);
      for (const [keys, entry] of byKeys) entry.metrics.set(child.name, { values: percentilesOf(grouped.get(keys) ?? [], spec.percents) });
    }
    if (agg) levels.set(agg, level);
    for (const child of children) {
      if (child.spec.kind === 'date_histogram' || child.spec.kind === 'terms')
        await evaluate(child, child.children, [...groups, groupOf(child.spec)]);
    }
    return level;
  };

  const top = await evaluate(null, aggs, []);
  const topRow = top.rows.get('[]')?.[0];

  const emptyMetrics = (children: Agg[]): Dict<unknown> =>
    dict(
      children.map((child): [string, unknown] => {
        if (child.spec.kind === 'date_histogram' || child.spec.kind === 'terms') return [child.name, { buckets: [] }];
        if (child.spec.kind === 'percentiles') return [child.name, { values: percentilesOf([], child.spec.percents) }];
        return [child.name, { value: child.spec.kind === 'cardinality' ? 0 : null }];
      }),
    );

  const render = (children: Agg[], keys: Key[], metrics: Map<string, unknown> | undefined, parentCount: number): Dict<unknown> => {
    const out = emptyMetrics(children);
    for (const child of children) {
      if (child.spec.kind === 'date_histogram' || child.spec.kind === 'terms') {
        const rows = levels.get(child)?.rows.get(JSON.stringify(keys)) ?? [];
        out[child.name] =
          child.spec.kind === 'date_histogram'
            ? histogram(child, child.spec, rows, keys)
            : terms(child, child.spec, rows, keys, parentCount);
      } else if (metrics?.has(child.name)) {
        out[child.name] = metrics.get(child.name);
      }
    }
    return out;
  };

  const histogram = (
    agg: Agg,
    spec: DateHistogram,
    rows: { keys: Key[]; count: number; metrics: Map<string, unknown> }[],
    parentKeys: Key[],
  ) => {
    const byStart = new Map(rows.map((row) => [Number(row.keys.at(-1)), row]));
    let starts = [...byStart.keys()].sort((a, b) => a - b);
    if (spec.minDocCount === 0) {
      const { calendar, intervalMs } = spec;
      const floor = (ms: number) => (calendar ? calendarFloor(ms, calendar) : ms - (((ms % intervalMs) + intervalMs) % intervalMs));
      const next = (start: number) => (calendar ? calendarNext(start, calendar) : start + intervalMs);
      let first = starts[0];
      let last = starts.at(-1);
      if (spec.bounds) {
        first = Math.min(first ?? Infinity, floor(spec.bounds.min));
        last = Math.max(last ?? -Infinity, floor(spec.bounds.max));
      }
      if (first !== undefined && last !== undefined && Number.isFinite(first) && Number.isFinite(last)) {
        starts = [];
        for (let start = first; start <= last; start = next(start)) {
          if (starts.length >= MAX_GROUPS) throw new RangeError(`more than ${MAX_GROUPS} buckets: use a larger interval`);
          starts.push(start);
        }
      }
    }
    return {
      buckets: starts
        .map((start) => ({ start, row: byStart.get(start) }))
        .filter(({ row }) => (row?.count ?? 0) >= spec.minDocCount)
        .map(({ start, row }) => ({
          key_as_string: spec.epochMillis ? String(start) : new Date(start).toISOString(),
          key: start,
          doc_count: row?.count ?? 0,
          ...render(agg.children, [...parentKeys, start], row?.metrics, row?.count ?? 0),
        })),
    };
  };

  const terms = (
    agg: Agg,
    spec: Terms,
    rows: { keys: Key[]; count: number; metrics: Map<string, unknown> }[],
    parentKeys: Key[],
    parentCount: number,
  ) => {
    const present = rows.filter((row) => row.keys.at(-1) !== null && row.count >= spec.minDocCount);
    const sign = spec.order.direction === 'asc' ? 1 : -1;
    const sortValue = (row: (typeof rows)[number]): number | string => {
      if (spec.order.by === '_count') return row.count;
      if (spec.order.by === '_key') return String(row.keys.at(-1));
      const metric = row.metrics.get(spec.order.by) as { value?: number | null } | undefined;
      if (!metric) throw unsupported(`a terms order by [${spec.order.by.slice(0, 50)}] (only _count, _key or a metric sub-aggregation)`);
      return metric.value ?? -Infinity;
    };
    present.sort((a, b) => {
      const [x, y] = [sortValue(a), sortValue(b)];
      const byValue = x < y ? -1 : x > y ? 1 : 0;
      return byValue * sign || String(a.keys.at(-1)).localeCompare(String(b.keys.at(-1)));
    });
    const shown = present.slice(0, spec.size);
    const shownCount = shown.reduce((sum, row) => sum + row.count, 0);
    const withValue = present.reduce((sum, row) => sum + row.count, 0);
    return {
      doc_count_error_upper_bound: 0,
      sum_other_doc_count: Math.max(0, Math.min(parentCount, withValue) - shownCount),
      buckets: shown.map((row) => ({
        key: row.keys.at(-1),
        doc_count: row.count,
        ...render(agg.children, [...parentKeys, row.keys.at(-1)!], row.metrics, row.count),
      })),
    };
  };

  return render(aggs, [], topRow?.metrics, topRow?.count ?? 0);
}
