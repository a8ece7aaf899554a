import { randomUUID } from 'node:crypto';
import {
  QuerySyntaxError, type DistinctRequest, type FieldInfo, type HistogramBucket, type HistogramRequest, type LogEntry, type LogStore,
  type SearchRequest, type SearchResult, type StoredLogEntry,
} from '../../src/logs/modules/store/log-store.js';

/**
 * A small in-memory LogStore for the HTTP tests of the logs API until the real store (SQLite FTS5 /
 * PostgreSQL) is merged; test/helpers/logs.ts uses the real one as soon as it exists. Its query
 * language is a subset: words (all must appear as words of the message), "phrases", field:value.
 * Tests written against it use only that subset so they run unchanged on the real store. As in the
 * real store (docs/log-store.md), `from` and `to` are inclusive and buckets are epoch-aligned.
 */
export class MemoryLogStore implements LogStore {
  private readonly entries: StoredLogEntry[] = [];

  async append(tenantId: string, entries: readonly LogEntry[]): Promise<void> {
    for (const entry of entries) this.entries.push({ ...entry, id: randomUUID(), tenant_id: tenantId, attributes: { ...(entry.attributes ?? {}) } });
  }

  private matching(request: Omit<SearchRequest, 'page' | 'limit' | 'sort'>): StoredLogEntry[] {
    const predicate = compile(request.query ?? '');
    return this.entries.filter(
      (entry) =>
        entry.tenant_id === request.tenantId &&
        entry.timestamp >= request.from &&
        entry.timestamp <= request.to &&
        (request.filters ?? []).every((filter) => valueOf(entry, filter.field) === filter.value) &&
        predicate(entry),
    );
  }

  async search(request: SearchRequest): Promise<SearchResult> {
    const field = request.sort?.field ?? '@timestamp';
    const direction = request.sort?.order === 'asc' ? 1 : -1;
    const rows = this.matching(request).sort((a, b) => {
      const x = valueOf(a, field) ?? '';
      const y = valueOf(b, field) ?? '';
      return (field === '@timestamp' ? a.timestamp - b.timestamp : x < y ? -1 : x > y ? 1 : 0) * direction;
    });
    return { entries: rows.slice((request.page - 1) * request.limit, request.page * request.limit), total: rows.length };
  }

  async histogram(request: HistogramRequest): Promise<HistogramBucket[]> {
    const start = Math.floor(request.from / request.intervalMs) * request.intervalMs;
    const buckets: HistogramBucket[] = [];
    for (let ts = start; ts <= request.to; ts += request.intervalMs) buckets.push({ ts, count: 0, ...(request.groupBy ? { groups: {} } : {}) });
    for (const entry of this.matching(request)) {
      const bucket = buckets[Math.floor((entry.timestamp - start) / request.intervalMs)]!;
      bucket.count += 1;
      if (request.groupBy) {
        const key = valueOf(entry, request.groupBy) ?? '';
        bucket.groups![key] = (bucket.groups![key] ?? 0) + 1;
      }
    }
    return buckets;
  }

  async fields(tenantId: string): Promise<FieldInfo[]> {
    const fields = new Map<string, FieldInfo['type']>([['@timestamp', 'date'], ['message', 'string']]);
    for (const entry of this.entries.filter((e) => e.tenant_id === tenantId)) {
      for (const core of ['level', 'service', 'host', 'trace_id', 'span_id'] as const) if (entry[core] !== undefined) fields.set(core, 'string');
      for (const [name, value] of Object.entries(entry.attributes)) fields.set(name, typeof value as FieldInfo['type']);
    }
    return [...fields].map(([name, type]) => ({ name, type })).sort((a, b) => a.name.localeCompare(b.name));
  }

  async distinct(request: DistinctRequest): Promise<{ value: string; count: number }[]> {
    const counts = new Map<string, number>();
    for (const entry of this.entries) {
      if (entry.tenant_id !== request.tenantId) continue;
      if (request.from !== undefined && entry.timestamp < request.from) continue;
      if (request.to !== undefined && entry.timestamp > request.to) continue;
      const value = valueOf(entry, request.field);
      if (value === undefined) continue;
      if (request.q && !value.toLowerCase().includes(request.q.toLowerCase())) continue;
      counts.set(value, (counts.get(value) ?? 0) + 1);
    }
    return [...counts].map(([value, count]) => ({ value, count })).sort((a, b) => b.count - a.count || a.value.localeCompare(b.value)).slice(0, request.limit);
  }

  async removeOlderThan(tenantId: string, before: number): Promise<number> {
    let removed = 0;
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const entry = this.entries[i]!;
      if (entry.tenant_id === tenantId && entry.timestamp < before) {
        this.entries.splice(i, 1);
        removed += 1;
      }
    }
    return removed;
  }
}

function valueOf(entry: StoredLogEntry, field: string): string | undefined {
  if (field === '@timestamp') return String(entry.timestamp);
  if (field === 'message' || field === 'level' || field === 'service' || field === 'host' || field === 'trace_id' || field === 'span_id') return entry[field];
  const value = entry.attributes[field];
  return value === undefined ? undefined : String(value);
}

const words = (text: string) => text.toLowerCase().split(/[^\p{L}\p{N}_]+/u).filter(Boolean);

/** Words, "phrases" and field:value, all of which must match. */
function compile(query: string): (entry: StoredLogEntry) => boolean {
  const terms: ((entry: StoredLogEntry) => boolean)[] = [];
  const pattern = /\s*(?:([\w.@-]+):"([^"]*)"|([\w.@-]+):(\S+)|"([^"]*)"|(")|(\S+))/gy;
  let match: RegExpExecArray | null;
  while ((match = pattern.exec(query)) && match[0] !== '') {
    const [, phraseField, phraseValue, field, value, phrase, unclosed, word] = match;
    if (unclosed) throw new QuerySyntaxError('unterminated phrase', match.index + match[0].indexOf('"'));
    if (phraseField !== undefined) terms.push((e) => valueOf(e, phraseField) === phraseValue);
    else if (field !== undefined) terms.push((e) => valueOf(e, field)?.toLowerCase() === value!.toLowerCase());
    else if (phrase !== undefined) terms.push((e) => e.message.toLowerCase().includes(phrase.toLowerCase()));
    else if (word !== undefined) {
      if (/[()]/.test(word)) throw new QuerySyntaxError('parentheses are not supported by the memory store', match.index);
      terms.push((e) => words(e.message).includes(word.toLowerCase()));
    }
  }
  return (entry) => terms.every((term) => term(entry));
}
