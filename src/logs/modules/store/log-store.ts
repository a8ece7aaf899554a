import type { Dict } from '../../../shared/dict.js';
import type { Condition } from '../query/condition.js';
/**
 * The log store: one interface, a SQLite implementation (embedded default, FTS5) and a PostgreSQL
 * implementation (production, time-partitioned). The HTTP layer (ingest, search routes) only ever
 * talks to this interface. Times are epoch milliseconds.
 */

/** Attribute values are flattened to dotted names: {"k8s.pod.name": "api-1"}. */
export type AttributeValue = string | number | boolean;

export interface LogEntry {
  /** Epoch milliseconds (`@timestamp` on the API). */
  timestamp: number;
  message: string;
  level?: string | undefined;
  service?: string | undefined;
  host?: string | undefined;
  trace_id?: string | undefined;
  span_id?: string | undefined;
  attributes?: Record<string, AttributeValue> | undefined;
  /**
   * The sender's id of the document (Elasticsearch `_id`), stored as the attribute `_id`. While the
   * store remembers it (LogStoreOptions.documentIdWindowMs), another entry with the same id in the
   * tenant is not stored: a shipper's retry is kept once.
   */
  documentId?: string | undefined;
}

/** What append did with a batch. */
export interface AppendResult {
  /** Indexes (in the batch) of entries not stored because their documentId was already stored. */
  duplicates: number[];
}

export interface StoredLogEntry extends Omit<LogEntry, 'documentId'> {
  id: string;
  tenant_id: string;
  attributes: Record<string, AttributeValue>;
}

export interface SearchRequest {
  tenantId: string;
  /** Which entries: a parsed query (query/condition.ts, built by each front end); absent = everything in the range. */
  condition?: Condition | undefined;
  from: number;
  to: number;
  /** Default `@timestamp` desc. */
  sort?: { field: string; order: 'asc' | 'desc' } | undefined;
  /** From 1. */
  page: number;
  limit: number;
  /** Skip this many matches instead of whole pages (Elasticsearch's `from`). */
  offset?: number | undefined;
  /**
   * Keyset paging when sorting by `@timestamp`: only entries after this one in the sort order
   * (Elasticsearch's `search_after`). The total still counts every match.
   */
  after?: { timestamp: number; id: string } | undefined;
  /**
   * Count matches up to this many and report a lower bound beyond (Elasticsearch's
   * `track_total_hits`): counting every match of a common word can cost more than the page itself.
   * Default: count them all.
   */
  trackTotal?: number | undefined;
}

/** Matches a search counts at most unless asked for every one (the API's default `trackTotal`, as Elasticsearch's). */
export const DEFAULT_TRACK_TOTAL = 10_000;

export interface SearchResult {
  entries: StoredLogEntry[];
  /** Every match (`eq`), or at least this many (`gte`: counting stopped at SearchRequest.trackTotal). */
  total: number;
  totalRelation: 'eq' | 'gte';
}

export interface HistogramRequest extends Omit<SearchRequest, 'page' | 'limit' | 'sort'> {
  intervalMs: number;
  /** Split counts by this field's value. */
  groupBy?: string | undefined;
  /** The group key of entries without the field (default ''). */
  nullGroup?: string | undefined;
}

export interface HistogramBucket {
  /** Bucket start, epoch ms. */
  ts: number;
  count: number;
  /** Counts per value of `groupBy`, when asked. */
  groups?: Dict<number> | undefined;
}

export interface FieldInfo {
  name: string;
  type: 'string' | 'number' | 'boolean' | 'date';
}

export interface DistinctRequest {
  tenantId: string;
  field: string;
  /** Case-insensitive substring of the value. */
  q?: string | undefined;
  limit: number;
  from?: number | undefined;
  to?: number | undefined;
}

/** A field over the entries of a query: how many have it, and its most frequent values. */
export interface FieldStatsRequest extends Omit<SearchRequest, 'page' | 'limit' | 'sort' | 'offset' | 'after' | 'trackTotal'> {
  field: string;
  /** Most frequent values returned. */
  limit: number;
  /**
   * With more matches than this, `present`, `distinct` and `values` are counted in the newest this
   * many of them (by time, ties by id) where the store would read every match's row for them
   * (FieldStats.counted). Default: every match.
   */
  sample?: number | undefined;
}

export interface FieldStats {
  /** Entries matching the query in the range (always all of them). */
  matched: number;
  /** The entries `present`, `distinct` and `values` are counted in: `matched`, or fewer, the newest (a sample: FieldStatsRequest.sample). */
  counted: number;
  /** Of the entries counted, those that have the field. */
  present: number;
  /** Distinct values of the field among them. */
  distinct: number;
  /** Most frequent first (ties in code-unit order), at most `limit`. */
  values: { value: string; count: number }[];
}

/** The most frequent messages of some levels in [from, to) (the dashboards' top errors). */
export interface TopMessagesRequest {
  tenantId: string;
  from: number;
  /** Exclusive. */
  to: number;
  levels: readonly string[];
  limit: number;
}

export interface TopMessage {
  message: string;
  count: number;
  lastSeen: number;
  /** Up to five services that logged it, in code-unit order. */
  services: string[];
}

/**
 * Entries of [from, to) counted by groups of fields: each group's key is the value of its first
 * field that is present (`[['dc', 'cloud.region'], ['service']]`). Most entries first, at most `limit`.
 */
export interface GroupCountsRequest {
  tenantId: string;
  from: number;
  /** Exclusive. */
  to: number;
  groups: readonly (readonly string[])[];
  limit: number;
}

export interface GroupCount {
  /** One value (text, or null when none of the group's fields is present) per group. */
  keys: (string | null)[];
  count: number;
  lastSeen: number;
}

/** Calendar units of time buckets, in UTC; weeks start on Monday (ISO 8601). */
export type CalendarUnit = 'week' | 'month' | 'quarter' | 'year';

/** One level of grouping of an aggregation: fixed time buckets (aligned to the epoch), calendar buckets, or a field's value. */
export type AggregateGroup =
  { kind: 'time'; intervalMs: number } | { kind: 'calendar'; unit: CalendarUnit } | { kind: 'field'; field: string };

/** A number per group: over the field's numeric values (cardinality: over its distinct values). */
export interface AggregateMetric {
  kind: 'avg' | 'sum' | 'min' | 'max' | 'cardinality';
  field: string;
}

export interface AggregateRequest extends Omit<SearchRequest, 'page' | 'limit' | 'sort' | 'offset' | 'after'> {
  groups: readonly AggregateGroup[];
  metrics: readonly AggregateMetric[];
  /** More groups than this is a RangeError (nothing is cut silently). */
  maxGroups: number;
}

export interface AggregateRow {
  /** Per group level: the bucket start (time) or the field's text value (null when absent). */
  keys: (number | string | null)[];
  count: number;
  /** Per metric; null when no entry of the group has a number there. */
  metrics: (number | null)[];
}

export interface NumericValuesRequest extends Omit<AggregateRequest, 'metrics' | 'maxGroups'> {
  field: string;
  /** More values than this is a RangeError. */
  maxValues: number;
}

/** What a writer may ask of append besides the batch. */
export interface AppendOptions {
  /**
   * Called once the batch waits only for the store's writer: the event loop's work on it is done
   * (the `_bulk` route then decodes the next batch; docs/log-store.md, "The SQLite thread").
   */
  prepared?: () => void;
}

export interface LogStore {
  /** Stores a batch atomically; resolves only once it is durable (committed, fsynced). */
  append(tenantId: string, entries: readonly LogEntry[], options?: AppendOptions): Promise<AppendResult>;
  search(request: SearchRequest): Promise<SearchResult>;
  /** Every bucket from `from` to `to`, empty ones included, oldest first. */
  histogram(request: HistogramRequest): Promise<HistogramBucket[]>;
  fields(tenantId: string): Promise<FieldInfo[]>;
  /** Most frequent first. */
  distinct(request: DistinctRequest): Promise<{ value: string; count: number }[]>;
  /** A field over the matches of a query: coverage, distinct values, the most frequent values. */
  fieldStats(request: FieldStatsRequest): Promise<FieldStats>;
  topMessages(request: TopMessagesRequest): Promise<TopMessage[]>;
  groupCounts(request: GroupCountsRequest): Promise<GroupCount[]>;
  /** Counts and metrics per group of the matching entries, in no particular order. */
  aggregate(request: AggregateRequest): Promise<AggregateRow[]>;
  /** The numeric values of a field in the matching entries, with their group keys (for percentiles). */
  numericValues(request: NumericValuesRequest): Promise<{ keys: (number | string | null)[]; value: number }[]>;
  /** A cheap query on the store's tables (health checks); rejects when the store cannot answer. */
  ping(): Promise<void>;
  /** Removes the tenant's entries older than `before` in whole chunks (days); returns entries removed. */
  removeOlderThan(tenantId: string, before: number): Promise<number>;
  /** Forgets document ids remembered until `now` or earlier; returns how many. */
  forgetDocumentIds(now: number): Promise<number>;
}
