import { byDialect } from './support/dialect.js';
import { compactStoredRows } from './support/sqlite-compact-rows.js';

/**
 * Smaller SQLite rows (sqlite-rows.ts, docs/log-store.md "Rows"): attribute names by number, JSONB,
 * hexadecimal ids as bytes, levels as numbers, the time as an offset from the id's second; every
 * stored row is written again. Nothing on PostgreSQL.
 */
export const { start, chunk, finish } = byDialect({ sqlite: compactStoredRows });
