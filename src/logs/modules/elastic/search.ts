import { isPlainObject } from '../../../shared/text/storable-text.js';
import type { LogStore, SearchRequest, StoredLogEntry } from '../store/log-store.js';
import { runAggregations, parseAggregations } from './aggregations.js';
import { ElasticError, parsingError, unsupported, withinLimits } from './elastic-errors.js';
import { dslSearch, fieldName } from '../query/elastic-dsl.js';
import { dict, type Dict } from '../../../shared/dict.js';
import { decodePit, decodeScroll, encodeCursor, keepAliveMs, type PitCursor, type ScrollCursor } from './cursors.js';

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
  'pit',
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
  /** Opens a scroll (`1m`): the answer has a `_scroll_id` for the next page. */
  scroll?: string | undefined;
}

/** The fields a search is sorted by, and the order of ties (`_shard_doc`, `_doc`: our id, in the order of the first key). */
export interface SortKeys {
  sort: SearchRequest['sort'];
  /** Whether the order is by time (ties by id): the order search_after, scroll and PIT page in. */
  byTime: boolean;
}

const TIEBREAKERS = new Set(['_doc', '_shard_doc']);

function orderOf(spec: unknown): 'asc' | 'desc' {
  const order = isPlainObject(spec) ? (spec.order ?? 'asc') : spec;
  if (order !== 'asc' && order !== 'desc') throw parsingError(`sort order must be asc or desc, got [${String(order).slice(0, 20)}]`);
  return order;
}

/**
 * `sort`: one field, or `@timestamp` followed by a tiebreaker (`_shard_doc`, `_doc`) in the same
 * order, as point-in-time paging sends it. Ties in time are ordered by our id, which is what
 * `_shard_doc` stands for here; `_score` adds nothing (there is no relevance score).
 */
export function sortOf(sort: unknown): SortKeys {
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
  const keys = pairs
    .filter(([field]) => field !== '_score')
    .map(([field, spec]) => {
      const order = orderOf(spec);
      if (TIEBREAKERS.has(field)) return { field, order, tiebreaker: true };
      const name = fieldName(field);
      return { field: name === 'timestamp' ? '@timestamp' : name, order, tiebreaker: false };
    });
  const fields = keys.filter((key) => !key.tiebreaker);
  if (fields.length > 1) {
    throw unsupported('sorting by more than one field (sort by one field, or by @timestamp then _shard_doc)');
  }
  const first = fields[0];
  const byTime = first === undefined || first.field === '@timestamp';
  const firstOrder = first?.order ?? 'desc';
  for (const key of keys) {
    if (!key.tiebreaker) continue;
    if (first !== undefined && keys.indexOf(key) < keys.indexOf(first))
      throw unsupported(`[${key.field}] before the field it breaks ties of`);
    // `_doc` alone (Python's helpers.scan) means "any order": time order is as good as any.
    if (byTime && first !== undefined && key.field === '_shard_doc' && key.order !== firstOrder) {
      throw unsupported(`_shard_doc ${key.order} after @timestamp ${firstOrder} (ties are ordered as the time: use the same order)`);
    }
  }
  return { sort: first === undefined ? undefined : { field: first.field, order: first.order }, byTime };
}

export function sourceOf(entry: StoredLogEntry): Dict<unknown> {
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

/** A hit as Elasticsearch shows it; `_id` is the stored `_id` (every document written through this API has one), else ours. */
export function hitOf(entry: StoredLogEntry, keep: ((key: string) => boolean) | null | false, fields: readonly string[] = []) {
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
  return hit;
}

/** `_source` of a search body or of `GET _doc`'s URL parameters. */
export function sourceFilterOf(spec: unknown): ((key: string) => boolean) | null | false {
  return sourceFilter(spec);
}

const LAST_ID = '999999999999999999';

/** `search_after`: `[time, id]` (a hit's `sort`), or `[time]` alone (past every entry of that time). */
function afterOf(values: unknown, keys: SortKeys): SearchRequest['after'] {
  if (!keys.byTime) throw unsupported('search_after with a sort on a field other than @timestamp');
  if (!Array.isArray(values) || values.length < 1 || values.length > 2) {
    throw parsingError('search_after takes the sort values of the last hit: [time, id]');
  }
  const [time, id] = values as unknown[];
  const timestamp =
    typeof time === 'number' ? time : typeof time === 'string' ? (/^-?\d+$/.test(time) ? Number(time) : Date.parse(time)) : NaN;
  if (!Number.isSafeInteger(timestamp)) throw parsingError('search_after: the first value must be the time (epoch milliseconds)');
  if (id === undefined) return { timestamp, id: (keys.sort?.order ?? 'desc') === 'asc' ? LAST_ID : '-1' };
  const text = typeof id === 'number' ? String(id) : id;
  if (typeof text !== 'string' || !/^-?\d{1,18}$/.test(text))
    throw parsingError("search_after: the second value must be the id of a hit's sort");
  return { timestamp, id: text };
}

/** How a search goes on from an earlier page (scroll) or where it reads (point in time). */
interface Continuation {
  /** The next page of a scroll. */
  scroll?: ScrollCursor | undefined;
  /** The scroll's keep_alive for the next id. */
  keepAliveMs?: number | undefined;
}

/** One search, as `_search` and each part of `_msearch` answer it. */
export async function runSearch(
  scope: SearchScope,
  pathIndex: string | string[] | undefined,
  rawBody: unknown,
  params: SearchParams = {},
  continuation: Continuation = {},
) {
  const started = Date.now();
  const body = rawBody ?? {};
  if (!isPlainObject(body)) throw parsingError('the search body must be a JSON object');
  for (const key of Object.keys(body)) if (!BODY_KEYS.has(key)) throw unsupported(`the search option [${key.slice(0, 50)}]`);
  if (isPlainObject(body.script_fields) && Object.keys(body.script_fields).length > 0) throw unsupported('script_fields');

  let index = pathIndex;
  let pit: PitCursor | undefined;
  if (body.pit !== undefined) {
    if (!isPlainObject(body.pit) || typeof body.pit.id !== 'string') throw parsingError('[pit] needs an id');
    if (pathIndex !== undefined && !continuation.scroll) {
      throw new ElasticError(
        400,
        'action_request_validation_exception',
        '[indices] cannot be used with point in time; do not name an index',
      );
    }
    if (params.scroll !== undefined)
      throw new ElasticError(400, 'action_request_validation_exception', 'using [point in time] is not allowed in a scroll context');
    pit = decodePit(body.pit.id, scope.now);
    if (body.pit.keep_alive !== undefined) pit = { ...pit, expires: scope.now + keepAliveMs(body.pit.keep_alive, 'keep_alive') };
    index = pit.index;
  }

  const search = dslSearch({ query: body.query, q: params.q, index }, scope.now);
  const filter = { tenantId: scope.tenantId, condition: search.condition, from: search.from ?? 0, to: search.to ?? END_OF_TIME };

  const size = intParam(params.size ?? body.size, 'size', 10);
  const from = intParam(params.from ?? body.from, 'from', 0);
  if (from + size > MAX_RESULT_WINDOW) {
    throw new ElasticError(
      400,
      'illegal_argument_exception',
      `Result window is too large, from + size must be at most ${MAX_RESULT_WINDOW}; use search_after, scroll or a point in time`,
    );
  }
  const keys = params.sort !== undefined ? sortOf(params.sort.split(',')) : sortOf(body.sort);
  const sort = keys.sort;
  let after = body.search_after === undefined ? undefined : afterOf(body.search_after, keys);

  const scrolling = params.scroll !== undefined || continuation.scroll !== undefined;
  let keepAlive = continuation.keepAliveMs;
  if (params.scroll !== undefined) {
    keepAlive = keepAliveMs(params.scroll, 'scroll');
    if (from > 0) throw new ElasticError(400, 'action_request_validation_exception', 'using [from] is not allowed in a scroll context');
    if (after !== undefined)
      throw new ElasticError(400, 'action_request_validation_exception', '[search_after] cannot be used in a scroll context');
  }
  if (scrolling && !keys.byTime) throw unsupported('a scroll sorted by a field other than @timestamp');
  if (continuation.scroll) {
    const last = continuation.scroll.after;
    if (last === undefined) after = undefined;
    else after = { timestamp: last[0], id: last[1] };
  }

  const track = params.track_total_hits ?? body.track_total_hits ?? MAX_RESULT_WINDOW;
  // A scroll's later pages repeat the first page's total: counting again would cost each page as much as the first.
  const aggs = continuation.scroll ? [] : parseAggregations(body.aggs ?? body.aggregations, scope.now);

  const exact = track === true || track === 'true';
  const counting = track !== false && track !== 'false';
  let trackTotal = exact || !counting ? undefined : Number(track);
  if (trackTotal !== undefined && !(Number.isSafeInteger(trackTotal) && trackTotal >= 0)) {
    throw parsingError('[track_total_hits] must be true, false or a whole number');
  }
  if (continuation.scroll) trackTotal = 1;
  const exhausted = continuation.scroll !== undefined && continuation.scroll.after === undefined;
  // Aggregations count every match anyway: that count is the total, and the search only reads the page.
  const counted: { total?: number } = {};
  const aggregations = aggs.length > 0 ? await withinLimits(runAggregations(scope.store, filter, aggs, undefined, counted)) : undefined;
  const known = counted.total !== undefined;
  const result =
    !exhausted && (size > 0 || (counting && !known))
      ? await withinLimits(
          scope.store.search({ ...filter, page: 1, limit: size, offset: from, sort, after, trackTotal: known ? 1 : trackTotal }),
        )
      : { entries: [], total: 0, totalRelation: 'eq' as const };
  if (known) Object.assign(result, { total: counted.total, totalRelation: 'eq' });

  const keep = sourceFilter(body._source);
  const fields = requestedFields(body);
  const hits = result.entries.map((entry) => ({ ...hitOf(entry, keep, fields), sort: [entry.timestamp, entry.id] }));

  let total: unknown;
  if (continuation.scroll) total = continuation.scroll.total;
  else if (counting) {
    total = { value: result.total, relation: result.totalRelation };
    if (params.rest_total_hits_as_int === 'true') total = result.total;
  }
  const answer = dict<unknown>();
  if (scrolling) {
    const lastHit = result.entries.at(-1);
    const { aggs: _aggs, aggregations: _aggregations, ...rest } = body;
    // The page size and order go on with the id, also when the URL gave them (`?size=1000`, as the OpenSearch helpers send it).
    const carried = dict<unknown>(rest);
    carried.size = size;
    if (params.sort !== undefined) carried.sort = params.sort.split(',');
    const cursor: ScrollCursor = {
      kind: 'scroll',
      index,
      body: carried,
      q: params.q,
      total,
      after: lastHit ? [lastHit.timestamp, lastHit.id] : (continuation.scroll?.after ?? undefined),
      expires: scope.now + keepAlive!,
    };
    if (result.entries.length === 0) cursor.after = continuation.scroll?.after ?? undefined;
    answer._scroll_id = encodeCursor(cursor);
  }
  if (pit) answer.pit_id = encodeCursor(pit);
  return {
    ...answer,
    took: Date.now() - started,
    timed_out: false,
    _shards: { total: 1, successful: 1, skipped: 0, failed: 0 },
    hits: { ...(total === undefined ? {} : { total }), max_score: null, hits },
    ...(aggregations ? { aggregations } : {}),
  };
}

/** `POST /_search/scroll`: the next page of a scroll. */
export async function nextScrollPage(scope: SearchScope, scrollId: unknown, scroll: unknown) {
  const cursor = decodeScroll(scrollId, scope.now);
  const keepAlive = scroll === undefined ? cursor.expires - scope.now : keepAliveMs(scroll, 'scroll');
  const { pit: _pit, ...body } = cursor.body;
  return runSearch(scope, cursor.index, body, { q: cursor.q }, { scroll: cursor, keepAliveMs: keepAlive });
}
