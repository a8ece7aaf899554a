import { isPlainObject } from '../../../shared/text/storable-text.js';
import type { LogStore, SearchRequest, StoredLogEntry } from '../store/log-store.js';
import { runAggregations, parseAggregations } from './aggregations.js';
import { ElasticError, parsingError, unsupported, withinLimits } from './elastic-errors.js';
import { dslSearch, fieldName } from '../query/elastic-dsl.js';
import { dict, type Dict } from '../../../shared/dict.js';

/** Elasticsearch's index.max_result_window: from + size beyond it is refused. */
export const MAX_RESULT_WINDOW = 10_000;
/** The latest time a JavaScript date can hold: an unbounded search reads every entry. */
const END_OF_TIME = 8_640_000_000_000_000;

const BODY_KEYS = new Set([
  'query',
  'size',
  'from',
  'sort',
  'search_after',
  'track_total_hits',
  'aggs',
  'aggregations',
  '_source',
  'fields',
  'docvalue_fields',
  'stored_fields',
  'script_fields',
  'highlight',
  'timeout',
  'track_scores',
  'version',
  'seq_no_primary_term',
  'explain',
]);

export interface SearchScope {
  store: LogStore;
  tenantId: string;
  now: number;
}

/** URL parameters of `_search` that change the answer. */
export interface SearchParams {
  q?: string | undefined;
  size?: string | undefined;
  from?: string | undefined;
  sort?: string | undefined;
  track_total_hits?: string | undefined;
  rest_total_hits_as_int?: string | undefined;
}

function sortOf(sort: unknown): SearchRequest['sort'] {
  const items = sort === undefined ? [] : Array.isArray(sort) ? sort : [sort];
  // Grafana sends one object with several keys: {"@timestamp": {...}, "_doc": {...}}.
  const pairs = items.flatMap((item): [string, unknown][] => {
    if (typeof item === 'string') {
      const [field, order] = item.split(':');
      return [[field!, order ?? 'asc']];
    }
    if (isPlainObject(item)) return Object.entries(item);
    throw parsingError('malformed sort');
  });
  const fields = pairs
    .filter(([field]) => field !== '_doc' && field !== '_score')
    .map(([field, spec]) => {
      const order = isPlainObject(spec) ? (spec.order ?? 'asc') : spec;
      if (order !== 'asc' && order !== 'desc') throw parsingError(`sort order must be asc or desc, got [${String(order).slice(0, 20)}]`);
      const name = fieldName(field);
      return { field: name === 'timestamp' ? '@timestamp' : name, order: order as 'asc' | 'desc' };
    });
  if (fields.length > 1) throw unsupported('sorting by more than one field');
  return fields[0];
}

function sourceOf(entry: StoredLogEntry): Dict<unknown> {
  const { _index: _ignoredIndex, _id: _ignoredId, ...attributes } = entry.attributes;
  const source = dict<unknown>({ '@timestamp': new Date(entry.timestamp).toISOString(), message: entry.message });
  for (const key of ['level', 'service', 'host', 'trace_id', 'span_id'] as const) {
    if (entry[key] !== undefined && entry[key] !== null) source[key] = entry[key];
  }
  return Object.assign(source, attributes);
}

/** `_source`: true, false, a list or {includes} of names and `prefix*` patterns. */
function sourceFilter(spec: unknown): ((key: string) => boolean) | null | false {
  if (spec === undefined || spec === true) return null;
  if (spec === false) return false;
  const patterns = Array.isArray(spec)
    ? spec
    : typeof spec === 'string'
      ? [spec]
      : isPlainObject(spec) && Array.isArray(spec.includes)
        ? spec.includes
        : undefined;
  if (!patterns || (isPlainObject(spec) && spec.excludes !== undefined)) throw unsupported('this _source filter');
  const names = patterns.map(String);
  return (key) => names.some((name) => (name.endsWith('*') ? key.startsWith(name.slice(0, -1)) : key === name));
}

function requestedFields(body: Record<string, unknown>): string[] {
  const list: unknown[] = [body.fields, body.docvalue_fields].flatMap((value): unknown[] => (Array.isArray(value) ? value : []));
  return list.map((item) => (isPlainObject(item) ? String(item.field) : String(item)));
}

function intParam(value: unknown, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0) throw parsingError(`[${name}] must be a whole number of at least 0`);
  return number;
}

/** One search, as `_search` and each part of `_msearch` answer it. */
export async function runSearch(scope: SearchScope, index: string | string[] | undefined, rawBody: unknown, params: SearchParams = {}) {
  const started = Date.now();
  const body = rawBody ?? {};
  if (!isPlainObject(body)) throw parsingError('the search body must be a JSON object');
  for (const key of Object.keys(body)) if (!BODY_KEYS.has(key)) throw unsupported(`the search option [${key.slice(0, 50)}]`);
  if (isPlainObject(body.script_fields) && Object.keys(body.script_fields).length > 0) throw unsupported('script_fields');

  const search = dslSearch({ query: body.query, q: params.q, index }, scope.now);
  const filter = { tenantId: scope.tenantId, condition: search.condition, from: search.from ?? 0, to: search.to ?? END_OF_TIME };

  const size = intParam(params.size ?? body.size, 'size', 10);
  const from = intParam(params.from ?? body.from, 'from', 0);
  if (from + size > MAX_RESULT_WINDOW) {
    throw new ElasticError(
      400,
      'illegal_argument_exception',
      `Result window is too large, from + size must be at most ${MAX_RESULT_WINDOW}; use search_after`,
    );
  }
  const sort = params.sort !== undefined ? sortOf(params.sort.split(',')) : sortOf(body.sort);
  let after: SearchRequest['after'];
  if (body.search_after !== undefined) {
    const values = body.search_after;
    if (!Array.isArray(values) || values.length !== 2 || typeof values[0] !== 'number') {
      throw parsingError('search_after takes the [time, id] sort values of the last hit');
    }
    after = { timestamp: values[0], id: String(values[1]) };
  }
  const track = params.track_total_hits ?? body.track_total_hits ?? MAX_RESULT_WINDOW;
  const aggs = parseAggregations(body.aggs ?? body.aggregations, scope.now);

  const exact = track === true || track === 'true';
  const counting = track !== false && track !== 'false';
  const trackTotal = exact || !counting ? undefined : Number(track);
  if (trackTotal !== undefined && !(Number.isSafeInteger(trackTotal) && trackTotal >= 0)) {
    throw parsingError('[track_total_hits] must be true, false or a whole number');
  }
  const result =
    size > 0 || counting
      ? await withinLimits(scope.store.search({ ...filter, page: 1, limit: size, offset: from, sort, after, trackTotal }))
      : { entries: [], total: 0, totalRelation: 'eq' as const };
  const aggregations = aggs.length > 0 ? await withinLimits(runAggregations(scope.store, filter, aggs)) : undefined;

  const keep = sourceFilter(body._source);
  const fields = requestedFields(body);
  const hits = result.entries.map((entry) => {
    const source = sourceOf(entry);
    const hit: Record<string, unknown> = {
      _index: typeof entry.attributes._index === 'string' ? entry.attributes._index : 'logs',
      _id: typeof entry.attributes._id === 'string' ? entry.attributes._id : entry.id,
      _score: null,
    };
    if (keep !== false) hit._source = keep === null ? source : dict(Object.entries(source).filter(([key]) => keep(key)));
    if (fields.length > 0) {
      hit.fields = dict(
        fields.flatMap((name): [string, unknown[]][] => {
          const key = name === 'timestamp' ? '@timestamp' : name;
          return source[key] === undefined ? [] : [[name, [source[key]]]];
        }),
      );
    }
    hit.sort = [entry.timestamp, entry.id];
    return hit;
  });

  let total: unknown;
  if (counting) {
    total = { value: result.total, relation: result.totalRelation };
    if (params.rest_total_hits_as_int === 'true') total = result.total;
  }
  return {
    took: Date.now() - started,
    timed_out: false,
    _shards: { total: 1, successful: 1, skipped: 0, failed: 0 },
    hits: { ...(total === undefined ? {} : { total }), max_score: null, hits },
    ...(aggregations ? { aggregations } : {}),
  };
}
