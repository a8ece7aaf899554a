import { Kysely, PostgresDialect, type KyselyPlugin } from 'kysely';
import { cancelBackendAs, cancellingPool } from './postgres/postgres-reads.js';
import { checkDeadline } from './read-budget.js';
import { readPoolKysely } from './sqlite/threads/read-dialect.js';
import { SqliteReadPool } from './sqlite/threads/read-pool.js';
import { openPostgresPool } from '../../../shared/db/postgres-pool.js';
import { sqliteFileOf } from '../../../shared/db/database.js';

export { SqliteReadPool } from './sqlite/threads/read-pool.js';

export interface StoreReads {
  /** The Kysely the log store reads through (search, histogram, fields, distinct). */
  readonly db: Kysely<any>;
  /** SQLite: the worker pool (its thread counts, for diagnostics and tests). */
  readonly pool?: SqliteReadPool | undefined;
  close(): Promise<void>;
}

export interface StoreReadsOptions {
  /** Longest a read may run (LOGS_SEARCH_TIMEOUT). */
  timeoutMs: number;
  /** SQLite: worker threads running reads at once (LOGS_SEARCH_WORKERS); PostgreSQL: connections of the read pool. */
  workers: number;
}

/**
 * Opens the log store's read side next to the service's database (`url` as LOGS_DATABASE_URL):
 * SQLite reads run in a pool of worker threads; PostgreSQL reads use their own small connection pool
 * whose statement_timeout makes the server cancel a statement at the budget, and a statement whose
 * client left is cancelled then (postgres-reads.ts). A `sqlite::memory:`
 * database cannot be shared with a worker: its reads stay on `main`.
 */
export async function openStoreReads(url: string, main: Kysely<any>, options: StoreReadsOptions): Promise<StoreReads> {
  if (url.startsWith('sqlite:')) {
    const path = sqliteFileOf(url);
    if (path === undefined) return { db: main.withPlugin(deadlineGuard), close: async () => undefined };
    const pool = new SqliteReadPool({ path, size: options.workers });
    return { db: readPoolKysely(pool).withPlugin(deadlineGuard), pool, close: () => pool.close() };
  }
  const pool = await openPostgresPool({ connectionString: url, max: options.workers, statement_timeout: Math.max(1, options.timeoutMs) });
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: cancellingPool(pool, cancelBackendAs({ connectionString: url })) }) });
  return { db: db.withPlugin(deadlineGuard), close: () => db.destroy() };
}

/** Refuses to start another statement of a read whose deadline has passed (it was already answered) or whose client left. */
const deadlineGuard: KyselyPlugin = {
  transformQuery(args) {
    checkDeadline();
    return args.node;
  },
  async transformResult(args) {
    return args.result;
  },
};
