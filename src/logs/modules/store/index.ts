import type { Kysely } from 'kysely';
import type { LogStore } from './log-store.js';
import { PostgresLogStore } from './postgres/postgres-store.js';
export { DEFAULT_WRITE_TIMEOUT_MS } from './postgres/postgres-store.js';
import { SqliteLogStore } from './sqlite/sqlite-store.js';
import { BudgetedLogStore } from './budgeted-store.js';
import type { DocumentIdWindow } from './store-core.js';

export * from './log-store.js';
export { DEFAULT_DOCUMENT_ID_WINDOW, type DocumentIdWindow } from './store-core.js';
export { QueryTimeoutError } from './read-budget.js';
export { openStoreReads, SqliteReadPool, type StoreReads } from './store-reads.js';
export { sqliteThreadDialect, writerThreadOf, type WriterThread } from './sqlite/threads/write-thread.js';

export interface LogStoreOptions {
  /**
   * Where reads (search, histogram, fields, distinct) run: openStoreReads (a worker pool on SQLite,
   * a statement_timeout pool on PostgreSQL). Default: `db` itself.
   */
  reads?: Kysely<any> | undefined;
  /** Time budget of each read, in ms (LOGS_SEARCH_TIMEOUT); default: unbounded. */
  readTimeoutMs?: number | undefined;
  /** How long senders' document ids are remembered (LOGS_INGEST_ID_WINDOW); default a day, on the system clock. */
  documentIds?: DocumentIdWindow | undefined;
  /**
   * PostgreSQL: how long a statement of a batch's write may wait or run before the batch fails (and
   * its sender retries) instead of holding a connection while the server stalls (LOGS_WRITE_TIMEOUT);
   * default 30 s.
   * SQLite waits at most its busy timeout (5 s) for the file's lock.
   */
  writeTimeoutMs?: number | undefined;
}

/**
 * The log store on the logs service's database (opened with openDatabase, on SQLite with its writes
 * on a thread of their own, and migrated with the service's migrations, logs/db/migrations). Writes go through `db`, reads
 * through `options.reads`; the store needs no raw driver handle.
 */
export function createLogStore(db: Kysely<any>, dialect: 'sqlite' | 'postgres', options: LogStoreOptions = {}): LogStore {
  const reads = options.reads ?? db;
  const store =
    dialect === 'sqlite'
      ? new SqliteLogStore(db, { reads, documentIds: options.documentIds })
      : new PostgresLogStore(db, reads, options.documentIds, options.writeTimeoutMs);
  return options.readTimeoutMs === undefined ? store : new BudgetedLogStore(store, options.readTimeoutMs);
}
