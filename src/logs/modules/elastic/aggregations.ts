import { isPlainObject } from '../../../shared/text/storable-text.js';
import type { AggregateGroup, AggregateMetric, AggregateRow, CalendarUnit, LogStore, SearchRequest } from '../store/log-store.js';
import { parsingError, unsupported } from './elastic-errors.js';
import { dateValue, fieldName, shown } from '../query/elastic-dsl.js';
import { dict, type Dict } from '../../../shared/dict.js';
import { both, type Condition } from '../query/condition.js';
import { dslSearch } from '../query/elastic-dsl.js';
import { resolveField, type FieldRef } from '../query/fields.js';
import { hitOf, sortOf, sourceFilterOf } from './search.js';

const NOTHING: Condition = { kind: 'not', child: { kind: 'all' } };
/** store.histogram's group of entries without the field: NUL, which no stored value holds. */
const NULL_GROUP = '\u0000';

/**
 * Elasticsearch aggregations over the log store: bucket aggregations `date_histogram` and `terms`
 * (nested in any order) with the metrics `avg`, `sum`, `min`, `max`, `cardinality` and `percentiles`.
 * Each bucket level is one grouped query (store.aggregate) over the levels above it and itself.
 */

/** Elasticsearch's search.max_buckets is 65,536; a log console never needs more than this. */
export const MAX_GROUPS = 10_000;
/** Percentiles are exact (sorted values), so their input is bounded. */
export const MAX_PERCENTILE_VALUES = 200_000;

type MetricKind = AggregateMetric['kind'] | 'percentiles' | 'stats' | 'extended_stats' | 'value_count';
const METRIC_KINDS = ['avg', 'sum', 'min', 'max', 'cardinality', 'percentiles', 'stats', 'extended_stats', 'value_count'];
/** Metrics the store computes in its grouped query; the others are computed here from the values. */
const STORE_METRICS = new Set(['avg', 'sum', 'min', 'max', 'cardinality']);
/** Queries one search's bucket-by-filter aggregations (filters, range, date_range, histogram with sub-aggregations) and top_hits may run. */
export const MAX_BUCKET_QUERIES = 500;
const MAX_TOP_HITS = 100;

interface DateHistogram {
  kind: 'date_histogram';
  /** Buckets as an object by key_as_string instead of a list. */
  keyed: boolean;
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
  /** The key of the bucket of documents without the field (`missing`); none when undefined. */
  missing: string | number | undefined;
}

/** One bucket of a bucket-by-filter aggregation: what narrows the search, and how it is shown. */
interface FilterBucket {
  key: string | number | undefined;
  condition: Condition | undefined;
  from: number | undefined;
  /** Inclusive. */
  to: number | undefined;
  shown: Dict<unknown>;
}

/** filters, range, date_range: each bucket is the search narrowed by its filter. */
interface FilterBuckets {
  kind: 'filters' | 'range' | 'date_range';
  buckets: FilterBucket[];
  keyed: boolean;
}

interface Histogram {
  kind: 'histogram';
  field: string;
  interval: number;
  minDocCount: number;
  bounds: { min: number; max: number } | undefined;
  /** Buckets as an object by key (`"0.0"`) instead of a list. */
  keyed: boolean;
}

interface TopHits {
  kind: 'top_hits';
  size: number;
  order: 'asc' | 'desc';
  source: unknown;
}

interface Metric {
  kind: MetricKind;
  field: string;
  percents: number[];
  /** The value of documents without the field (`missing`); they are left out when undefined. */
  missing: number | undefined;
  /**
   * `missing` of cardinality and value_count, as the field's text: documents without the field have
   * that value (value_count counts them; cardinality counts it once more unless a document has it).
   */
  missingTerm: string | undefined;
  /** percentiles: an object by percent (true, the default) or a list of {key, value}. */
  keyed: boolean;
}

interface Agg {
  name: string;
  spec: DateHistogram | Terms | Metric | FilterBuckets | Histogram | TopHits;
  children: Agg[];
}

const isGroup = (agg: Agg): agg is Agg & { spec: DateHistogram | Terms } => agg.spec.kind === 'date_histogram' || agg.spec.kind === 'terms';
const isMetric = (agg: Agg): agg is Agg & { spec: Metric } => METRIC_KINDS.includes(agg.spec.kind);

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
    if (spec.keyed !== undefined && typeof spec.keyed !== 'boolean') throw parsingError('[date_histogram] keyed must be true or false');
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
      keyed: spec.keyed === true,
      intervalMs: typeof interval === 'number' ? interval : 0,
      calendar: typeof interval === 'number' ? undefined : interval,
      minDocCount: typeof spec.min_doc_count === 'number' ? spec.min_doc_count : 0,
      bounds,
      epochMillis: spec.format === 'epoch_millis',
    };
  }
  only(spec, ['field', 'size', 'order', 'min_doc_count', 'shard_size', 'missing'], kind);
  if (typeof spec.field !== 'string') throw parsingError('[terms] needs a field');
  const size = spec.size === undefined ? 10 : Number(spec.size);
  if (!Number.isInteger(size) || size < 1 || size > MAX_GROUPS) throw parsingError(`[terms] size must be 1 to ${MAX_GROUPS}`);
  const minDocCount = spec.min_doc_count === undefined ? 1 : Number(spec.min_doc_count);
  if (!Number.isInteger(minDocCount) || minDocCount < 0) throw parsingError('[terms] min_doc_count must be a whole number of at least 0');
  if (spec.missing !== undefined && typeof spec.missing !== 'string' && typeof spec.missing !== 'number') {
    throw parsingError('[terms] missing must be a string or a number');
  }
  const orders: unknown[] = spec.order === undefined ? [{ _count: 'desc' }] : Array.isArray(spec.order) ? spec.order : [spec.order];
  const first = orders[0];
  if (orders.length > 1 || !isPlainObject(first) || Object.keys(first).length !== 1)
    throw unsupported('a terms order on more than one key');
  const [by, direction] = Object.entries(first)[0]!;
  if (direction !== 'asc' && direction !== 'desc') throw parsingError('[terms] order must be asc or desc');
  return {
    kind: 'terms',
    field: fieldName(spec.field),
    size,
    minDocCount,
    order: { by, direction },
    missing: spec.missing as string | number | undefined,
  };
}

const DEFAULT_PERCENTS = [1, 5, 25, 50, 75, 95, 99];

/** Metrics that take `missing`: the value of documents without the field (a number). */
const MISSING_METRICS = new Set(['avg', 'sum', 'min', 'max', 'stats', 'extended_stats', 'percentiles']);
/** Metrics that take `missing` as a term (a string or a number). */
const MISSING_TERM_METRICS = new Set(['cardinality', 'value_count']);

function parseMetric(kind: MetricKind, spec: Record<string, unknown>): Metric {
  const allowed = kind === 'percentiles' ? ['field', 'percents', 'keyed'] : kind === 'extended_stats' ? ['field', 'sigma'] : ['field'];
  only(spec, MISSING_METRICS.has(kind) || MISSING_TERM_METRICS.has(kind) ? [...allowed, 'missing'] : allowed, kind);
  let missing: number | undefined;
  let missingTerm: string | undefined;
  if (spec.missing !== undefined && MISSING_TERM_METRICS.has(kind)) {
    if (typeof spec.missing !== 'string' && !(typeof spec.missing === 'number' && Number.isFinite(spec.missing)))
      throw parsingError(`[${kind}] missing must be a string or a number`);
    missingTerm = String(spec.missing);
  } else if (spec.missing !== undefined) {
    missing = typeof spec.missing === 'number' ? spec.missing : typeof spec.missing === 'string' ? Number(spec.missing) : NaN;
    if (!Number.isFinite(missing) || (typeof spec.missing === 'string' && spec.missing.trim() === ''))
      throw parsingError(`[${kind}] missing must be a number`);
  }
  if (spec.keyed !== undefined && typeof spec.keyed !== 'boolean') throw parsingError(`[${kind}] keyed must be true or false`);
  if (kind === 'extended_stats' && spec.sigma !== undefined && spec.sigma !== 2) throw unsupported('[extended_stats] sigma other than 2');
  if (typeof spec.field !== 'string') throw parsingError(`[${kind}] needs a field`);
  let percents = DEFAULT_PERCENTS;
  if (kind === 'percentiles' && spec.percents !== undefined) {
    if (!Array.isArray(spec.percents) || spec.percents.length === 0) throw parsingError('[percentiles] percents must be a list');
    percents = spec.percents.map(Number);
    if (percents.some((p) => !Number.isFinite(p) || p < 0 || p > 100)) throw parsingError('[percentiles] percents must be 0 to 100');
  }
  return { kind, field: fieldName(spec.field), percents, missing, missingTerm, keyed: spec.keyed !== false };
}

function parseFilters(spec: Record<string, unknown>, now: number): FilterBuckets {
  only(spec, ['filters', 'other_bucket', 'other_bucket_key'], 'filters');
  if (spec.other_bucket !== undefined && typeof spec.other_bucket !== 'boolean')
    throw parsingError('[filters] other_bucket must be true or false');
  if (spec.other_bucket_key !== undefined && typeof spec.other_bucket_key !== 'string')
    throw parsingError('[filters] other_bucket_key must be a string');
  // Elasticsearch: a key implies the bucket, unless other_bucket says false.
  const other = spec.other_bucket === true || (spec.other_bucket === undefined && spec.other_bucket_key !== undefined);
  const named = isPlainObject(spec.filters);
  if (!named && !Array.isArray(spec.filters)) throw parsingError('[filters] needs filters: an object of named queries or a list');
  const entries: [string | undefined, unknown][] = named
    ? Object.entries(spec.filters as Record<string, unknown>)
    : (spec.filters as unknown[]).map((query) => [undefined, query]);
  if (entries.length === 0 || entries.length > MAX_BUCKET_QUERIES) throw parsingError(`[filters] needs 1 to ${MAX_BUCKET_QUERIES} filters`);
  // Elasticsearch lists named filters in key order.
  if (named) entries.sort(([a], [b]) => (a! < b! ? -1 : a! > b! ? 1 : 0));
  const buckets: FilterBucket[] = entries.map(([key, query]) => {
    const search = dslSearch({ query, index: undefined }, now);
    return { key, condition: search.condition, from: search.from, to: search.to, shown: dict() };
  });
  if (other) {
    // The documents no filter matches: the NOT of each filter's query and time range, ORed.
    const matched = buckets.map((bucket): Condition => {
      const within: Condition[] = bucket.condition === undefined ? [] : [bucket.condition];
      if (bucket.from !== undefined || bucket.to !== undefined) {
        within.push({
          kind: 'range',
          field: { kind: 'timestamp' },
          compare: 'time',
          lower: bucket.from === undefined ? null : { value: bucket.from, inclusive: true },
          upper: bucket.to === undefined ? null : { value: bucket.to, inclusive: true },
        });
      }
      return within.length === 0 ? { kind: 'all' } : within.length === 1 ? within[0]! : { kind: 'and', children: within };
    });
    const key = named ? ((spec.other_bucket_key as string | undefined) ?? '_other_') : undefined;
    buckets.push({
      key,
      condition: { kind: 'not', child: matched.length === 1 ? matched[0]! : { kind: 'or', children: matched } },
      from: undefined,
      to: undefined,
      shown: dict(),
    });
  }
  return { kind: 'filters', keyed: named, buckets };
}

/** Elasticsearch's keys of numeric ranges: `*-100.0`, `100.0-200.0`, `200.0-*`. */
const rangeText = (value: number) => (Number.isInteger(value) ? value.toFixed(1) : String(value));

function parseRanges(kind: 'range' | 'date_range', spec: Record<string, unknown>, now: number): FilterBuckets {
  only(spec, kind === 'range' ? ['field', 'ranges', 'keyed'] : ['field', 'ranges', 'keyed', 'format', 'time_zone'], kind);
  if (typeof spec.field !== 'string') throw parsingError(`[${kind}] needs a field`);
  if (!Array.isArray(spec.ranges) || spec.ranges.length === 0 || spec.ranges.length > MAX_BUCKET_QUERIES) {
    throw parsingError(`[${kind}] needs 1 to ${MAX_BUCKET_QUERIES} ranges`);
  }
  const field = fieldName(spec.field);
  const isTime = field === '@timestamp' || field === 'timestamp';
  if (kind === 'date_range' && !isTime) throw unsupported(`a date_range on [${field.slice(0, 50)}] (only @timestamp)`);
  if (kind === 'range' && isTime) throw unsupported('a range aggregation on @timestamp (use date_range)');
  if (spec.time_zone !== undefined && !['UTC', 'Z', '+00:00', 'Etc/UTC'].includes(shown(spec.time_zone))) {
    throw unsupported(`the time_zone [${shown(spec.time_zone).slice(0, 50)}] (ranges are UTC)`);
  }
  const buckets = spec.ranges.map((range): FilterBucket => {
    if (!isPlainObject(range)) throw parsingError(`[${kind}] each range must be an object`);
    only(range, ['from', 'to', 'key'], `${kind} range`);
    if (range.key !== undefined && typeof range.key !== 'string') throw parsingError(`[${kind}] a range key must be a string`);
    if (kind === 'date_range') {
      const from = range.from === undefined || range.from === null ? undefined : dateValue(range.from, spec.format, now, false);
      const to = range.to === undefined || range.to === null ? undefined : dateValue(range.to, spec.format, now, false);
      const text = (ms: number | undefined) =>
        ms === undefined ? '*' : spec.format === 'epoch_millis' ? String(ms) : new Date(ms).toISOString();
      const shownRange = dict<unknown>();
      if (from !== undefined) Object.assign(shownRange, { from, from_as_string: text(from) });
      if (to !== undefined) Object.assign(shownRange, { to, to_as_string: text(to) });
      return {
        key: (range.key as string | undefined) ?? `${text(from)}-${text(to)}`,
        condition: undefined,
        from,
        to: to === undefined ? undefined : to - 1,
        shown: shownRange,
      };
    }
    const bound = (value: unknown, name: string) => {
      if (value === undefined || value === null) return undefined;
      const number = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
      if (!Number.isFinite(number)) throw parsingError(`[range] ${name} must be a number`);
      return number;
    };
    const [from, to] = [bound(range.from, 'from'), bound(range.to, 'to')];
    const condition: Condition = {
      kind: 'range',
      field: resolveField(field) as Extract<Condition, { kind: 'range' }>['field'],
      compare: 'number',
      lower: from === undefined ? null : { value: from, inclusive: true },
      upper: to === undefined ? null : { value: to, inclusive: false },
    };
    const key =
      (range.key as string | undefined) ?? `${from === undefined ? '*' : rangeText(from)}-${to === undefined ? '*' : rangeText(to)}`;
    return {
      key,
      condition,
      from: undefined,
      to: undefined,
      shown: numericBounds(from, to),
    };
  });
  return { kind, buckets, keyed: spec.keyed === true };
}

function numericBounds(from: number | undefined, to: number | undefined): Dict<unknown> {
  const shownBounds = dict<unknown>();
  if (from !== undefined) shownBounds.from = from;
  if (to !== undefined) shownBounds.to = to;
  return shownBounds;
}

function parseHistogram(spec: Record<string, unknown>): Histogram {
  only(spec, ['field', 'interval', 'min_doc_count', 'extended_bounds', 'keyed'], 'histogram');
  if (spec.keyed !== undefined && typeof spec.keyed !== 'boolean') throw parsingError('[histogram] keyed must be true or false');
  if (typeof spec.field !== 'string') throw parsingError('[histogram] needs a field');
  const interval = Number(spec.interval);
  if (typeof spec.interval !== 'number' || !(interval > 0)) throw parsingError('[histogram] interval must be a number above 0');
  const minDocCount = spec.min_doc_count === undefined ? 0 : Number(spec.min_doc_count);
  if (!Number.isInteger(minDocCount) || minDocCount < 0)
    throw parsingError('[histogram] min_doc_count must be a whole number of at least 0');
  let bounds: Histogram['bounds'];
  if (spec.extended_bounds !== undefined) {
    const { min, max } = (isPlainObject(spec.extended_bounds) ? spec.extended_bounds : {}) as { min?: unknown; max?: unknown };
    if (typeof min !== 'number' || typeof max !== 'number' || min > max)
      throw parsingError('[histogram] extended_bounds needs numbers min <= max');
    bounds = { min, max };
  }
  return { kind: 'histogram', field: fieldName(spec.field), interval, minDocCount, bounds, keyed: spec.keyed === true };
}

function parseTopHits(spec: Record<string, unknown>): TopHits {
  only(spec, ['size', 'sort', '_source', 'from'], 'top_hits');
  if (spec.from !== undefined && spec.from !== 0) throw unsupported('[top_hits] from');
  const size = spec.size === undefined ? 3 : Number(spec.size);
  if (!Number.isInteger(size) || size < 0 || size > MAX_TOP_HITS) throw parsingError(`[top_hits] size must be 0 to ${MAX_TOP_HITS}`);
  let order: 'asc' | 'desc' = 'desc';
  if (spec.sort !== undefined) {
    const sort = sortOf(spec.sort);
    if (!sort.byTime) throw unsupported('[top_hits] sorted by a field other than @timestamp');
    order = sort.sort?.order ?? 'desc';
  }
  return { kind: 'top_hits', size, order, source: spec._source };
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
    if (METRIC_KINDS.includes(kind) || kind === 'top_hits') {
      if (children.length > 0) throw parsingError(`metric aggregation [${name}] cannot have sub-aggregations`);
      return { name, spec: kind === 'top_hits' ? parseTopHits(spec) : parseMetric(kind as MetricKind, spec), children };
    }
    if (kind === 'filters') return { name, spec: parseFilters(spec, now), children };
    if (kind === 'range' || kind === 'date_range') return { name, spec: parseRanges(kind, spec, now), children };
    if (kind === 'histogram') return { name, spec: parseHistogram(spec), children };
    throw unsupported(`the aggregation [${kind.slice(0, 50)}]`);
  });
}

type Filter = Pick<SearchRequest, 'tenantId' | 'condition' | 'from' | 'to'>;

/** `keyed`: the buckets as an object by their key (a name the data chose: a null-prototype object). */
function keyedBuckets<T>(buckets: readonly T[], keyOf: (bucket: T) => string): Dict<T> {
  return dict(buckets.map((bucket): [string, T] => [keyOf(bucket), bucket]));
}
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

/** A metric computed here from the values (percentiles, stats, and any metric with `missing`), as Elasticsearch shows it. */
function metricOf(spec: Metric, numbers: number[]): unknown {
  switch (spec.kind) {
    case 'percentiles': {
      const values = percentilesOf(numbers, spec.percents);
      return { values: spec.keyed ? values : Object.entries(values).map(([key, value]) => ({ key: Number(key), value })) };
    }
    case 'stats':
    case 'extended_stats':
      return statsOf(numbers, spec.kind === 'extended_stats');
    default: {
      const stats = statsOf(numbers, false);
      return { value: spec.kind === 'sum' ? stats.sum : (stats[spec.kind] ?? null) };
    }
  }
}

/** count, min, max, avg, sum (and the spread, for extended_stats) of some numbers, as Elasticsearch shows them. */
function statsOf(values: readonly number[], extended: boolean): Dict<unknown> {
  const count = values.length;
  const sum = values.reduce((total, value) => total + value, 0);
  const stats = dict<unknown>({
    count,
    min: count === 0 ? null : Math.min(...values),
    max: count === 0 ? null : Math.max(...values),
    avg: count === 0 ? null : sum / count,
    sum,
  });
  if (!extended) return stats;
  const avg = count === 0 ? 0 : sum / count;
  const squares = values.reduce((total, value) => total + value * value, 0);
  const variance = count === 0 ? null : Math.max(0, squares / count - avg * avg);
  const sampling = count < 2 ? null : Math.max(0, (squares - count * avg * avg) / (count - 1));
  const deviation = variance === null ? null : Math.sqrt(variance);
  const sampled = sampling === null ? null : Math.sqrt(sampling);
  const bound = (sd: number | null, sign: number) => (sd === null || count === 0 ? null : avg + sign * 2 * sd);
  return Object.assign(stats, {
    sum_of_squares: count === 0 ? null : squares,
    variance,
    variance_population: variance,
    variance_sampling: sampling,
    std_deviation: deviation,
    std_deviation_population: deviation,
    std_deviation_sampling: sampled,
    std_deviation_bounds: {
      upper: bound(deviation, 1),
      lower: bound(deviation, -1),
      upper_population: bound(deviation, 1),
      lower_population: bound(deviation, -1),
      upper_sampling: bound(sampled, 1),
      lower_sampling: bound(sampled, -1),
    },
  });
}

/** The search narrowed to one bucket: ANDed condition, intersected time range. */
function narrowed(filter: Filter, condition: Condition | undefined, from?: number, to?: number): Filter {
  return {
    ...filter,
    condition: condition === undefined ? filter.condition : filter.condition === undefined ? condition : both(filter.condition, condition),
    from: Math.max(filter.from, from ?? filter.from),
    to: Math.min(filter.to, to ?? filter.to),
  };
}

type Row = { keys: Key[]; count: number; metrics: Map<string, unknown> };

/** Runs every aggregation and answers in Elasticsearch's shape. */
export async function runAggregations(
  store: LogStore,
  filter: Filter,
  aggs: Agg[],
  budget = { queries: 0 },
  /** Set to the number of matches (exact), which the aggregations count anyway. */
  counted: { total?: number } = {},
) {
  const levels = new Map<Agg, LevelResult>();
  /** Values seen per terms aggregation with min_doc_count 0: its empty buckets. */
  const universes = new Map<Agg, string[]>();
  const spend = () => {
    budget.queries += 1;
    if (budget.queries > MAX_BUCKET_QUERIES) {
      throw new RangeError(
        `more than ${MAX_BUCKET_QUERIES} queries for filter, range, histogram and top_hits buckets: ask for fewer buckets`,
      );
    }
  };

  /** Rows of one level (store.aggregate's shape), by the keys of the levels above it. */
  const levelOf = (rows: readonly AggregateRow[], simple: readonly Agg[], byKeys = new Map<string, Row>()): LevelResult => {
    const level: LevelResult = { rows: new Map() };
    for (const row of rows) {
      const entry = { keys: row.keys, count: row.count, metrics: new Map<string, unknown>() };
      simple.forEach((child, index) => entry.metrics.set(child.name, { value: row.metrics[index] ?? null }));
      byKeys.set(JSON.stringify(row.keys), entry);
      const parent = JSON.stringify(row.keys.slice(0, -1));
      const list = level.rows.get(parent);
      if (list) list.push(entry);
      else level.rows.set(parent, [entry]);
    }
    return level;
  };

  /**
   * A top-level date_histogram alone, or a terms on level/service/host over one (Grafana's
   * logs-volume), counted by store.histogram as the log console's histogram is (from the per-minute
   * rollups where the filter allows), or such a terms alone by store.fieldStats: the rows
   * store.aggregate would give, for the terms level and the date_histogram level. Undefined when the
   * aggregation is not of that shape.
   */
  const countedByHistogram = async (child: Agg): Promise<{ total: number } | undefined> => {
    const fits = (inner: Agg | undefined): inner is Agg & { spec: DateHistogram } =>
      inner !== undefined &&
      inner.spec.kind === 'date_histogram' &&
      inner.spec.calendar === undefined &&
      inner.children.length === 0 &&
      (filter.to - filter.from) / inner.spec.intervalMs < MAX_GROUPS - 2;
    if (fits(child)) {
      const buckets = await store.histogram({ ...filter, intervalMs: child.spec.intervalMs });
      const rows = buckets.filter((bucket) => bucket.count > 0).map((bucket) => ({ keys: [bucket.ts], count: bucket.count, metrics: [] }));
      levels.set(child, levelOf(rows, []));
      return { total: rows.reduce((sum, row) => sum + row.count, 0) };
    }
    if (child.spec.kind === 'terms' && resolveField(child.spec.field).kind === 'column' && child.children.length === 0) {
      // A terms alone on level/service/host: counted as the console's field statistics are (from the
      // rollups where the filter allows); entries without the field are the null group.
      const stats = await store.fieldStats({ ...filter, field: child.spec.field, limit: MAX_GROUPS });
      if (stats.distinct > MAX_GROUPS) throw new RangeError(`more than ${MAX_GROUPS} groups`);
      const rows: AggregateRow[] = stats.values.map(({ value, count }) => ({ keys: [value], count, metrics: [] }));
      if (stats.matched > stats.present) rows.push({ keys: [null], count: stats.matched - stats.present, metrics: [] });
      levels.set(child, levelOf(rows, []));
      return { total: stats.matched };
    }
    const inner = child.children[0];
    if (child.spec.kind !== 'terms' || resolveField(child.spec.field).kind !== 'column' || child.children.length !== 1 || !fits(inner)) {
      return undefined;
    }
    const buckets = await store.histogram({
      ...filter,
      intervalMs: inner.spec.intervalMs,
      groupBy: child.spec.field,
      nullGroup: NULL_GROUP,
    });
    const byValue = new Map<Key, number>();
    const innerRows: AggregateRow[] = [];
    for (const bucket of buckets) {
      for (const [group, count] of Object.entries(bucket.groups ?? {})) {
        if (count === 0) continue;
        const value = group === NULL_GROUP ? null : group;
        byValue.set(value, (byValue.get(value) ?? 0) + count);
        innerRows.push({ keys: [value, bucket.ts], count, metrics: [] });
      }
    }
    const rows = [...byValue].map(([value, count]) => ({ keys: [value], count, metrics: [] }));
    if (rows.length > MAX_GROUPS) throw new RangeError(`more than ${MAX_GROUPS} groups`);
    levels.set(child, levelOf(rows, []));
    levels.set(inner, levelOf(innerRows, []));
    return { total: rows.reduce((sum, row) => sum + row.count, 0) };
  };

  const evaluate = async (agg: Agg | null, children: Agg[], groups: AggregateGroup[]): Promise<LevelResult> => {
    const metrics = children.filter(isMetric);
    const simple = metrics.filter((child) => STORE_METRICS.has(child.spec.kind) && child.spec.missing === undefined);
    const groupChildren = children.filter(isGroup);
    // At the top, with no metric to compute there, the count of matches is the sum of a group's
    // counts (a grouped query holds every group, or fails past MAX_GROUPS): no query of its own.
    let counted: { total: number } | undefined;
    const done = new Set<Agg>();
    if (agg === null && metrics.length === 0) {
      for (const child of groupChildren) {
        let result = await countedByHistogram(child);
        if (!result && counted === undefined) {
          const below = await evaluate(child, child.children, [groupOf(child.spec)]);
          result = { total: (below.rows.get('[]') ?? []).reduce((sum, row) => sum + row.count, 0) };
        } else if (!result) continue;
        done.add(child);
        counted ??= result;
      }
    }
    const rows: AggregateRow[] = counted
      ? [{ keys: [], count: counted.total, metrics: [] }]
      : await store.aggregate({
          ...filter,
          groups,
          metrics: simple.map((child) => ({ kind: child.spec.kind as AggregateMetric['kind'], field: child.spec.field })),
          maxGroups: MAX_GROUPS,
        });
    const byKeys = new Map<string, Row>();
    const level = levelOf(rows, simple, byKeys);
    const fromValues = metrics.filter(
      (metric) => ['percentiles', 'stats', 'extended_stats'].includes(metric.spec.kind) || metric.spec.missing !== undefined,
    );
    for (const child of fromValues) {
      const spec = child.spec;
      const values = await store.numericValues({ ...filter, groups, field: spec.field, maxValues: MAX_PERCENTILE_VALUES });
      const grouped = new Map<string, number[]>();
      for (const { keys, value } of values) {
        const key = JSON.stringify(keys);
        const list = grouped.get(key);
        if (list) list.push(value);
        else grouped.set(key, [value]);
      }
      // `missing`: each document without the field counts as that value.
      let present: Map<string, number> | undefined;
      if (spec.missing !== undefined) {
        const field = resolveField(spec.field);
        const withField =
          field.kind === 'timestamp'
            ? rows
            : await store.aggregate({ ...narrowed(filter, { kind: 'exists', field }), groups, metrics: [], maxGroups: MAX_GROUPS });
        present = new Map(withField.map((row) => [JSON.stringify(row.keys), row.count]));
      }
      for (const [keys, entry] of byKeys) {
        const numbers = grouped.get(keys) ?? [];
        if (present) {
          const absent = Math.max(0, entry.count - (present.get(keys) ?? 0));
          if (numbers.length + absent > MAX_PERCENTILE_VALUES) {
            throw new RangeError(`more than ${MAX_PERCENTILE_VALUES} values for [${child.name.slice(0, 50)}]: narrow the search`);
          }
          for (let i = 0; i < absent; i += 1) numbers.push(spec.missing!);
        }
        entry.metrics.set(child.name, metricOf(spec, numbers));
      }
    }
    /** Matches per group that have the field (the timestamp: every match), or its value `term`. */
    const countsWith = async (field: FieldRef, term?: string): Promise<Map<string, number>> => {
      const condition: Condition | undefined =
        field.kind === 'timestamp' ? undefined : term === undefined ? { kind: 'exists', field } : { kind: 'equals', field, value: term };
      const counted =
        condition === undefined
          ? rows
          : await store.aggregate({ ...narrowed(filter, condition), groups, metrics: [], maxGroups: MAX_GROUPS });
      return new Map(counted.map((row) => [JSON.stringify(row.keys), row.count]));
    };
    for (const child of metrics.filter((metric) => metric.spec.kind === 'value_count')) {
      // With `missing` every match has a value (a field holds one value per document here).
      if (child.spec.missingTerm !== undefined) {
        for (const entry of byKeys.values()) entry.metrics.set(child.name, { value: entry.count });
        continue;
      }
      const counts = await countsWith(resolveField(child.spec.field));
      for (const [keys, entry] of byKeys) entry.metrics.set(child.name, { value: counts.get(keys) ?? 0 });
    }
    for (const child of metrics.filter((metric) => metric.spec.kind === 'cardinality' && metric.spec.missingTerm !== undefined)) {
      // The missing value is one more distinct value where a match lacks the field and none has that value.
      const field = resolveField(child.spec.field);
      if (field.kind === 'timestamp') continue;
      const present = await countsWith(field);
      const withTerm = await countsWith(field, child.spec.missingTerm);
      for (const [keys, entry] of byKeys) {
        const distinct = Number((entry.metrics.get(child.name) as { value: number | null } | undefined)?.value ?? 0);
        const lacking = entry.count > (present.get(keys) ?? 0);
        entry.metrics.set(child.name, { value: distinct + (lacking && !withTerm.get(keys) ? 1 : 0) });
      }
    }
    if (agg) levels.set(agg, level);
    for (const child of groupChildren) {
      if (child.spec.kind === 'terms' && child.spec.minDocCount === 0) {
        const values = await store.distinct({
          tenantId: filter.tenantId,
          field: child.spec.field,
          limit: child.spec.size,
          from: filter.from,
          to: filter.to,
        });
        universes.set(
          child,
          values.map(({ value }) => value),
        );
      }
      if (done.has(child) || (groups.length === 0 && (await countedByHistogram(child)))) continue;
      await evaluate(child, child.children, [...groups, groupOf(child.spec)]);
    }
    return level;
  };

  const top = await evaluate(null, aggs, []);
  const topRow = top.rows.get('[]')?.[0];
  counted.total = topRow?.count ?? 0;

  const emptyMetric = (child: Agg): unknown => {
    switch (child.spec.kind) {
      case 'date_histogram':
      case 'terms':
      case 'histogram':
        return { buckets: [] };
      case 'percentiles':
        return metricOf(child.spec, []);
      case 'stats':
      case 'extended_stats':
        return statsOf([], child.spec.kind === 'extended_stats');
      case 'cardinality':
      case 'value_count':
        return { value: 0 };
      default:
        return { value: null };
    }
  };

  /** The aggregations below one bucket: `bucket` is the search narrowed to it (for filter buckets and top_hits). */
  const render = async (
    children: Agg[],
    keys: Key[],
    metrics: Map<string, unknown> | undefined,
    parentCount: number,
    bucket: Filter,
  ): Promise<Dict<unknown>> => {
    const out = dict<unknown>();
    for (const child of children) {
      const spec = child.spec;
      if (spec.kind === 'date_histogram' || spec.kind === 'terms') {
        const rows = levels.get(child)?.rows.get(JSON.stringify(keys)) ?? [];
        out[child.name] =
          spec.kind === 'date_histogram'
            ? await histogram(child, spec, rows, keys, bucket)
            : await terms(child, spec, rows, keys, parentCount, bucket);
      } else if (spec.kind === 'filters' || spec.kind === 'range' || spec.kind === 'date_range') {
        out[child.name] = await filterBuckets(child, spec, bucket);
      } else if (spec.kind === 'histogram') {
        out[child.name] = await numericHistogram(child, spec, bucket);
      } else if (spec.kind === 'top_hits') {
        out[child.name] = await topHits(spec, bucket, parentCount);
      } else {
        out[child.name] = metrics?.get(child.name) ?? emptyMetric(child);
      }
    }
    return out;
  };

  /** A bucket whose documents are the search narrowed by a filter: counted, and its sub-aggregations run on it. */
  const subSearch = async (children: Agg[], bucket: Filter) => {
    if (bucket.from > bucket.to)
      return { doc_count: 0, ...(await runAggregations(store, { ...bucket, condition: NOTHING }, children, budget)) };
    spend();
    const [row] = await store.aggregate({ ...bucket, groups: [], metrics: [], maxGroups: 1 });
    return { doc_count: row?.count ?? 0, ...(children.length > 0 ? await runAggregations(store, bucket, children, budget) : {}) };
  };

  const filterBuckets = async (agg: Agg, spec: FilterBuckets, parent: Filter) => {
    const buckets: Dict<unknown>[] = [];
    for (const item of spec.buckets) {
      const answer = await subSearch(agg.children, narrowed(parent, item.condition, item.from, item.to));
      const bucket = dict<unknown>();
      if (item.key !== undefined && spec.kind !== 'filters') bucket.key = item.key;
      buckets.push(Object.assign(bucket, item.shown, answer));
    }
    if (!spec.keyed) return { buckets };
    return {
      buckets: dict(
        spec.buckets.map((item, index): [string, unknown] => {
          const { key: _key, ...rest } = buckets[index]!;
          return [String(item.key ?? index), rest];
        }),
      ),
    };
  };

  const numericHistogram = async (agg: Agg, spec: Histogram, parent: Filter) => {
    spend();
    const values = await store.numericValues({ ...parent, groups: [], field: spec.field, maxValues: MAX_PERCENTILE_VALUES });
    const counts = new Map<number, number>();
    for (const { value } of values) {
      const key = Math.floor(value / spec.interval) * spec.interval;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    let keys = [...counts.keys()].sort((a, b) => a - b);
    if (spec.minDocCount === 0 && (keys.length > 0 || spec.bounds)) {
      const first = Math.min(keys[0] ?? Infinity, spec.bounds ? Math.floor(spec.bounds.min / spec.interval) * spec.interval : Infinity);
      const last = Math.max(
        keys.at(-1) ?? -Infinity,
        spec.bounds ? Math.floor(spec.bounds.max / spec.interval) * spec.interval : -Infinity,
      );
      if ((last - first) / spec.interval >= MAX_GROUPS) throw new RangeError(`more than ${MAX_GROUPS} buckets: use a larger interval`);
      keys = [];
      for (let step = 0; first + step * spec.interval <= last; step += 1) keys.push(first + step * spec.interval);
    }
    const field = resolveField(spec.field) as Extract<Condition, { kind: 'range' }>['field'];
    const buckets = [];
    for (const key of keys) {
      const count = counts.get(key) ?? 0;
      if (count < spec.minDocCount) continue;
      const bucket = narrowed(parent, {
        kind: 'range',
        field,
        compare: 'number',
        lower: { value: key, inclusive: true },
        upper: { value: key + spec.interval, inclusive: false },
      });
      const below = agg.children.length > 0 ? await runAggregations(store, bucket, agg.children, budget) : {};
      if (agg.children.length > 0) spend();
      buckets.push({ key, doc_count: count, ...below });
    }
    return { buckets: spec.keyed ? keyedBuckets(buckets, (bucket) => rangeText(bucket.key)) : buckets };
  };

  const topHits = async (spec: TopHits, bucket: Filter, count: number) => {
    let hits: unknown[] = [];
    if (spec.size > 0 && count > 0) {
      spend();
      const result = await store.search({
        ...bucket,
        page: 1,
        limit: spec.size,
        sort: { field: '@timestamp', order: spec.order },
        trackTotal: 1,
      });
      const keep = sourceFilterOf(spec.source);
      hits = result.entries.map((entry) => ({ ...hitOf(entry, keep), sort: [entry.timestamp] }));
    }
    return { hits: { total: { value: count, relation: 'eq' }, max_score: null, hits } };
  };

  /** The search narrowed to a terms bucket (its value, or the documents without the field) or a time bucket. */
  const termBucket = (parent: Filter, field: string, key: Key): Filter => {
    const ref = resolveField(field);
    if (ref.kind === 'timestamp') return parent;
    if (key === null) return narrowed(parent, { kind: 'not', child: { kind: 'exists', field: ref } });
    return narrowed(
      parent,
      ref.kind === 'message' ? { kind: 'contains', value: String(key) } : { kind: 'equals', field: ref, value: String(key) },
    );
  };

  const histogram = async (agg: Agg, spec: DateHistogram, rows: Row[], parentKeys: Key[], parent: Filter) => {
    const byStart = new Map(rows.map((row) => [Number(row.keys.at(-1)), row]));
    let starts = [...byStart.keys()].sort((a, b) => a - b);
    const { calendar, intervalMs } = spec;
    const next = (start: number) => (calendar ? calendarNext(start, calendar) : start + intervalMs);
    if (spec.minDocCount === 0) {
      const floor = (ms: number) => (calendar ? calendarFloor(ms, calendar) : ms - (((ms % intervalMs) + intervalMs) % intervalMs));
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
    const buckets = [];
    for (const start of starts) {
      const row = byStart.get(start);
      if ((row?.count ?? 0) < spec.minDocCount) continue;
      buckets.push({
        key_as_string: spec.epochMillis ? String(start) : new Date(start).toISOString(),
        key: start,
        doc_count: row?.count ?? 0,
        ...(await render(
          agg.children,
          [...parentKeys, start],
          row?.metrics,
          row?.count ?? 0,
          narrowed(parent, undefined, start, next(start) - 1),
        )),
      });
    }
    return { buckets: spec.keyed ? keyedBuckets(buckets, (bucket) => bucket.key_as_string) : buckets };
  };

  const terms = async (agg: Agg, spec: Terms, rows: Row[], parentKeys: Key[], parentCount: number, parent: Filter) => {
    // `missing` names the bucket of documents without the field (merged with a real value of that name, as Elasticsearch does).
    const missingKey = spec.missing === undefined ? undefined : String(spec.missing);
    type Shown = Row & { key: string | number; lookup: Key[] };
    const byKey = new Map<string, Shown>();
    for (const row of rows) {
      const value = row.keys.at(-1) ?? null;
      if (value === null && missingKey === undefined) continue;
      const key = value === null ? missingKey! : String(value);
      const known = byKey.get(key);
      if (known) known.count += row.count;
      else byKey.set(key, { ...row, key: value === null ? spec.missing! : value, lookup: row.keys });
    }
    for (const value of universes.get(agg) ?? []) {
      if (!byKey.has(value))
        byKey.set(value, { keys: [...parentKeys, value], count: 0, metrics: new Map(), key: value, lookup: [...parentKeys, value] });
    }
    const present = [...byKey.values()].filter((row) => row.count >= spec.minDocCount);
    const sign = spec.order.direction === 'asc' ? 1 : -1;
    const sortValue = (row: Shown): number | string => {
      if (spec.order.by === '_count') return row.count;
      if (spec.order.by === '_key') return String(row.key);
      const metric = row.metrics.get(spec.order.by) as { value?: number | null } | undefined;
      if (!metric && !agg.children.some((child) => child.name === spec.order.by && isMetric(child))) {
        throw unsupported(`a terms order by [${spec.order.by.slice(0, 50)}] (only _count, _key or a metric sub-aggregation)`);
      }
      return metric?.value ?? -Infinity;
    };
    present.sort((a, b) => {
      const [x, y] = [sortValue(a), sortValue(b)];
      const byValue = x < y ? -1 : x > y ? 1 : 0;
      return byValue * sign || String(a.key).localeCompare(String(b.key));
    });
    const shownRows = present.slice(0, spec.size);
    const shownCount = shownRows.reduce((sum, row) => sum + row.count, 0);
    const withValue = present.reduce((sum, row) => sum + row.count, 0);
    const buckets = [];
    for (const row of shownRows) {
      const lookupValue = row.lookup.at(-1) ?? null;
      buckets.push({
        key: row.key,
        doc_count: row.count,
        ...(await render(agg.children, row.lookup, row.metrics, row.count, termBucket(parent, spec.field, lookupValue))),
      });
    }
    return {
      doc_count_error_upper_bound: 0,
      sum_other_doc_count: Math.max(0, Math.min(parentCount, withValue) - shownCount),
      buckets,
    };
  };

  return render(aggs, [], topRow?.metrics, topRow?.count ?? 0, filter);
}
