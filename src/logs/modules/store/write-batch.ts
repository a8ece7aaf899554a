import { storableText } from '../../../shared/text/storable-text.js';
import type { AttributeValue, FieldInfo, LogEntry } from './log-store.js';
import { normalizeLevel } from './fields.js';
import { compareText, HOUR, MINUTE, mod } from './minutes.js';

/** What every dialect's append prepares from a batch: storable entries, their rollup rows, new catalogue fields. */

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

function optional(value: string | undefined): string | null {
  return value === undefined || value === '' ? null : storableText(value);
}

/** A batch split by document id: what to store, and which entries repeat an id already stored or earlier in the batch. */
export interface DocumentIdSplit {
  kept: LogEntry[];
  duplicates: number[];
  /** The ids of the kept entries, to remember. */
  newIds: string[];
}

/** The distinct document ids of a batch, in order. */
export function documentIdsOf(entries: readonly LogEntry[]): string[] {
  return [...new Set(entries.flatMap((entry) => (entry.documentId === undefined ? [] : [entry.documentId])))];
}

/** Keeps entries without an id and the first entry of each id that `stored` does not hold. */
export function splitByDocumentId(entries: readonly LogEntry[], stored: ReadonlySet<string>): DocumentIdSplit {
  const seen = new Set(stored);
  const split: DocumentIdSplit = { kept: [], duplicates: [], newIds: [] };
  entries.forEach((entry, index) => {
    const id = entry.documentId;
    if (id !== undefined && seen.has(id)) {
      split.duplicates.push(index);
      return;
    }
    if (id !== undefined) {
      seen.add(id);
      split.newIds.push(id);
    }
    split.kept.push(entry);
  });
  return split;
}

/** The entry's time in whole milliseconds; TypeError when it is not a finite number. */
export function entryTime(entry: LogEntry, index: number): number {
  if (!Number.isFinite(entry.timestamp)) throw new TypeError(`log entry ${index}: timestamp must be a finite number`);
  return Math.floor(entry.timestamp);
}

export function prepareEntries(entries: readonly LogEntry[]): PreparedEntry[] {
  return entries.map((entry, index) => {
    const ts = entryTime(entry, index);
    if (typeof entry.message !== 'string') throw new TypeError(`log entry ${index}: message must be a string`);
    const attributes: Record<string, AttributeValue> = {};
    const source = entry.attributes;
    if (source) {
      for (const key in source) {
        const value = source[key];
        if (key === '' || !Object.hasOwn(source, key)) continue;
        if (typeof value === 'string') attributes[storableText(key)] = storableText(value);
        else if (typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))) attributes[storableText(key)] = value;
      }
    }
    if (entry.documentId !== undefined) attributes._id = storableText(entry.documentId);
    const level = optional(entry.level);
    return {
      ts,
      level: level === null ? null : normalizeLevel(level),
      service: optional(entry.service),
      host: optional(entry.host),
      trace_id: optional(entry.trace_id),
      span_id: optional(entry.span_id),
      message: storableText(entry.message),
      attributes,
    };
  });
}

/**
 * The rollup tables by bucket, [bucket, level and service table, host table]: per minute, and per hour
 * for counts over days (migration 0130); `minute` holds the bucket's first millisecond in both.
 */
export const ROLLUP_BUCKETS = [
  [MINUTE, 'log_rollups', 'log_host_rollups'],
  [HOUR, 'log_rollups_hourly', 'log_host_rollups_hourly'],
] as const;
export const ROLLUP_TABLE_NAMES = ROLLUP_BUCKETS.flatMap(([, table, hostTable]) => [table, hostTable]);

export interface RollupRow {
  minute: number;
  level: string;
  service: string;
  count: number;
}

/**
 * Counts by level and service per minute (or per `bucketMs`: the hourly rollups), sorted so
 * concurrent upserts lock rows in one order. `minute` is the bucket's first millisecond.
 */
export function rollupRows(entries: readonly PreparedEntry[], bucketMs = MINUTE): RollupRow[] {
  const counts = new Map<string, RollupRow>();
  for (const entry of entries) {
    const minute = entry.ts - mod(entry.ts, bucketMs);
    const level = entry.level ?? '';
    const service = entry.service ?? '';
    const key = `${minute}\u0000${level}\u0000${service}`;
    const row = counts.get(key);
    if (row) row.count += 1;
    else counts.set(key, { minute, level, service, count: 1 });
  }
  return [...counts.values()].sort((a, b) => a.minute - b.minute || compareText(a.level, b.level) || compareText(a.service, b.service));
}

/** Counts by host ('' for none) per minute (or per `bucketMs`), sorted like rollupRows. */
export function hostRollupRows(entries: readonly PreparedEntry[], bucketMs = MINUTE): { minute: number; host: string; count: number }[] {
  const counts = new Map<string, { minute: number; host: string; count: number }>();
  for (const entry of entries) {
    const minute = entry.ts - mod(entry.ts, bucketMs);
    const host = entry.host ?? '';
    const key = `${minute}\u0000${host}`;
    const row = counts.get(key);
    if (row) row.count += 1;
    else counts.set(key, { minute, host, count: 1 });
  }
  return [...counts.values()].sort((a, b) => a.minute - b.minute || compareText(a.host, b.host));
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
    return [...fresh.entries()].sort(([a], [b]) => compareText(a, b)).map(([name, type]) => ({ name, type }));
  }

  /** Called after the batch committed. */
  remember(tenantId: string, fields: readonly { name: string; type: AttributeType }[]): void {
    const known = this.#known.get(tenantId);
    for (const field of fields) known?.set(field.name, field.type);
  }
}
