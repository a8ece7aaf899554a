/**
 * The explore page's search as the URL holds it: `#/explore?q=…&range=1h` (or `range=now-15m`, or
 * `from=…&to=…`), `live=1`, `cols=level,service,message` (the columns, in order), `sort=asc`
 * (oldest first; newest first without it) and `saved=<id>` (the saved search it came from).
 */
import type { LogEntry, SavedSearch, SavedSearchCreateBody } from '../api-types.js';

export const RANGES: Record<string, number> = {
  '5m': 300_000,
  '15m': 900_000,
  '1h': 3_600_000,
  '6h': 21_600_000,
  '24h': 86_400_000,
  '7d': 604_800_000,
};

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** The columns shown when none are chosen. */
export const DEFAULT_COLUMNS = ['level', 'service', 'host', 'message'] as const;

/** A relative range (`15m`, `now-15m`) in milliseconds; undefined when it is not one. */
export function relativeMs(range: string): number | undefined {
  if (Object.hasOwn(RANGES, range)) return RANGES[range];
  const match = /^(?:now-)?([1-9]\d{0,5})([smhdw])$/.exec(range);
  return match ? Number(match[1]) * UNIT_MS[match[2]!]! : undefined;
}

/** The absolute time range of the page's parameters (a relative range ends now). */
export function timeRange(params: URLSearchParams, now = Date.now()): { from: string; to: string } {
  const from = params.get('from');
  const to = params.get('to');
  if (from && to) return { from, to };
  const span = relativeMs(params.get('range') ?? '1h') ?? RANGES['1h']!;
  return { from: new Date(now - span).toISOString(), to: new Date(now).toISOString() };
}

/** The chosen columns (`cols`), else the default ones. */
export function columnsOf(params: URLSearchParams): string[] {
  const cols = params.get('cols');
  if (cols === null) return [...DEFAULT_COLUMNS];
  return cols.split(',').filter((name) => name !== '' && name !== '@timestamp');
}

/** The `cols` parameter of some columns (null: the default ones, which the URL leaves out). */
export function colsParam(columns: readonly string[]): string | null {
  return columns.join(',') === DEFAULT_COLUMNS.join(',') ? null : columns.join(',') || ',';
}

export function sortOf(params: URLSearchParams): 'asc' | 'desc' {
  return params.get('sort') === 'asc' ? 'asc' : 'desc';
}

/** A column's text in an entry: one of its own fields, else an attribute. */
export function columnValue(entry: LogEntry, column: string): string {
  const own = Object.hasOwn(entry, column) && column !== 'attributes' ? (entry as Record<string, unknown>)[column] : undefined;
  const value = own ?? (Object.hasOwn(entry.attributes, column) ? entry.attributes[column] : undefined);
  return value === undefined || value === null ? '' : String(value as string);
}

/** The page's search as a saved search's body. */
export function savedBody(params: URLSearchParams, name: string): SavedSearchCreateBody {
  const from = params.get('from');
  const to = params.get('to');
  const range = params.get('range') ?? '1h';
  return {
    name,
    query: params.get('q') ?? '',
    range: from && to ? { from, to } : { relative: range.startsWith('now-') ? range : `now-${range}` },
    columns: columnsOf(params),
    sort: sortOf(params),
  };
}

/** The URL parameters that open a saved search. */
export function savedParams(saved: SavedSearch): URLSearchParams {
  const params = new URLSearchParams();
  if (saved.query) params.set('q', saved.query);
  if ('relative' in saved.range) {
    const short = saved.range.relative.slice(4);
    params.set('range', Object.hasOwn(RANGES, short) ? short : saved.range.relative);
  } else {
    params.set('from', saved.range.from);
    params.set('to', saved.range.to);
  }
  const cols = colsParam(saved.columns.length ? saved.columns : DEFAULT_COLUMNS);
  if (cols !== null) params.set('cols', cols);
  if (saved.sort === 'asc') params.set('sort', 'asc');
  params.set('saved', saved.id);
  return params;
}

/** `field:"value"` in the query language, quotes and backslashes escaped. */
export function fieldFilter(field: string, value: string): string {
  return `${field}:"${value.replace(/[\\"]/g, (char) => `\\${char}`)}"`;
}

/** The query with one more condition: the field has the value, or (`exclude`) has not. */
export function withFilter(query: string, field: string, value: string, exclude = false): string {
  return [query.trim(), `${exclude ? 'NOT ' : ''}${fieldFilter(field, value)}`].filter(Boolean).join(' ');
}

/** The query with a phrase required (or, `exclude`, left out). */
export function withPhrase(query: string, phrase: string, exclude = false): string {
  return [query.trim(), `${exclude ? 'NOT ' : ''}"${phrase.replace(/[\\"]/g, (char) => `\\${char}`)}"`].filter(Boolean).join(' ');
}

/**
 * The words and phrases a query looks for in messages (for highlighting): free terms and
 * `message:` ones, not other fields' values nor what NOT or - leaves out; a prefix (`time*`) as
 * `{prefix: true}`.
 */
export function queryTerms(query: string): { text: string; prefix: boolean }[] {
  const terms = new Map<string, boolean>();
  const pattern = /(-|\bNOT\s+)?(?:([^\s():"]+):)?("(?:[^"\\]|\\.)*"|[^\s()"]+)/g;
  for (const match of query.matchAll(pattern)) {
    const [, negated, field, raw] = match;
    if (negated || (field !== undefined && field !== 'message') || !raw) continue;
    if (!raw.startsWith('"') && /^(AND|OR|NOT)$/.test(raw)) continue;
    const quoted = raw.startsWith('"');
    const text = (quoted ? raw.slice(1, -1).replace(/\\(.)/g, '$1') : raw).toLowerCase();
    const prefix = !quoted && text.endsWith('*');
    const word = prefix ? text.slice(0, -1) : text;
    if (word.trim() !== '') terms.set(word, prefix || (terms.get(word) ?? false));
  }
  return [...terms].map(([text, prefix]) => ({ text, prefix }));
}

/** The text with the terms marked (<mark>), as whole words (a prefix: at a word's start), ignoring case. */
export function highlighted(text: string, terms: readonly { text: string; prefix: boolean }[]): (string | HTMLElement)[] {
  if (terms.length === 0) return [text];
  const escape = (value: string) => value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const alternatives = terms.map((term) => `${escape(term.text)}${term.prefix ? '[\\p{L}\\p{N}]*' : ''}`).join('|');
  const pattern = new RegExp(`(?<![\\p{L}\\p{N}])(?:${alternatives})(?![\\p{L}\\p{N}])`, 'giu');
  const parts: (string | HTMLElement)[] = [];
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    if (match[0] === '') continue;
    if (match.index > last) parts.push(text.slice(last, match.index));
    const mark = document.createElement('mark');
    mark.textContent = match[0];
    parts.push(mark);
    last = match.index + match[0].length;
  }
  if (last < text.length) parts.push(text.slice(last));
  return parts;
}
