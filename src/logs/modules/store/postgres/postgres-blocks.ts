import { sql, type Kysely, type RawBuilder } from 'kysely';
import { postgresFacet } from '../facets.js';
import { HOUR, mod } from '../minutes.js';
import { PLACES, type Hit } from './postgres-postings.js';
import { nextPieceNumbers, pieceOrders, postingsPieces, storePostings } from './postgres-postings-write.js';
import { storedWords } from '../indexed-text.js';
import { tokenize } from '../../query/tokenize.js';
import { nextTurn, PREPARE_CHUNK, type PreparedEntry } from '../write-batch.js';

/**
 * PostgreSQL's entries in blocks (docs/log-store.md, "Blocks"; docs/scaling.md step 3): a piece's
 * entries (a batch's of one UTC hour, in the postings' place order) are rows of `log_blocks` of at
 * most BLOCK_ENTRIES entries each, a column an array, which PostgreSQL compresses (TOAST) and SQL
 * reads back as rows with `unnest … WITH ORDINALITY`. An entry's id is its piece's batch × PLACES +
 * its place: what the postings find is an id, and its block is the one that starts at the id less
 * its place's remainder.
 */

/**
 * Entries a block holds at most: what reading one entry costs (a block is decompressed whole) against
 * the size (fewer entries compress worse): docs/performance-notes.md, "PostgreSQL store".
 */
const BLOCK_ENTRIES = 128;

/** log_blocks_p2026112105 (of `table` log_blocks) holds [2026-11-21T05:00Z, 2026-11-21T06:00Z). */
function hourPartition(table: string, start: number): string {
  return `${table}_p${new Date(start).toISOString().slice(0, 13).replace(/[-T]/g, '')}`;
}

/** The first millisecond of an hour partition of `table` (hourPartition), or null for another name. */
export function hourOfPartition(table: string, name: string): number | null {
  const match = /^(.+)_p(\d{4})(\d{2})(\d{2})(\d{2})$/.exec(name);
  if (match?.[1] !== table) return null;
  return Date.UTC(Number(match[2]), Number(match[3]) - 1, Number(match[4]), Number(match[5]));
}

/** Creates the partition of log_blocks for the hour from `start`, unless it exists. */
export async function createHourPartition(db: Kysely<any>, start: number): Promise<void> {
  const name = hourPartition('log_blocks', start);
  await sql`CREATE TABLE IF NOT EXISTS ${sql.table(name)} PARTITION OF log_blocks
    FOR VALUES FROM (${sql.lit(start)}) TO (${sql.lit(start + HOUR)})`.execute(db);
  await withoutArrayStatistics(db, name); // a partition does not inherit it
}

/**
 * No statistics of the arrays of `table` (log_blocks or a partition): ANALYZE would decompress a sample
 * of blocks (tens of seconds at 10M entries) for figures no plan uses.
 */
export async function withoutArrayStatistics(db: Kysely<any>, table: string): Promise<void> {
  const columns = COLUMNS.map((column) => sql`ALTER COLUMN ${sql.ref(column)} SET STATISTICS 0`);
  await sql`ALTER TABLE ${sql.table(table)} ${sql.join(columns)}`.execute(db);
}

/**
 * Stores a batch's entries, in the caller's transaction: their blocks and postings (each entry's words
 * and `facets`, facets.ts), attributes as `encode` gives them (attribute-codes.ts).
 */
export async function storeEntries(
  trx: Kysely<any>,
  tenantId: string,
  entries: readonly PreparedEntry[],
  facets: readonly (readonly string[] | undefined)[],
  encode: (attributes: PreparedEntry['attributes']) => string,
): Promise<void> {
  const columns: BlockColumns = {
    ts: [],
    level: [],
    service: [],
    host: [],
    trace_id: [],
    span_id: [],
    message: [],
    attributes: [],
    words: [],
  };
  const lexemes: string[][] = []; // each entry's words, then its facets' lexemes: its postings' tokens
  const wordCounts: number[] = []; // how many of an entry's lexemes are its words (their pairs are posted too)
  const facetLexemes = new Map<string, string>(); // one string per facet of the batch
  for (let index = 0; index < entries.length; index += 1) {
    if (index > 0 && index % PREPARE_CHUNK === 0) await nextTurn();
    const entry = entries[index]!;
    const words = tokenize(entry.message);
    columns.ts.push(entry.ts);
    columns.level.push(entry.level);
    columns.service.push(entry.service);
    columns.host.push(entry.host);
    columns.trace_id.push(entry.trace_id);
    columns.span_id.push(entry.span_id);
    columns.message.push(entry.message);
    columns.attributes.push(encode(entry.attributes));
    columns.words.push(storedWords(entry.message, words));
    wordCounts.push(words.length);
    for (const facet of facets[index] ?? []) {
      let lexeme = facetLexemes.get(facet);
      if (lexeme === undefined) facetLexemes.set(facet, (lexeme = postgresFacet(facet)));
      words.push(lexeme);
    }
    lexemes.push(words);
  }
  // The blocks are sent first: the server stores them while the postings are encoded here.
  const orders = pieceOrders(columns.ts);
  const numbers = await nextPieceNumbers(trx, orders.length);
  const stored = storeBlocks(trx, tenantId, orders, numbers, columns);
  stored.catch(() => undefined); // awaited below: a failure must not be unhandled meanwhile
  await nextTurn();
  const pieces = postingsPieces(columns.ts, lexemes, wordCounts, orders);
  await stored;
  await storePostings(trx, tenantId, pieces, numbers);
}

/** A batch's entries as the blocks store them, a column each, by index in the batch. */
interface BlockColumns {
  ts: number[];
  level: (string | null)[];
  service: (string | null)[];
  host: (string | null)[];
  trace_id: (string | null)[];
  span_id: (string | null)[];
  message: string[];
  /** JSON text, names by the tenant's numbers (attribute-codes.ts). */
  attributes: string[];
  /** The tokens of a message that is not plain ASCII (tokenize.ts, storedWords), else null. */
  words: (string | null)[];
}

const COLUMNS = ['ts', 'level', 'service', 'host', 'trace_id', 'span_id', 'message', 'attributes', 'words'] as const;
/** A column of an entry, an array of its block. */
export type Column = (typeof COLUMNS)[number];
/** Blocks per INSERT statement (13 parameters each). */
const BLOCKS_PER_STATEMENT = 200;

/**
 * Stores a batch's pieces (their entries' indexes in place order, `orders`, numbered `numbers`) as blocks,
 * inside the caller's transaction.
 */
async function storeBlocks(
  trx: Kysely<any>,
  tenantId: string,
  orders: readonly (readonly number[])[],
  numbers: readonly string[],
  columns: BlockColumns,
): Promise<void> {
  const rows: RawBuilder<unknown>[] = [];
  orders.forEach((order, piece) => {
    for (let start = 0; start < order.length; start += BLOCK_ENTRIES) {
      const places = order.slice(start, start + BLOCK_ENTRIES);
      // Each array as text, the attributes as one JSON array whose elements, in order, make the
      // jsonb[] (joined, not escaped: the cheapest for client and server together).
      const values = COLUMNS.map((column) => {
        if (column === 'ts') return sql`${`{${places.map((index) => columns.ts[index]).join(',')}}`}::bigint[]`;
        if (column === 'attributes') {
          return sql`ARRAY(SELECT jsonb_array_elements(${`[${places.map((index) => columns.attributes[index]).join(',')}]`}::jsonb))`;
        }
        return sql`${arrayLiteral(places.map((index) => columns[column][index] ?? null))}::text[]`;
      });
      const firstId = Number(numbers[piece]!) * PLACES + start;
      const [first, last] = [columns.ts[places[0]!]!, columns.ts[places.at(-1)!]!];
      rows.push(sql`(${tenantId}, ${firstId}::bigint, ${first}::bigint, ${last}::bigint, ${sql.join(values)})`);
    }
  });
  for (let start = 0; start < rows.length; start += BLOCKS_PER_STATEMENT) {
    await sql`INSERT INTO log_blocks (tenant_id, first_id, first_ts, last_ts, ${sql.join(COLUMNS.map((column) => sql.ref(column)))})
      VALUES ${sql.join(rows.slice(start, start + BLOCKS_PER_STATEMENT))}`.execute(trx);
  }
}

const QUOTED = /["\\]/;
const QUOTED_ALL = /["\\]/g;

/**
 * A text array's text (`{"a","b\\"c",NULL}`), built in one pass: node-postgres's own (two regular
 * expressions an element) is a visible share of ingest (docs/performance-notes.md, "PostgreSQL store").
 */
function arrayLiteral(values: readonly (string | null)[]): string {
  let text = '{';
  for (let index = 0; index < values.length; index += 1) {
    const value = values[index]!;
    if (index > 0) text += ',';
    if (value === null) text += 'NULL';
    else text += QUOTED.test(value) ? `"${value.replace(QUOTED_ALL, '\\$&')}"` : `"${value}"`;
  }
  return `${text}}`;
}

/** The blocks `b` of a tenant as rows (`l`'s columns), those `blocks` selects. */
function entriesOf(tenantId: string, blocks: RawBuilder<unknown>, columns: readonly Column[] = COLUMNS): RawBuilder<unknown> {
  // Every array unnested is decompressed: a read that needs a few columns names them.
  const [read, left] = [COLUMNS.filter((column) => columns.includes(column)), COLUMNS.filter((column) => !columns.includes(column))];
  const nulls = left.map(
    (column) => sql`NULL::${sql.raw(column === 'ts' ? 'bigint' : column === 'attributes' ? 'jsonb' : 'text')} AS ${sql.ref(column)}`,
  );
  return sql`SELECT b.tenant_id, b.first_id + e.n - 1 AS id, ${sql.join([...read.map((column) => sql.ref(`e.${column}`)), ...nulls])}
    FROM log_blocks b CROSS JOIN LATERAL unnest(${sql.join(read.map((column) => sql.ref(`b.${column}`)))})
      WITH ORDINALITY AS e(${sql.join(read.map((column) => sql.ref(column)))}, n)
    WHERE b.tenant_id = ${tenantId} AND ${blocks}`;
}

/**
 * A tenant's entries in [from, end) (and others of the blocks that hold them: the reads' condition
 * has the range), as a subquery; of `columns` only, when given (the others null). A block lies in one
 * UTC hour, in the partition of its first time.
 */
export function entriesInRange(tenantId: string, from: number, end: number, columns?: readonly Column[]): RawBuilder<unknown> {
  const blocks = sql`b.first_ts >= ${from - mod(from, HOUR)}::bigint AND b.first_ts < ${end}::bigint AND b.last_ts >= ${from}::bigint`;
  return sql`(${entriesOf(tenantId, blocks, columns)})`;
}

/** A tenant's entries of some blocks (by their first ids), whose first times are in [lo, hi]; of `columns`, the others null. */
export function entriesOfBlocks(
  tenantId: string,
  firstIds: readonly number[],
  lo: number,
  hi: number,
  columns: readonly Column[] = COLUMNS,
): RawBuilder<unknown> {
  const blocks =
    firstIds.length === 0
      ? sql`FALSE`
      : sql`b.first_id = ANY(${firstIds}::bigint[]) AND b.first_ts >= ${lo - mod(lo, HOUR)}::bigint AND b.first_ts <= ${hi}::bigint`;
  return sql`(${entriesOf(tenantId, blocks, columns)})`;
}

/** The first id of the block that holds the entry `id`. */
function blockOf(id: number): number {
  const place = id % PLACES;
  return id - (place % BLOCK_ENTRIES);
}

/**
 * Hits a block may have at most for entriesAt to read each by its place in the arrays (`b.message[7]`)
 * rather than unnest the block: an element read so costs about as much as unnesting the block once
 * for each hit (the array is decompressed again), and nothing more. A page of a rare word has one hit
 * in each of 500 blocks: 30 ms by place against 200–300 ms unnested; at 4 a block by place is still
 * the cheaper, at 8 (a page of `level:error`, one entry of 16) or more unnesting
 * (docs/performance-notes.md, "PostgreSQL store").
 */
const HITS_READ_BY_PLACE = 4;

/**
 * The entries `hits` names, as a subquery: with few hits a block (HITS_READ_BY_PLACE), each read at
 * its place in its block's arrays; else their blocks, each unnested once, and of them the hits (a hash
 * of their ids). OFFSET 0 keeps the planner from folding the reads' condition into the read. Of
 * `columns` only, when given (the others null).
 */
export function entriesAt(tenantId: string, hits: readonly Hit[], columns?: readonly Column[]): RawBuilder<unknown> {
  const blocks = new Set<number>();
  let [lo, hi] = [Infinity, -Infinity];
  for (const hit of hits) {
    blocks.add(blockOf(hit.id));
    [lo, hi] = [Math.min(lo, hit.ts), Math.max(hi, hit.ts)];
  }
  const ids = hits.map((hit) => hit.id);
  if (hits.length === 0 || hits.length > HITS_READ_BY_PLACE * blocks.size) {
    return sql`(SELECT * FROM ${entriesOfBlocks(tenantId, [...blocks], lo, hi, columns)} AS r
      WHERE r.id IN (SELECT unnest(${ids}::bigint[])) OFFSET 0)`;
  }
  const read = COLUMNS.filter((column) => columns === undefined || columns.includes(column));
  const values = COLUMNS.map((column) =>
    read.includes(column)
      ? sql`b.${sql.ref(column)}[k.place] AS ${sql.ref(column)}`
      : sql`NULL::${sql.raw(column === 'ts' ? 'bigint' : column === 'attributes' ? 'jsonb' : 'text')} AS ${sql.ref(column)}`,
  );
  return sql`(SELECT b.tenant_id, k.id, ${sql.join(values)}
    FROM (SELECT h.id, h.id - ((h.id % ${PLACES}) % ${BLOCK_ENTRIES}) AS first_id, ((h.id % ${PLACES}) % ${BLOCK_ENTRIES})::int + 1 AS place
      FROM unnest(${ids}::bigint[]) AS h(id)) k
    JOIN log_blocks b ON b.tenant_id = ${tenantId} AND b.first_id = k.first_id
      AND b.first_ts >= ${lo - mod(lo, HOUR)}::bigint AND b.first_ts <= ${hi}::bigint
    OFFSET 0)`;
}

/** The columns of the entries (`l`) a condition's SQL reads, and the time: what counting its matches needs. */
export function columnsRead(condition: RawBuilder<unknown>, db: Kysely<any>): Column[] {
  const text = condition.compile(db).sql;
  return COLUMNS.filter((column) => column === 'ts' || new RegExp(`\\bl\\.${column}\\b|"l"\\."${column}"`).test(text));
}

/** A block's first id and times (the walk of PostgresLogStore.timePage without postings). */
export interface BlockSpan {
  first_id: number;
  first_ts: number;
  last_ts: number;
}

/**
 * A tenant's blocks with entries in [from, end) of the next UTC hour that has any, after `hour` (the
 * last one read; null: from the range's end, or start when `asc`). One statement: the hour, then its blocks.
 */
export async function nextHourOfBlocks(
  db: Kysely<any>,
  tenantId: string,
  from: number,
  end: number,
  hour: number | null,
  order: 'asc' | 'desc',
): Promise<{ hour: number; blocks: BlockSpan[] } | null> {
  const descending = order === 'desc';
  const inRange = sql`tenant_id = ${tenantId} AND first_ts >= ${from - mod(from, HOUR)}::bigint AND first_ts < ${end}::bigint AND last_ts >= ${from}::bigint`;
  const beyond = hour === null ? sql`` : descending ? sql` AND first_ts < ${hour}::bigint` : sql` AND first_ts >= ${hour + HOUR}::bigint`;
  const { rows } = await sql<{ first_id: string; first_ts: string; last_ts: string; hour: string }>`WITH next AS (
      SELECT ${descending ? sql`max(first_ts)` : sql`min(first_ts)`} AS first FROM log_blocks WHERE ${inRange}${beyond}),
    hour AS (SELECT first - (((first % ${HOUR}) + ${HOUR}) % ${HOUR}) AS start FROM next)
    SELECT first_id, first_ts, last_ts, hour.start::text AS hour FROM log_blocks, hour
    WHERE ${inRange} AND first_ts >= hour.start AND first_ts < hour.start + ${HOUR}`.execute(db);
  if (rows.length === 0) return null;
  return {
    hour: Number(rows[0]!.hour),
    blocks: rows.map((row) => ({ first_id: Number(row.first_id), first_ts: Number(row.first_ts), last_ts: Number(row.last_ts) })),
  };
}
