import { CompiledQuery, type Kysely } from 'kysely';

/** SQLite's default limit of bound parameters per statement (SQLITE_MAX_VARIABLE_NUMBER). */
const MAX_PARAMETERS = 32_766;
/** Rows per statement at most: longer statements gain nothing and cost more to prepare. */
const MAX_ROWS = 1_000;

/**
 * Inserts rows with multi-row `VALUES (?, …), (?, …)` statements, each value bound as it is. For the
 * store's large batches this is three times faster than one bound JSON array expanded by json_each
 * (measured: 3–5 µs against 14 µs an entry): SQLite parses no JSON and JavaScript writes none.
 * `table` and `columns` are the store's own names, never user input.
 */
export async function insertRows(
  connection: Kysely<any>,
  table: string,
  columns: readonly string[],
  rows: readonly unknown[][],
): Promise<void> {
  const perStatement = Math.max(1, Math.min(MAX_ROWS, Math.floor(MAX_PARAMETERS / columns.length)));
  const tuple = `(${columns.map(() => '?').join(',')})`;
  const head = `INSERT INTO "${table}" (${columns.map((column) => `"${column}"`).join(',')}) VALUES `;
  for (let start = 0; start < rows.length; start += perStatement) {
    const chunk = rows.slice(start, start + perStatement);
    const text = head + new Array<string>(chunk.length).fill(tuple).join(',');
    await connection.executeQuery(CompiledQuery.raw(text, chunk.flat()));
  }
}
