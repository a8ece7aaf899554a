import { CompiledQuery } from 'kysely';
import { isPacked, plainValues, type PackedValues } from './threads/packed-values.js';
import type { RowsStatement } from './threads/write-thread.js';

/** SQLite's default limit of bound parameters per statement (SQLITE_MAX_VARIABLE_NUMBER). */
const MAX_PARAMETERS = 32_766;
/** Rows per statement at most: longer statements gain nothing and cost more to prepare. */
const MAX_ROWS = 1_000;

/** A column of rowInserts: its name, or its name and the SQL of its value, whose `?`s take that many values of the row. */
export type InsertColumn = string | { name: string; value: string };

/**
 * The insert of rows whose values lie one after the other in `values`, each bound as it is (run it
 * with runInOrder, threads/write-thread.ts): on the SQLite thread one prepared single-row
 * statement run a row, elsewhere multi-row `VALUES (?, …), (?, …)` statements. Either is about
 * three times faster than one bound JSON array expanded by json_each (docs/performance-notes.md,
 * "SQLite store"): SQLite parses no JSON and JavaScript writes none; and a batch's rows are written
 * straight into `values`, without an array per row.
 * `table` and `columns` are the store's own names and SQL, never user input.
 */
export function rowInserts(table: string, columns: readonly InsertColumn[], values: readonly unknown[] | PackedValues): RowsStatement {
  const width = rowWidth(columns);
  const valueCount = isPacked(values) ? values.kinds.length : values.length;
  if (valueCount % width !== 0) throw new Error(`rowInserts: ${valueCount} values do not make rows of ${width}`);
  const tuple = `(${columns.map((column) => (typeof column === 'string' ? '?' : column.value)).join(',')})`;
  const head = `INSERT INTO "${table}" (${columns.map((column) => `"${typeof column === 'string' ? column : column.name}"`).join(',')}) VALUES `;
  return {
    sql: head + tuple,
    width,
    values,
    statements: () => {
      const plain = plainValues(values);
      const perStatement = Math.max(1, Math.min(MAX_ROWS, Math.floor(MAX_PARAMETERS / width)));
      const rows = plain.length / width;
      const statements: CompiledQuery[] = [];
      for (let start = 0; start < rows; start += perStatement) {
        const count = Math.min(perStatement, rows - start);
        const text = head + new Array<string>(count).fill(tuple).join(',');
        const parameters = count === rows ? plain : plain.slice(start * width, (start + count) * width);
        statements.push(CompiledQuery.raw(text, parameters as unknown[]));
      }
      return statements;
    },
  };
}

/** The values a row of `columns` takes. */
export function rowWidth(columns: readonly InsertColumn[]): number {
  let width = 0;
  for (const column of columns) width += typeof column === 'string' ? 1 : column.value.split('?').length - 1;
  return width;
}
