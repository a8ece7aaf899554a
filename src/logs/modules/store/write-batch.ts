import { storableText } from '../../../shared/text/storable-text.js';
import type { AttributeValue, FieldInfo, LogEntry } from './log-store.js';
import { normalizeLevel } from '../query/fields.js';
import { compareText, HOUR, MINUTE, mod } from './minutes.js';
import { dict } from '../../../shared/dict.js';

/** What every dialect's append prepares from a batch: storable entries, their rollup rows, new catalogue fields. */

/**
 * An entry cleaned for storage: strings well-formed and NUL-free (PostgreSQL rejects both). The one
 * place log entries are cleaned, whoever writes them (ingestion maps, the store cleans).
 */
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

/** The entry's document id as stored (its `_id` attribute). */
function documentIdOf(entry: LogEntry): string | undefined {
  return entry.documentId === undefined ? undefined : storableText(entry.documentId);
}

/** The distinct document ids of a batch, in order. */
export function documentIdsOf(entries: readonly LogEntry[]): string[] {
  // A loop, not flatMap: most batches have no ids, and no array per entry is made for them.
  const ids = new Set<string>();
  for (const entry of entries) {
    const id = documentIdOf(entry);
    if (id !== undefined) ids.add(id);
  }
  return [...ids];
}

/** Keeps entries without an id and the first entry of each id that `stored` does not hold. */
export function splitByDocumentId(entries: readonly LogEntry[], stored: ReadonlySet<string>): DocumentIdSplit {
  const seen = new Set(stored);
  const split: DocumentIdSplit = { kept: [], duplicates: [], newIds: [] };
  entries.forEach((entry, index) => {
    const id = documentIdOf(entry);
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

/** Entries prepared between turns of the event loop, so that a large batch never holds it for long. */
export const PREPARE_CHUNK = 1_000;

/**
 * A turn of the event loop: requests, timers and other batches' replies go first. Also what lets a
 * waiting write take the writer between a loop's write transactions (retention), which would
 * otherwise take it again before any waiter resumes.
 */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * prepareEntries a chunk at a time, with a turn of the event loop between chunks: a large batch in one
 * go would stall every request (docs/performance-notes.md, "Log store").
 */
export async function prepareEntriesInTurns(entries: readonly LogEntry[]): Promise<PreparedEntry[]> {
  const prepared: PreparedEntry[] = [];
  for (let first = 0; first < entries.length; first += PREPARE_CHUNK) {
    if (first > 0) await nextTurn();
    prepared.push(...prepareEntries(entries.slice(first, first + PREPARE_CHUNK), first));
  }
  return prepared;
}

/**
 * An entry's attributes as stored: names and text storable, empty names and values that are not
 * text, true/false or finite numbers left out. When `mayReuse` and the entry's own dictionary (no
 * prototype) is already all of that, as the ingestion pipelines make it, it is used as it is: one
 * copy less of every entry (the store only reads it).
 */
function storableAttributes(source: Record<string, AttributeValue> | undefined, mayReuse: boolean): Record<string, AttributeValue> {
  if (source && mayReuse && Object.getPrototypeOf(source) === null && alreadyStorable(source)) return source;
  const attributes = dict<AttributeValue>();
  if (source) {
    for (const key in source) {
      const value = source[key];
      if (key === '' || !Object.hasOwn(source, key)) continue;
      if (typeof value === 'string') attributes[storableText(key)] = storableText(value);
      else if (typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))) attributes[storableText(key)] = value;
    }
  }
  return attributes;
}

/** Whether a dictionary's names and values are all as storableAttributes would store them. */
function alreadyStorable(source: Record<string, AttributeValue>): boolean {
  for (const key in source) {
    const value = source[key];
    if (key === '' || storableText(key) !== key) return false;
    if (typeof value === 'string') {
      if (storableText(value) !== value) return false;
    } else if (typeof value !== 'boolean' && !(typeof value === 'number' && Number.isFinite(value))) return false;
  }
  return true;
}

/** `first`: the place of `entries[0]` in its batch, for the messages of refused entries. */
export function prepareEntries(entries: readonly LogEntry[], first = 0): PreparedEntry[] {
  return entries.map((entry, place) => {
    const index = first + place;
    const ts = entryTime(entry, index);
    if (typeof entry.message !== 'string') throw new TypeError(`log entry ${index}: message must be a string`);
    const documentId = documentIdOf(entry);
    const attributes = storableAttributes(entry.attributes, documentId === undefined);
    if (documentId !== undefined) attributes._id = documentId;
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
 * The rollup tables by bucket, [bucket, level and service table, host table, index table]: per
 * minute, and per hour for counts over days; `minute` holds the bucket's first millisecond in all.
 */
export const ROLLUP_BUCKETS = [
  [MINUTE, 'log_rollups', 'log_host_rollups', 'log_index_rollups'],
  [HOUR, 'log_rollups_hourly', 'log_host_rollups_hourly', 'log_index_rollups_hourly'],
] as const;
export const ROLLUP_TABLE_NAMES = ROLLUP_BUCKETS.flatMap(([, table, hostTable, indexTable]) => [table, hostTable, indexTable]);

export interface RollupRow {
  minute: number;
  level: string;
  service: string;
  count: number;
}

export interface HostRollupRow {
  minute: number;
  host: string;
  count: number;
}

/** Entries of a bucket by their `_index` attribute ('' for none); rollups.ts's indexCoverage reads them. */
export interface IndexRollupRow {
  minute: number;
  idx: string;
  count: number;
}

/**
 * The key an entry is counted under in the index rollups: its `_index` when a non-empty string, ''
 * when it has none; undefined (not counted, so the index rollups of its bucket stay incomplete and
 * are not used) for any other value, which an `_index` filter on the rows may or may not match.
 */
export function indexRollupKey(attributes: Record<string, AttributeValue>): string | undefined {
  const index = attributes._index;
  if (index === undefined) return '';
  return typeof index === 'string' && index !== '' ? index : undefined;
}

/** A batch's rows for one pair of rollup tables of ROLLUP_BUCKETS. */
export interface BatchRollups {
  table: (typeof ROLLUP_BUCKETS)[number][1];
  hostTable: (typeof ROLLUP_BUCKETS)[number][2];
  indexTable: (typeof ROLLUP_BUCKETS)[number][3];
  rows: RollupRow[];
  hostRows: HostRollupRow[];
  indexRows: IndexRollupRow[];
}

const byMinuteLevelService = (a: RollupRow, b: RollupRow): number =>
  a.minute - b.minute || compareText(a.level, b.level) || compareText(a.service, b.service);
const byMinuteHost = (a: HostRollupRow, b: HostRollupRow): number => a.minute - b.minute || compareText(a.host, b.host);
const byMinuteIndex = (a: IndexRollupRow, b: IndexRollupRow): number => a.minute - b.minute || compareText(a.idx, b.idx);

/**
 * A batch's counts for every pair of rollup tables (ROLLUP_BUCKETS): by level and service, and by host
 * ('' for none), each row sorted so that concurrent upserts lock rows in one order. The entries are
 * counted per minute in one pass (a batch's entries mostly share their minute, so each is one lookup
 * in that minute's map); the coarser buckets add up the minutes' rows.
 */
export function batchRollups(entries: readonly PreparedEntry[]): BatchRollups[] {
  // Per minute: by level, then by service (no key text made per entry), by host, and by index.
  type MinuteCounts = {
    rows: Map<string, Map<string, RollupRow>>;
    hosts: Map<string, HostRollupRow>;
    indexes: Map<string, IndexRollupRow>;
  };
  const minutes = new Map<number, MinuteCounts>();
  let minute = Number.NaN;
  let current: MinuteCounts = { rows: new Map(), hosts: new Map(), indexes: new Map() };
  for (const entry of entries) {
    const entryMinute = entry.ts - mod(entry.ts, MINUTE);
    if (entryMinute !== minute) {
      minute = entryMinute;
      let counts = minutes.get(minute);
      if (!counts) minutes.set(minute, (counts = { rows: new Map(), hosts: new Map(), indexes: new Map() }));
      current = counts;
    }
    const level = entry.level ?? '';
    const service = entry.service ?? '';
    let services = current.rows.get(level);
    if (!services) current.rows.set(level, (services = new Map<string, RollupRow>()));
    const row = services.get(service);
    if (row) row.count += 1;
    else services.set(service, { minute, level, service, count: 1 });
    const host = entry.host ?? '';
    const hostRow = current.hosts.get(host);
    if (hostRow) hostRow.count += 1;
    else current.hosts.set(host, { minute, host, count: 1 });
    const idx = indexRollupKey(entry.attributes);
    if (idx === undefined) continue;
    const indexRow = current.indexes.get(idx);
    if (indexRow) indexRow.count += 1;
    else current.indexes.set(idx, { minute, idx, count: 1 });
  }
  const rows = [...minutes.values()].flatMap((counts) => [...counts.rows.values()].flatMap((services) => [...services.values()]));
  const hostRows = [...minutes.values()].flatMap((counts) => [...counts.hosts.values()]);
  const indexRows = [...minutes.values()].flatMap((counts) => [...counts.indexes.values()]);
  return ROLLUP_BUCKETS.map(([bucketMs, table, hostTable, indexTable]) => ({
    table,
    hostTable,
    indexTable,
    rows: (bucketMs === MINUTE ? rows : coarser(rows, bucketMs, (row) => `${row.level}\u0000${row.service}`)).sort(byMinuteLevelService),
    hostRows: (bucketMs === MINUTE ? hostRows : coarser(hostRows, bucketMs, (row) => row.host)).sort(byMinuteHost),
    indexRows: (bucketMs === MINUTE ? indexRows : coarser(indexRows, bucketMs, (row) => row.idx)).sort(byMinuteIndex),
  }));
}

/** Rows of minutes added up into buckets of `bucketMs` (a multiple of a minute). */
function coarser<Row extends { minute: number; count: number }>(
  rows: readonly Row[],
  bucketMs: number,
  keyOf: (row: Row) => string,
): Row[] {
  const sums = new Map<string, Row>();
  for (const row of rows) {
    const bucket = row.minute - mod(row.minute, bucketMs);
    const key = `${bucket}\u0000${keyOf(row)}`;
    const sum = sums.get(key);
    if (sum) sum.count += row.count;
    else sums.set(key, { ...row, minute: bucket });
  }
  return [...sums.values()];
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
      const attributes = entry.attributes;
      for (const name in attributes) {
        const type = typeof attributes[name] as AttributeType;
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
