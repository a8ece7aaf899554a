import { isPlainObject, type PlainObject } from '../../../shared/text/storable-text.js';
import { ElasticError, parsingError } from './elastic-errors.js';
import { dict } from '../../../shared/dict.js';

/**
 * Scroll ids and point-in-time ids are stateless cursors: the search and where it stands, encoded
 * in the id the client sends back. Nothing is held on the server, so any instance answers any page,
 * a forgotten scroll costs nothing, and there is no limit on open contexts to run out of. The
 * expiry (`keep_alive`) travels in the id; a page past it is 404 `search_context_missing_exception`,
 * as Elasticsearch answers. The tenant is never in the id: it is the caller's, as on every search.
 */

/** Elasticsearch's search.max_keep_alive default. */
export const MAX_KEEP_ALIVE_MS = 24 * 3_600_000;
/** A scroll id or PIT id longer than this is not one of ours. */
const MAX_ID_CHARS = 64 * 1024;

const UNITS = dict<number>({ d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000, ms: 1 });

/** A `keep_alive` / `scroll` time value (`1m`, `30s`, `500ms`, `1d`), within MAX_KEEP_ALIVE_MS. */
export function keepAliveMs(value: unknown, name: string): number {
  const match = typeof value === 'string' ? /^(\d{1,9})(d|h|m|s|ms)$/.exec(value.trim()) : null;
  if (!match) throw parsingError(`[${name}] must be a time value such as 1m or 30s`);
  const ms = Number(match[1]) * UNITS[match[2]!]!;
  if (ms > MAX_KEEP_ALIVE_MS) {
    throw new ElasticError(
      400,
      'illegal_argument_exception',
      `Keep alive for request (${String(value).slice(0, 20)}) is too large. It must be less than (1d)`,
    );
  }
  return ms;
}

export interface ScrollCursor {
  kind: 'scroll';
  index: string | string[] | undefined;
  /** The search body of the first page, without aggregations. */
  body: PlainObject;
  q: string | undefined;
  /** The first page's `hits.total`, repeated on every page as Elasticsearch does. */
  total: unknown;
  /** The sort values of the last hit served; absent before any. */
  after: [number, string] | undefined;
  expires: number;
}

export interface PitCursor {
  kind: 'pit';
  index: string | string[] | undefined;
  expires: number;
}

const PREFIX = { scroll: 'gsc1', pit: 'gpit1' } as const;

export function encodeCursor(cursor: ScrollCursor | PitCursor): string {
  return PREFIX[cursor.kind] + Buffer.from(JSON.stringify(cursor)).toString('base64url');
}

function decode(id: unknown, kind: 'scroll' | 'pit', now: number): PlainObject {
  const what = kind === 'scroll' ? 'scroll id' : 'point in time id';
  if (typeof id !== 'string' || id.length > MAX_ID_CHARS || !id.startsWith(PREFIX[kind])) {
    throw new ElasticError(400, 'illegal_argument_exception', `Cannot parse ${what}`);
  }
  let cursor: unknown;
  try {
    cursor = JSON.parse(Buffer.from(id.slice(PREFIX[kind].length), 'base64url').toString());
  } catch {
    throw new ElasticError(400, 'illegal_argument_exception', `Cannot parse ${what}`);
  }
  if (!isPlainObject(cursor) || cursor.kind !== kind || typeof cursor.expires !== 'number') {
    throw new ElasticError(400, 'illegal_argument_exception', `Cannot parse ${what}`);
  }
  if (cursor.expires < now)
    throw new ElasticError(404, 'search_context_missing_exception', `No search context found for id: the ${what} expired`);
  return cursor;
}

function indexOf(value: unknown): string | string[] | undefined {
  if (value === undefined || typeof value === 'string') return value;
  if (Array.isArray(value) && value.every((name) => typeof name === 'string')) return value as string[];
  throw new ElasticError(400, 'illegal_argument_exception', 'Cannot parse the cursor index');
}

export function decodeScroll(id: unknown, now: number): ScrollCursor {
  const cursor = decode(id, 'scroll', now);
  const after = cursor.after;
  if (!isPlainObject(cursor.body) || (cursor.q !== undefined && typeof cursor.q !== 'string')) {
    throw new ElasticError(400, 'illegal_argument_exception', 'Cannot parse scroll id');
  }
  if (
    after !== undefined &&
    !(Array.isArray(after) && after.length === 2 && typeof after[0] === 'number' && typeof after[1] === 'string')
  ) {
    throw new ElasticError(400, 'illegal_argument_exception', 'Cannot parse scroll id');
  }
  return {
    kind: 'scroll',
    index: indexOf(cursor.index),
    body: cursor.body,
    q: cursor.q as string | undefined,
    total: cursor.total,
    after: after as [number, string] | undefined,
    expires: cursor.expires as number,
  };
}

export function decodePit(id: unknown, now: number): PitCursor {
  const cursor = decode(id, 'pit', now);
  return { kind: 'pit', index: indexOf(cursor.index), expires: cursor.expires as number };
}
