import { sql, type Kysely, type RawBuilder } from 'kysely';
import { HOUR, mod } from '../minutes.js';
import type { BucketCount } from '../store-core.js';
import { nextTurn } from '../write-batch.js';
import { idOf, type Hit, type PostingsExpr } from './postgres-postings.js';
import { countOf, GROUP_PREFIX, groupOf, groupOfPrefix, pairToken, placesOf, placesWithPrefix, timesOf } from './postings.js';

/**
 * Reading the postings (postgres-postings.ts): the pieces of a range and the group rows that a
 * postings plan's expression needs, evaluated piece by piece as lists of places, into counts per
 * bucket (postingsCounts), the hits of a read (candidateHits), or hits nearest the end of the range
 * first (matchHits).
 */

/** What a lookup of `expr` reads: its tokens' and prefixes' groups, or every group (a short prefix). */
interface Lookups {
  keys: string[];
  everyGroup: boolean;
}

function lookupsOf(expr: PostingsExpr, into: Lookups = { keys: [], everyGroup: false }): Lookups {
  if (expr.kind === 'token') into.keys.push(expr.token);
  else if (expr.kind === 'prefix') {
    if (expr.prefix.length < GROUP_PREFIX) into.everyGroup = true;
    else into.keys.push(expr.prefix); // its group is the group of its first GROUP_PREFIX characters
  } else if (expr.kind === 'phrase') {
    // Its pairs; their words only where a pair is missing (readPostings).
    for (let index = 1; index < expr.tokens.length; index += 1) into.keys.push(pairToken(expr.tokens[index - 1]!, expr.tokens[index]!));
  } else if (expr.kind === 'not') lookupsOf(expr.child, into);
  else for (const child of expr.children) lookupsOf(child, into);
  return into;
}

interface PieceRow {
  /** Its number (log_batches.batch), which its entries' ids are made from (idOf). */
  batch: string;
  first_ts: string;
  last_ts: string;
  entries: number;
  groups: number;
  pairs: number;
  /** Only for a piece that is not inside [from, end) and one bucket (the others are counted whole). */
  times: Buffer | null;
}

/** Matches in more than one entry of this many are read with the range's blocks (candidateHits). */
const DENSE = 32;

/** Pieces read per statement: a day is about 2,000 at 10M entries. */
const PIECE_PAGE = 1_000;

/**
 * The pieces with entries in [from, end), newest first, a page at a time, with the group rows that
 * `expr` reads (readPostings). A piece lies within one hour, so its first time is at most an hour before `from`.
 * Its times are read unless it lies inside the range and `countedWhole` holds (its count will do).
 */
async function* piecePages(
  db: Kysely<any>,
  tenantId: string,
  from: number,
  end: number,
  expr: PostingsExpr,
  countedWhole: RawBuilder<unknown>,
): AsyncGenerator<{ pieces: PieceRow[]; postings: Map<string, Map<number, Buffer>> }> {
  let before = sql``;
  for (;;) {
    const { rows: pieces } = await sql<PieceRow>`SELECT batch::text, first_ts, last_ts, entries, groups, pairs,
        CASE WHEN first_ts >= ${from}::bigint AND last_ts < ${end}::bigint AND ${countedWhole} THEN NULL ELSE times END AS times
      FROM log_batches WHERE tenant_id = ${tenantId} AND first_ts >= ${from - HOUR}::bigint AND first_ts < ${end}::bigint
        AND last_ts >= ${from}::bigint${before}
      ORDER BY first_ts DESC, batch DESC LIMIT ${PIECE_PAGE}`.execute(db);
    if (pieces.length === 0) return;
    yield { pieces, postings: await readPostings(db, tenantId, pieces, expr) };
    if (pieces.length < PIECE_PAGE) return;
    const last = pieces.at(-1)!;
    before = sql` AND (first_ts, batch) < (${last.first_ts}::bigint, ${last.batch}::bigint)`;
    await nextTurn();
  }
}

/** What the postings count of a plan (postingsCounts). */
export interface PostingsCounts {
  /** The matches the postings tell, per bucket. */
  counts: BucketCount[];
  /** The candidates the postings could not tell, for the rows to check (none of them is in `counts`). */
  candidates: Hit[];
}

/**
 * The matches of `expr` (exact or exactByPairs: PostingsPlan) in [from, end) per bucket of
 * `intervalMs` (epoch-aligned; null: one bucket, 0). A piece inside the range and one bucket adds its
 * count; only the others read their times. A piece that answers with candidates (a phrase without its
 * pair) gives them instead, for the rows to check. Null when the candidates are many (candidateHits'
 * rule): the range's rows count them all. With `stopAbove`, counting stops once the matches pass it,
 * as a bounded count of rows does.
 */
export async function postingsCounts(
  db: Kysely<any>,
  tenantId: string,
  from: number,
  end: number,
  expr: PostingsExpr,
  intervalMs: number | null,
  stopAbove = Infinity,
  most = Infinity,
): Promise<PostingsCounts | null> {
  return (await countPostings(db, tenantId, from, end, expr, [], intervalMs, stopAbove, most))?.all ?? null;
}

/**
 * postingsCounts of `expr`, and of its matches split by the value tokens of one field (`values`: the
 * facet tokens of level's values, say; an entry has one at most) in the same pass: a piece's matches
 * are found once, and each is counted under the value its place has (a histogram by level: one pass,
 * not one per level). A candidate goes to its value's candidates too. Null as postingsCounts.
 */
export async function postingsCountsByValue(
  db: Kysely<any>,
  tenantId: string,
  from: number,
  end: number,
  expr: PostingsExpr,
  values: readonly string[],
  intervalMs: number | null,
  most = Infinity,
): Promise<{ all: PostingsCounts; byValue: PostingsCounts[] } | null> {
  return countPostings(db, tenantId, from, end, expr, values, intervalMs, Infinity, most);
}

async function countPostings(
  db: Kysely<any>,
  tenantId: string,
  from: number,
  end: number,
  expr: PostingsExpr,
  values: readonly string[],
  intervalMs: number | null,
  stopAbove: number,
  most: number,
): Promise<{ all: PostingsCounts; byValue: PostingsCounts[] } | null> {
  const interval = sql`${intervalMs ?? 1}::bigint`;
  const bucketOf = (ts: RawBuilder<unknown>) => sql`(${ts} - (((${ts} % ${interval}) + ${interval}) % ${interval}))`;
  const oneBucket = intervalMs === null ? sql`TRUE` : sql`${bucketOf(sql.ref('first_ts'))} = ${bucketOf(sql.ref('last_ts'))}`;
  const bucketStart = (ts: number): number => (intervalMs === null ? 0 : ts - mod(ts, intervalMs));
  const all = new Tally();
  const byValue = values.map(() => new Tally());
  // The postings read: the expression's, and the values' tokens.
  const read: PostingsExpr =
    values.length === 0 ? expr : { kind: 'and', children: [expr, ...values.map((token): PostingsExpr => ({ kind: 'token', token }))] };
  let entries = 0;
  for await (const { pieces, postings } of piecePages(db, tenantId, from, end, read, oneBucket)) {
    const untimed: { piece: PieceRow; places: number[]; valueAt: Int8Array | null }[] = [];
    for (const piece of pieces) {
      entries += piece.entries;
      if (piece.times === null && expr.kind === 'token' && values.length === 0) {
        const data = postings.get(piece.batch)?.get(groupOf(expr.token, piece.groups));
        all.add(bucketStart(Number(piece.first_ts)), data === undefined ? 0 : countOf(data, expr.token));
        continue;
      }
      const rows = pieceRows(piece, postings);
      const { places, exact } = matchOf(expr, piece, rows);
      if (places.length === 0) continue;
      const valueAt = values.length === 0 ? null : valuesAt(piece.entries, values, rows);
      if (piece.times === null) {
        if (!exact) {
          untimed.push({ piece, places, valueAt });
          continue;
        }
        const bucket = bucketStart(Number(piece.first_ts));
        all.add(bucket, places.length);
        if (valueAt !== null) for (const place of places) if (valueAt[place]! >= 0) byValue[valueAt[place]!]!.add(bucket, 1);
        continue;
      }
      const times = timesOf(piece.times, Number(piece.first_ts), piece.entries);
      for (const place of places) {
        const ts = times[place]!;
        if (ts < from || ts >= end) continue;
        const value = valueAt === null ? -1 : valueAt[place]!;
        if (exact) {
          const bucket = bucketStart(ts);
          all.add(bucket, 1);
          if (value >= 0) byValue[value]!.add(bucket, 1);
        } else {
          const hit = { ts, id: idOf(piece.batch, place) };
          all.candidates.push(hit);
          if (value >= 0) byValue[value]!.candidates.push(hit);
        }
      }
    }
    if (untimed.length > 0) {
      const times = await readTimes(
        db,
        tenantId,
        untimed.map(({ piece }) => piece),
      );
      for (const { piece, places, valueAt } of untimed) {
        const at = timesOf(times.get(piece.batch)!, Number(piece.first_ts), piece.entries);
        for (const place of places) {
          const hit = { ts: at[place]!, id: idOf(piece.batch, place) };
          all.candidates.push(hit);
          if (valueAt !== null && valueAt[place]! >= 0) byValue[valueAt[place]!]!.candidates.push(hit);
        }
      }
    }
    if (all.candidates.length > most) return null;
    // At least this many: past the bound.
    if (all.total > stopAbove) return { all: { counts: all.buckets(), candidates: [] }, byValue: [] };
  }
  if (all.candidates.length > entries / DENSE) return null;
  return { all: all.counted(), byValue: byValue.map((tally) => tally.counted()) };
}

/** Each place's value in a piece: its index in `values` (tokens), -1 for none of them. */
function valuesAt(entries: number, values: readonly string[], rows: PieceRows): Int8Array {
  const at = new Int8Array(entries).fill(-1);
  for (let index = 0; index < values.length; index += 1) {
    const places = tokenPlaces(values[index]!, rows);
    for (let i = 0; i < places.length; i += 1) at[places[i]!] = index;
  }
  return at;
}

/** Matches counted per bucket, and candidates, as postingsCounts gathers them. */
class Tally {
  readonly #counts = new Map<number, number>();
  total = 0;
  readonly candidates: Hit[] = [];

  add(bucket: number, count: number): void {
    if (count === 0) return;
    this.#counts.set(bucket, (this.#counts.get(bucket) ?? 0) + count);
    this.total += count;
  }

  buckets(): BucketCount[] {
    return [...this.#counts].filter(([, count]) => count !== 0).map(([bucket, count]) => ({ bucket, group: null, count }));
  }

  counted(): PostingsCounts {
    return { counts: this.buckets(), candidates: this.candidates };
  }
}

/**
 * The entries `expr` matches (or its candidates) in [from, end); null when there are more than
 * `most`, or more than one in DENSE of the entries read: reading their blocks one by one would cost
 * more than reading the range's (docs/performance-notes.md, "PostgreSQL store").
 */
export async function candidateHits(
  db: Kysely<any>,
  tenantId: string,
  from: number,
  end: number,
  expr: PostingsExpr,
  most: number,
): Promise<Hit[] | null> {
  const hits: Hit[] = [];
  let entries = 0;
  for await (const { pieces, postings } of piecePages(db, tenantId, from, end, expr, sql`FALSE`)) {
    for (const piece of pieces) {
      entries += piece.entries;
      const matched = matchesOf(expr, piece, postings);
      if (matched.length === 0) continue;
      const at = timesOf(piece.times!, Number(piece.first_ts), piece.entries);
      for (const place of matched) {
        const ts = at[place]!;
        if (ts >= from && ts < end) hits.push({ ts, id: idOf(piece.batch, place) });
      }
    }
    if (hits.length > most) return null;
  }
  return hits.length > entries / DENSE ? null : hits;
}

/**
 * The entries `expr` matches in [from, end), nearest the end of the range first (`desc`) or nearest
 * its start (`asc`), a chunk at a time: each chunk's entries are all nearer than the next one's, and
 * the entries of one time are in one chunk. A reader stops when it has enough: a page of the first
 * `n` entries (and those of the last one's time) holds every match it should (PostgresLogStore.timePage).
 * Reads an hour's pieces at a time from the end of the range, nearest the end first, their times and
 * postings a few pieces at a time (4, 8, 16…: a page of a common word needs one or two of an hour's
 * eighty); entries are final once no unread piece can hold one nearer or as near.
 */
export async function* matchHits(
  db: Kysely<any>,
  tenantId: string,
  from: number,
  end: number,
  expr: PostingsExpr,
  order: 'asc' | 'desc',
): AsyncGenerator<Hit[]> {
  const descending = order === 'desc';
  const inRange = sql`tenant_id = ${tenantId} AND first_ts >= ${from - HOUR}::bigint AND first_ts < ${end}::bigint AND last_ts >= ${from}::bigint`;
  const nearer = (a: number, b: number): number => (descending ? b - a : a - b); // < 0: a is nearer the end
  const byNearness = (a: Hit, b: Hit): number => nearer(a.ts, b.ts);
  let bound = descending ? end : from - HOUR - 1; // the hours left are before (after) this
  for (;;) {
    // The pieces of the next hour that has any (one statement: the hour, then its pieces).
    const nearest = descending ? sql`max(first_ts)` : sql`min(first_ts)`;
    const { rows: pieces } = await sql<PieceRow & { hour: string }>`WITH next AS (SELECT ${nearest} AS first FROM log_batches
        WHERE ${inRange} AND first_ts ${descending ? sql`<` : sql`>`} ${bound}::bigint),
      hour AS (SELECT first - (((first % ${HOUR}) + ${HOUR}) % ${HOUR}) AS start FROM next)
      SELECT batch::text, first_ts, last_ts, entries, groups, pairs, NULL AS times, hour.start::text AS hour FROM log_batches, hour
      WHERE ${inRange} AND first_ts >= hour.start AND first_ts < hour.start + ${HOUR}`.execute(db);
    if (pieces.length === 0) return;
    const hour = Number(pieces[0]!.hour);
    const nearestOf = (piece: PieceRow): number => Number(descending ? piece.last_ts : piece.first_ts);
    pieces.sort((a, b) => nearer(nearestOf(a), nearestOf(b)));
    let pending: Hit[] = [];
    for (let start = 0, size = 4; start < pieces.length; start += size, size *= 2) {
      const chunk = pieces.slice(start, start + size);
      const [times, postings] = await Promise.all([readTimes(db, tenantId, chunk), readPostings(db, tenantId, chunk, expr)]);
      for (const piece of chunk) {
        const matched = matchesOf(expr, piece, postings);
        if (matched.length === 0) continue;
        const at = timesOf(times.get(piece.batch)!, Number(piece.first_ts), piece.entries);
        for (const place of matched) {
          const ts = at[place]!;
          if (ts >= from && ts < end) pending.push({ ts, id: idOf(piece.batch, place) });
        }
      }
      const next = pieces[start + size];
      if (next === undefined) break;
      // What no unread piece can reach is final.
      pending.sort(byNearness);
      const edge = nearestOf(next);
      let final = 0;
      while (final < pending.length && nearer(pending[final]!.ts, edge) < 0) final += 1;
      if (final > 0) {
        yield pending.slice(0, final);
        pending = pending.slice(final);
      }
    }
    pending.sort(byNearness);
    if (pending.length > 0) yield pending;
    bound = descending ? hour : hour + HOUR - 1;
  }
}

/** The times (encodeTimes) of each piece, by its number. */
async function readTimes(db: Kysely<any>, tenantId: string, pieces: readonly PieceRow[]): Promise<Map<string, Buffer>> {
  const { rows } = await sql<{ batch: string; times: Buffer }>`SELECT batch::text, times FROM log_batches
    WHERE tenant_id = ${tenantId} AND batch = ANY(${pieces.map((piece) => piece.batch)}::bigint[])`.execute(db);
  return new Map(rows.map((row) => [row.batch, row.times]));
}

/**
 * The group rows `expr` reads of each piece (lookupsOf), by piece number and group. A phrase reads its pairs'
 * groups; only a piece that lacks a pair also reads its words' (whose counts tell whether the pair is
 * not posted or not held): a phrase of common words reads one group a piece, as a word does.
 */
async function readPostings(
  db: Kysely<any>,
  tenantId: string,
  pieces: readonly PieceRow[],
  expr: PostingsExpr,
): Promise<Map<string, Map<number, Buffer>>> {
  const { keys: tokens, everyGroup } = lookupsOf(expr);
  const postings = await readGroups(
    db,
    tenantId,
    pieces.flatMap(({ batch, groups }) => {
      const read = everyGroup
        ? Array.from({ length: groups }, (_, group) => group)
        : [...new Set([...tokens].map((token) => groupOf(token, groups)))];
      return read.map((group) => ({ batch, group }));
    }),
  );
  const phrases = phrasesOf(expr);
  if (phrases.length === 0) return postings;
  const words = pieces.flatMap(({ batch, groups: count }) => {
    const groups = postings.get(batch) ?? new Map<number, Buffer>();
    const wanted = new Set<number>();
    for (const phrase of phrases) {
      for (let index = 1; index < phrase.length; index += 1) {
        const pair = pairToken(phrase[index - 1]!, phrase[index]!);
        const data = groups.get(groupOf(pair, count));
        if (data !== undefined && countOf(data, pair) > 0) continue;
        for (const word of [phrase[index - 1]!, phrase[index]!]) if (!groups.has(groupOf(word, count))) wanted.add(groupOf(word, count));
      }
    }
    return [...wanted].map((group) => ({ batch, group }));
  });
  if (words.length === 0) return postings;
  for (const [batch, groups] of await readGroups(db, tenantId, words)) {
    const read = postings.get(batch);
    if (read === undefined) postings.set(batch, groups);
    else for (const [group, data] of groups) read.set(group, data);
  }
  return postings;
}

/** The phrases of `expr`, their words. */
function phrasesOf(expr: PostingsExpr): string[][] {
  if (expr.kind === 'phrase') return [expr.tokens];
  if (expr.kind === 'not') return phrasesOf(expr.child);
  return expr.kind === 'and' || expr.kind === 'or' ? expr.children.flatMap(phrasesOf) : [];
}

/** Group rows by piece number and group. */
async function readGroups(
  db: Kysely<any>,
  tenantId: string,
  keys: readonly { batch: string; group: number }[],
): Promise<Map<string, Map<number, Buffer>>> {
  const { rows } = await sql<{ batch: string; grp: number; tokens: Buffer }>`SELECT p.batch::text, p.grp, p.tokens
    FROM unnest(${keys.map((key) => key.batch)}::bigint[], ${keys.map((key) => key.group)}::int[]) AS k(batch, grp)
    JOIN log_postings p ON p.tenant_id = ${tenantId} AND p.batch = k.batch AND p.grp = k.grp`.execute(db);
  const byBatch = new Map<string, Map<number, Buffer>>();
  for (const row of rows) {
    let groups = byBatch.get(row.batch);
    if (groups === undefined) byBatch.set(row.batch, (groups = new Map<number, Buffer>()));
    groups.set(row.grp, row.tokens);
  }
  return byBatch;
}

/**
 * The places (ascending) of the entries of `piece` that `expr` matches, from its group rows in
 * `postings` (readPostings); `exact`: they are its matches, else candidates (a phrase the piece has no
 * pair for, or of three words or more).
 */
function matchOf(expr: PostingsExpr, piece: PieceRow, rows: PieceRows): { places: number[]; exact: boolean } {
  const matched = evaluate(expr, rows);
  if (!matched.negated) return matched;
  const all: number[] = [];
  for (let place = 0, next = 0; place < piece.entries; place += 1) {
    if (matched.places[next] === place) next += 1;
    else all.push(place);
  }
  return { places: all, exact: matched.exact };
}

/** A piece's group rows of `postings` (readPostings), for evaluate. */
function pieceRows(piece: PieceRow, postings: Map<string, Map<number, Buffer>>): PieceRows {
  return { groups: postings.get(piece.batch) ?? new Map<number, Buffer>(), count: piece.groups, pairs: piece.pairs, decoded: new Map() };
}

/** The places matchOf gives, exact or not. */
function matchesOf(expr: PostingsExpr, piece: PieceRow, postings: Map<string, Map<number, Buffer>>): number[] {
  return matchOf(expr, piece, pieceRows(piece, postings)).places;
}

/** Places of a piece, ascending; `negated`: every place but these (a NOT stays a list until the end). */
interface Places {
  places: number[];
  negated: boolean;
  /** The matches, not candidates. */
  exact: boolean;
}

/** A piece's group rows that were read (of its `count` groups), and from how many entries a word's pairs are posted (0: none). */
interface PieceRows {
  groups: Map<number, Buffer>;
  count: number;
  pairs: number;
  /** The places of the tokens decoded so far (tokenPlaces). */
  decoded: Map<string, number[]>;
}

/** The places of `token` in a piece, decoded once. */
function tokenPlaces(token: string, piece: PieceRows): number[] {
  let places = piece.decoded.get(token);
  if (places === undefined) {
    const data = groupValue(token, piece);
    places = data === undefined ? [] : placesOf(data, token);
    piece.decoded.set(token, places);
  }
  return places;
}

/** The value of `token`'s group in a piece, if read and present. */
function groupValue(token: string, piece: PieceRows): Buffer | undefined {
  return piece.groups.get(groupOf(token, piece.count));
}

/**
 * The entries of a piece that `expr` matches, as lists of places merged in order: a word is in a few
 * of a piece's 5,000 entries, so lists cost less than a bit per entry and node.
 */
function evaluate(expr: PostingsExpr, piece: PieceRows): Places {
  switch (expr.kind) {
    case 'token':
      return { places: tokenPlaces(expr.token, piece), negated: false, exact: true };
    case 'prefix': {
      const group = groupOfPrefix(expr.prefix, piece.count);
      const values = group === null ? [...piece.groups.values()] : [piece.groups.get(group)];
      const found = values.flatMap((data) => (data === undefined ? [] : placesWithPrefix(data, expr.prefix)));
      found.sort((a, b) => a - b);
      return { places: found.filter((place, index) => index === 0 || place !== found[index - 1]), negated: false, exact: true };
    }
    case 'phrase':
      return phrasePlaces(expr.tokens, piece);
    case 'not': {
      const child = evaluate(expr.child, piece);
      return { places: child.places, negated: !child.negated, exact: child.exact };
    }
    case 'and':
    case 'or':
      return expr.children.map((child) => evaluate(child, piece)).reduce((a, b) => combinePlaces(expr.kind, a, b));
  }
}

/**
 * A phrase's entries in a piece: for each two words in a row, the entries with their pair where the
 * piece posts it (both words in `pairs` of its entries or more), else the entries with both words.
 * Exact for two words with a pair; anything else is candidates.
 */
function phrasePlaces(tokens: readonly string[], piece: PieceRows): Places {
  const entriesOf = (token: string): number => {
    const data = groupValue(token, piece);
    return data === undefined ? 0 : countOf(data, token);
  };
  let places: number[] | null = null;
  let exact = tokens.length === 2;
  for (let index = 1; index < tokens.length && places?.length !== 0; index += 1) {
    const [first, second] = [tokens[index - 1]!, tokens[index]!];
    const pair = pairToken(first, second);
    // A pair posted at all is posted for every entry that holds it (readPostings reads the words' groups only without it).
    const paired = entriesOf(pair) > 0 || (piece.pairs > 0 && entriesOf(first) >= piece.pairs && entriesOf(second) >= piece.pairs);
    const found = paired
      ? tokenPlaces(pair, piece)
      : merge(tokenPlaces(first, piece), tokenPlaces(second, piece), (inA, inB) => inA && inB);
    if (!paired) exact = false;
    places = places === null ? found : merge(places, found, (inA, inB) => inA && inB);
  }
  return { places: places ?? [], negated: false, exact };
}

/** A AND B, A OR B of place lists (De Morgan for the negated ones). */
function combinePlaces(kind: 'and' | 'or', a: Places, b: Places): Places {
  const exact = a.exact && b.exact;
  if (kind === 'or') {
    const both = combinePlaces('and', { ...a, negated: !a.negated }, { ...b, negated: !b.negated });
    return { places: both.places, negated: !both.negated, exact };
  }
  if (!a.negated && !b.negated) return { places: merge(a.places, b.places, (inA, inB) => inA && inB), negated: false, exact };
  if (a.negated && b.negated) return { places: merge(a.places, b.places, (inA, inB) => inA || inB), negated: true, exact };
  const [positive, negative] = a.negated ? [b, a] : [a, b];
  return { places: merge(positive.places, negative.places, (inA, inB) => inA && !inB), negated: false, exact };
}

/** The places of ascending `a` and `b` that `keep` keeps, given whether each list holds them. */
function merge(a: readonly number[], b: readonly number[], keep: (inA: boolean, inB: boolean) => boolean): number[] {
  const out: number[] = [];
  let [i, j] = [0, 0];
  while (i < a.length || j < b.length) {
    const [x, y] = [a[i] ?? Infinity, b[j] ?? Infinity];
    const place = Math.min(x, y);
    if (keep(x === place, y === place)) out.push(place);
    if (x === place) i += 1;
    if (y === place) j += 1;
  }
  return out;
}
