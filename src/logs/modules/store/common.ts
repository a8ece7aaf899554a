import type { AttributeValue, FieldInfo, HistogramBucket, LogEntry, StoredLogEntry } from './log-store.js';
import { normalizeLevel } from './fields.js';
import type { Condition } from './query/condition.js';

export const MINUTE = 60_000;
export const DAY = 86_400_000;
/** A histogram with more buckets than this is refused (the HTTP layer picks coarser intervals). */
export const MAX_BUCKETS = 10_000;

/** An entry cleaned for storage: strings well-formed and NUL-free (PostgreSQL rejects both). */
export interface PreparedEntry {
  ts: number;
  level: string | null;
  service: string | null;
  host: string | null;
  trace_id: string | null;
  span_id: string | null;
  message: string;
  attributes: Record<string, AttributeValue>;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

const NEEDS_CLEANING = /[\u0000\uD800-\uDFFF]/;

function clean(value: string): string {
  if (!NEEDS_CLEANING.test(value)) return value;
  const wellFormed = value.replace(LONE_SURROGATE, '\uFFFD');
  return wellFormed.includes('\u0000') ? wellFormed.replaceAll('\u0000', '\uFFFD') : wellFormed;
}

function optional(value: string | undefined): string | null {
  return value === undefined || value === '' ? null : clean(value);
}

export function prepareEntries(entries: readonly LogEntry[]): PreparedEntry[] {
  return entries.map((entry, index) => {
    if (!Number.isFinite(entry.timestamp)) throw new TypeError(`log entry ${index}: timestamp must be a finite number`);
    if (typeof entry.message !== 'string') throw new TypeError(`log entry ${index}: message must be a string`);
    const attributes: Record<string, AttributeValue> = {};
    const source = entry.attributes;
    if (source) {
      for (const key in source) {
        const value = source[key];
        if (key === '' || !Object.hasOwn(source, key)) continue;
        if (typeof value === 'string') attributes[clean(key)] = clean(value);
        else if (typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))) attributes[clean(key)] = value;
      }
    }
    const level = optional(entry.level);
    return {
      ts: Math.floor(entry.timestamp),
      level: level === null ? null : normalizeLevel(level),
      service: optional(entry.service),
      host: optional(entry.host),
      trace_id: optional(entry.trace_id),
      span_id: optional(entry.span_id),
      message: clean(entry.message),
      attributes,
    };
  });
}

export interface RollupRow {
  minute: number;
  level: string;
  service: string;
  count: number;
}

/** Per-minute counts by level and service, sorted so concurrent upserts lock rows in one order. */
export function rollupRows(entries: readonly PreparedEntry[]): RollupRow[] {
  const counts = new Map<string, RollupRow>();
  for (const entry of entries) {
    const minute = entry.ts - mod(entry.ts, MINUTE);
    const level = entry.level ?? '';
    const service = entry.service ?? '';
    const key = `${minute}\u0000${level}\u0000${service}`;
    const row = counts.get(key);
    if (row) row.count += 1;
    else counts.set(key, { minute, level, service, count: 1 });
  }
  return [...counts.values()].sort((a, b) => a.minute - b.minute || cmp(a.level, b.level) || cmp(a.service, b.service));
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function mod(a: number, b: number): number {
  return ((a % b) + b) % b;
}

export type AttributeType = Exclude<FieldInfo['type'], 'date'>;

/**
 * Attribute names and types of a batch that the per-tenant cache has not seen yet. A name seen with
 * two types becomes `string`.
 */
export class FieldCatalogueCache {
  readonly #known = new Map<string, Map<string, AttributeType>>();

  newFields(tenantId: string, entries: readonly PreparedEntry[]): { name: string; type: AttributeType }[] {
    let known = this.#known.get(tenantId);
    if (!known) {
      known = new Map();
      this.#known.set(tenantId, known);
    }
    const fresh = new Map<string, AttributeType>();
    for (const entry of entries) {
      for (const [name, value] of Object.entries(entry.attributes)) {
        const type = typeof value as AttributeType;
        const before = fresh.get(name) ?? known.get(name);
        if (before === type || before === 'string') continue;
        fresh.set(name, before === undefined ? type : 'string');
      }
    }
    return [...fresh.entries()].sort(([a], [b]) => cmp(a, b)).map(([name, type]) => ({ name, type }));
  }

  /** Called after the batch committed. */
  remember(tenantId: string, fields: readonly { name: string; type: AttributeType }[]): void {
    const known = this.#known.get(tenantId);
    for (const field of fields) known?.set(field.name, field.type);
  }
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

export function fillBuckets(starts: readonly number[], counts: readonly BucketCount[], grouped: boolean): HistogramBucket[] {
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

/**
 * Splits [from, to] into whole minutes (answered from the rollups) and the ragged edges (answered from
 * the entries). Half-open ranges.
 */
export function splitByMinute(from: number, to: number): { minutes: [number, number] | null; edges: [number, number][] } {
  const end = to + 1;
  const fullStart = from + mod(-from, MINUTE);
  const fullEnd = end - mod(end, MINUTE);
  if (fullStart >= fullEnd) return { minutes: null, edges: [[from, end]] };
  const edges: [number, number][] = [];
  if (from < fullStart) edges.push([from, fullStart]);
  if (fullEnd < end) edges.push([fullEnd, end]);
  return { minutes: [fullStart, fullEnd], edges };
}

/** The level/service equalities a condition consists of, or null when rollups cannot answer it. */
export function rollupFilters(condition: Condition): { column: 'level' | 'service'; value: string }[] | null {
  if (condition.kind === 'all') return [];
  if (condition.kind === 'equals' && condition.field.kind === 'column' && (condition.field.column === 'level' || condition.field.column === 'service')) {
    return [{ column: condition.field.column, value: condition.value }];
  }
  if (condition.kind === 'and') {
    const parts = condition.children.map(rollupFilters);
    return parts.every((part) => part !== null) ? parts.flat() : null;
  }
  return null;
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

export function sortDistinct(values: Map<string, number>, q: string | undefined, limit: number): { value: string; count: number }[] {
  const needle = q?.toLowerCase();
  return [...values.entries()]
    .filter(([value]) => value !== '' && (needle === undefined || value.toLowerCase().includes(needle)))
    .sort((a, b) => b[1] - a[1] || cmp(a[0], b[0]))
    .slice(0, limit)
    .map(([value, count]) => ({ value, count }));
}

/** Whole milliseconds and a page of at least 1, whatever the caller passed. */
export function normalizeRange<T extends { from: number; to: number; page?: number; limit?: number }>(request: T): T {
  const normalized = { ...request, from: Math.floor(request.from), to: Math.floor(request.to) };
  if (request.page !== undefined) normalized.page = Math.max(1, Math.floor(request.page));
  if (request.limit !== undefined) normalized.limit = Math.max(0, Math.floor(request.limit));
  return normalized;
}
