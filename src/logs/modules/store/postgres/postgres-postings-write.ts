import { sql, type Kysely } from 'kysely';
import { HOUR, mod } from '../minutes.js';
import { PLACES } from './postgres-postings.js';
import { encodePostings, encodeTimes } from './postings.js';

/**
 * Writing the postings (postgres-postings.ts): a batch's entries become pieces, an hour each, each a
 * row of log_batches and a few rows of log_postings, in the entries' own transaction
 * (postgres-blocks.ts, storeEntries); retention removes those of an emptied hour.
 */

/** Groups of a piece of `entries`: about 16 entries' tokens a group, at most 256 (a lookup reads 1/256 of a large piece). */
export function groupsFor(entries: number): number {
  return 2 ** Math.min(8, Math.max(0, Math.floor(Math.log2(entries / 16))));
}

/**
 * Pairs a piece of `entries` posts: those of two words each held by at least this many of its entries
 * (docs/log-store.md, "Phrases"). A phrase of common words is then counted from its pair, while a
 * pair left out has a word in fewer entries than this, the most candidates the rows check for it.
 * Every pair would more than double the postings; these add about a quarter (docs/performance-notes.md,
 * "PostgreSQL store").
 */
export function pairsFromFor(entries: number): number {
  return Math.max(32, Math.ceil(entries / 128));
}

/** One hour of a batch, in time order: a row of log_batches and its rows of log_postings. */
export interface PostingsPiece {
  first: number;
  last: number;
  entries: number;
  groups: number;
  /** Its pairs are of words in at least this many of its entries (pairsFromFor); 0: it posts none. */
  pairs: number;
  times: Buffer;
  postings: { group: number; data: Buffer }[];
}

/**
 * A batch's pieces by UTC hour, each its entries' indexes in time order (ties in batch order), at
 * most PLACES of them: `times[index]` is an entry's time.
 */
export function pieceOrders(times: readonly number[]): number[][] {
  const order = times.map((_, index) => index).sort((a, b) => times[a]! - times[b]! || a - b);
  const pieces: number[][] = [];
  for (let start = 0; start < order.length;) {
    const first = times[order[start]!]!;
    const hourEnd = first - mod(first, HOUR) + HOUR;
    let end = start + 1;
    while (end < order.length && end - start < PLACES && times[order[end]!]! < hourEnd) end += 1;
    pieces.push(order.slice(start, end));
    start = end;
  }
  return pieces;
}

/**
 * A batch's postings by piece (pieceOrders): `times[index]` and `tokens[index]` (its words and facet
 * lexemes) of each entry. With `wordCounts`, the first `wordCounts[index]` tokens of an entry are its
 * message's words in order, and each piece also posts their pairs (pairsFromFor).
 */
export function postingsPieces(
  times: readonly number[],
  tokens: readonly (readonly string[])[],
  wordCounts?: readonly number[],
  orders: readonly (readonly number[])[] = pieceOrders(times),
): PostingsPiece[] {
  return orders.map((places) => {
    const first = times[places[0]!]!;
    const groups = groupsFor(places.length);
    const pairs = wordCounts === undefined ? 0 : pairsFromFor(places.length);
    return {
      first,
      last: times[places.at(-1)!]!,
      entries: places.length,
      groups,
      pairs,
      times: encodeTimes(
        first,
        places.map((place) => times[place]!),
      ),
      postings: encodePostings(
        places.map((place) => tokens[place]!),
        groups,
        wordCounts && { wordCounts: places.map((place) => wordCounts[place]!), least: pairs },
      ),
    };
  });
}

/** The numbers of `count` new pieces (log_batches.batch). */
export async function nextPieceNumbers(trx: Kysely<any>, count: number): Promise<string[]> {
  const { rows } = await sql<{ batch: string }>`SELECT nextval('log_batches_batch_seq')::text AS batch
    FROM generate_series(1, ${count}::int)`.execute(trx);
  return rows.map((row) => row.batch);
}

/**
 * Writes a batch's pieces inside the caller's transaction (the one that stores its entries), under
 * `numbers` (nextPieceNumbers) or new ones.
 */
export async function storePostings(
  trx: Kysely<any>,
  tenantId: string,
  pieces: readonly PostingsPiece[],
  numbers?: readonly string[],
): Promise<void> {
  if (pieces.length === 0) return;
  numbers ??= await nextPieceNumbers(trx, pieces.length);
  // Pieces without pairs leave the column out: the migrations that post stored entries run before it exists.
  const pairs = pieces.some((piece) => piece.pairs > 0)
    ? { column: sql`, pairs`, values: sql`, ${pieces.map((piece) => piece.pairs)}::int[]` }
    : { column: sql``, values: sql`` };
  await sql`INSERT INTO log_batches (tenant_id, batch, first_ts, last_ts, entries, groups, times${pairs.column})
    SELECT ${tenantId}, * FROM unnest(${numbers}::bigint[], ${pieces.map((piece) => piece.first)}::bigint[],
      ${pieces.map((piece) => piece.last)}::bigint[], ${pieces.map((piece) => piece.entries)}::int[],
      ${pieces.map((piece) => piece.groups)}::int[], ${pieces.map((piece) => piece.times)}::bytea[]${pairs.values})`.execute(trx);
  const owners = pieces.flatMap((piece, index) => piece.postings.map(() => numbers[index]!));
  const postings = pieces.flatMap((piece) => piece.postings);
  await sql`INSERT INTO log_postings (tenant_id, batch, grp, tokens)
    SELECT ${tenantId}, * FROM unnest(${owners}::bigint[], ${postings.map((posting) => posting.group)}::int[],
      ${postings.map((posting) => posting.data)}::bytea[])`.execute(trx);
}

/**
 * The last piece number given out. Read while holding a lock that every batch with rows in an hour
 * takes before its pieces' numbers (PostgresLogStore.removeOlderThan), it parts the pieces whose rows were
 * removed with the hour from later ones.
 */
export async function lastPieceNumber(trx: Kysely<any>): Promise<number> {
  const { rows } = await sql<{ last: string }>`SELECT CASE WHEN is_called THEN last_value ELSE 0 END::text AS last
    FROM log_batches_batch_seq`.execute(trx);
  return Number(rows[0]!.last);
}

/** An hour whose entries of a tenant were removed, and the last piece number given out by then. */
export interface EmptiedHour {
  start: number;
  lastPiece: number;
}

/**
 * Removes the tenant's postings of an emptied hour: those of its pieces up to `lastPiece` (a batch
 * stored in the hour since has rows there again, and keeps its postings).
 */
export async function removePostings(db: Kysely<any>, tenantId: string, { start, lastPiece }: EmptiedHour): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const inHour = sql`b.tenant_id = ${tenantId} AND b.first_ts >= ${start}::bigint AND b.first_ts < ${start + HOUR}::bigint
      AND b.batch <= ${lastPiece}::bigint`;
    await sql`DELETE FROM log_postings p USING log_batches b WHERE ${inHour} AND p.tenant_id = b.tenant_id AND p.batch = b.batch`.execute(
      trx,
    );
    await sql`DELETE FROM log_batches b WHERE ${inHour}`.execute(trx);
  });
}
