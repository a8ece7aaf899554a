import { byDialect } from './support/dialect.js';
import { storeRowsInBlocks } from './support/postgres-block-upgrade.js';

/**
 * PostgreSQL's entries in blocks (postgres-blocks.ts; docs/log-store.md, "Blocks"): every stored row
 * is stored again in blocks with new postings, and log_entries goes. Nothing on SQLite.
 */
export const { start, chunk, finish } = byDialect({ postgres: storeRowsInBlocks });
