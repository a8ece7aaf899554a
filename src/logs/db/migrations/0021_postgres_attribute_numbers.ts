import { byDialect } from './support/dialect.js';
import { numberStoredAttributes } from './support/postgres-attribute-numbers.js';

/**
 * Attribute names by number on PostgreSQL (attribute-codes.ts; docs/log-store.md, "Rows"), as
 * SQLite's rows have them (0019_compact_rows): every stored row's attributes are written again.
 * Nothing on SQLite.
 */
export const { start, chunk, finish } = byDialect({ postgres: numberStoredAttributes });
