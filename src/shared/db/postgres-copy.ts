import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { CompiledQuery, PostgresAdapter, type Kysely } from 'kysely';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';

/**
 * `COPY … FROM STDIN` through Kysely (docs/log-store.md, "Rows in by COPY"): rows in COPY's text
 * format cost the server about half the CPU of the same rows through `json_to_recordset`
 * (docs/benchmarks.md, "PostgreSQL ingest, where the time goes"). Kysely sends only SQL text, so a
 * query with this text and parameters [statement, lines] is run by the connection as a COPY, inside
 * whatever transaction the connection is in. Only the clients of a pool given to `enableCopy` take
 * it; anywhere else PostgreSQL refuses the text as a syntax error (a comment alone would be an empty
 * query, and the rows would be lost without a word).
 */
const COPY_ROWS = 'gerbang: copy rows';

/** `client.query` as Kysely calls it (text and values), widened so that it can be replaced. */
type Query = (...args: unknown[]) => unknown;

/** Lets every client of `pool` run COPY_ROWS; other queries go to pg as before. */
export function enableCopy(pool: pg.Pool): void {
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as Query;
    (client as { query: Query }).query = (text: unknown, ...rest: unknown[]) => {
      if (text !== COPY_ROWS) return query(text, ...rest);
      const [statement, rows] = rest[0] as [string, CopyRows];
      return copy(client, statement, rows);
    };
  });
}

/**
 * Lines of COPY's text format (copyLine): a list, or texts of whole lines made while the COPY runs, so
 * that the server stores the first rows while the next are made. Each text is one write to the server;
 * a list's lines are joined into writes of about 64 KB (one string per line would be a write each).
 */
export type CopyRows = readonly string[] | AsyncIterable<string>;

async function copy(client: pg.PoolClient, statement: string, rows: CopyRows): Promise<{ command: string; rowCount: number; rows: [] }> {
  const stream = client.query(copyFrom(statement));
  // A text that throws ends the COPY with CopyFail: the statement fails and the connection stays usable.
  await pipeline(Readable.from(Array.isArray(rows) ? chunks(rows) : rows), stream);
  return { command: 'COPY', rowCount: stream.rowCount, rows: [] };
}

function* chunks(lines: readonly string[]): Generator<string> {
  for (let first = 0; first < lines.length; first += LINES_PER_WRITE) yield lines.slice(first, first + LINES_PER_WRITE).join('');
}
/** Lines a write to the server: about 64 KB of log entries. */
export const LINES_PER_WRITE = 256;

/**
 * Runs `statement` (`COPY table (columns) FROM STDIN`) with `rows` on `db`, inside its transaction if
 * it is one. PostgreSQL only.
 */
export async function copyRows(db: Kysely<any>, statement: string, rows: CopyRows): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) throw new Error('COPY is PostgreSQL only');
  if (Array.isArray(rows) && rows.length === 0) return;
  await db.executeQuery(CompiledQuery.raw(COPY_ROWS, [statement, rows]));
}

const SPECIAL = /[\\\t\n\r]/;
const SPECIALS = /[\\\t\n\r]/g;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** One row of COPY's text format: values tab-separated, backslash escapes, null as \N; ends in a newline. */
export function copyLine(values: ReadonlyArray<string | number | null | undefined>): string {
  let line = '';
  for (let index = 0; index < values.length; index += 1) {
    const value = values[index];
    if (index > 0) line += '\t';
    if (value === null || value === undefined) line += '\\N';
    else if (typeof value === 'number') line += String(value);
    else line += SPECIAL.test(value) ? value.replace(SPECIALS, (char) => ESCAPES[char]!) : value;
  }
  return `${line}\n`;
}
