import { PassThrough } from 'node:stream';
import { setImmediate } from 'node:timers/promises';
import { stringify } from 'csv-stringify';
import { dict, own } from '../../../shared/dict.js';
import { roomFor } from '../audit/audit-export.js';
import type { LogStore, SearchRequest, StoredLogEntry } from '../store/log-store.js';
import { entryView } from './entry-view.js';

/** Entries read from the store per page: a page in memory at a time, whatever the export's size. */
const PAGE = 1000;

export const DEFAULT_EXPORT_COLUMNS = ['@timestamp', 'level', 'service', 'host', 'message'] as const;

export type ExportSearch = Omit<SearchRequest, 'page' | 'limit' | 'after' | 'offset' | 'trackTotal' | 'sort'> & { order: 'asc' | 'desc' };

/** Every match of the search in its order, a page at a time, by search_after (no result window). */
async function* pages(store: LogStore, search: ExportSearch): AsyncGenerator<StoredLogEntry[]> {
  const { order, ...filter } = search;
  let after: SearchRequest['after'];
  for (;;) {
    // trackTotal 1: the pages are wanted, not the count.
    const { entries } = await store.search({ ...filter, sort: { field: '@timestamp', order }, page: 1, limit: PAGE, after, trackTotal: 1 });
    if (entries.length === 0) return;
    yield entries;
    if (entries.length < PAGE) return;
    const last = entries.at(-1)!;
    after = { timestamp: last.timestamp, id: last.id };
  }
}

/** A column's value of an entry in its API form: a top-level field, else an attribute; '' when absent. */
function cell(view: ReturnType<typeof entryView>, column: string): string | number | boolean {
  const top = column === 'attributes' ? undefined : own(view, column);
  if (typeof top === 'string' || typeof top === 'number' || typeof top === 'boolean') return top;
  const attribute = own(view.attributes, column);
  return typeof attribute === 'string' || typeof attribute === 'number' || typeof attribute === 'boolean' ? attribute : '';
}

/**
 * Streams `write` of every page into `out`, waiting while the client is behind and stopping when it
 * left (the stream destroyed); a failed read ends the stream with that error.
 */
function pump<T extends NodeJS.WritableStream & PassThrough>(
  out: T,
  store: LogStore,
  search: ExportSearch,
  write: (entry: StoredLogEntry) => boolean,
): T {
  void (async () => {
    try {
      for await (const page of pages(store, search)) {
        for (const entry of page) if (!write(entry) && !(await roomFor(out))) return;
        // SQLite answers without a turn of the event loop: yield one per page, so a client that left is noticed.
        await setImmediate();
        if (out.destroyed) return;
      }
      out.end();
    } catch (error) {
      out.destroy(error as Error);
    }
  })();
  return out;
}

/** A text cell a spreadsheet would run as a formula (= + - @, tab, CR first) gets a leading quote. */
function inert(value: string | number | boolean): string | number | boolean {
  return typeof value === 'string' && /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
}

/**
 * CSV with a header of the columns (as named: `@timestamp` is a field, not a formula); cells
 * starting = + - @ (or tab, CR) are quoted against spreadsheet formulas.
 */
export function logsCsv(store: LogStore, search: ExportSearch, columns: readonly string[]): NodeJS.ReadableStream {
  const csv = stringify({ header: true, columns: [...columns], bom: true });
  return pump(csv as unknown as PassThrough, store, search, (entry) => {
    const view = entryView(entry);
    return csv.write(columns.map((column) => inert(cell(view, column))));
  });
}

/** One JSON object per line: the entry in its API form, or only the columns asked for. */
export function logsNdjson(store: LogStore, search: ExportSearch, columns: readonly string[] | undefined): NodeJS.ReadableStream {
  const out = new PassThrough();
  return pump(out, store, search, (entry) => {
    const view = entryView(entry);
    const line = columns ? dict(columns.map((column) => [column, cell(view, column)] as const)) : view;
    return out.write(`${JSON.stringify(line)}\n`);
  });
}
