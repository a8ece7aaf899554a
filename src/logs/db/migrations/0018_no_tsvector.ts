import { byDialect } from './support/dialect.js';
import { storeWords } from './support/postgres-words.js';

/**
 * No tsvector on PostgreSQL (docs/scaling.md 2d): the postings find every row, and the rows' words
 * are checked on the message itself (compile-postgres.ts); messages that are not plain ASCII keep
 * their tokens in `words`. The column's space comes back as rows are rewritten (retention drops whole
 * partitions). Nothing on SQLite.
 */
export const { start, chunk, finish } = byDialect({ postgres: storeWords });
