import { Kysely, PostgresDialect, type KyselyPlugin } from 'kysely';
import { cancelBackendAs, cancellingPool } from './postgres/postgres-reads.js';
import { ReadReplicas, type ReplicaLog } from './postgres/read-replicas.js';
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
  /** PostgreSQL with LOGS_DATABASE_READ_URL: the hot standbys the reads go to, and their lag. */
  readonly replicas?: ReadReplicas | undefined;
  close(): Promise<void>;
}

export interface StoreReadsOptions {
  /** Longest a read may run (LOGS_SEARCH_TIMEOUT). */
  timeoutMs: number;
  /** SQLite: worker threads running reads at once (LOGS_SEARCH_WORKERS); PostgreSQL: connections of the read pool. */
  workers: number;
  /** PostgreSQL: hot standbys for the reads (LOGS_DATABASE_READ_URL; none: the primary answers them). */
  replicas?: { readonly urls: readonly string[]; readonly maxLagMs: number; readonly checkIntervalMs: number } | undefined;
  /** Where a replica left out or taken back is told. */
  log?: ReplicaLog | undefined;
}

/**
 * Opens the log store's read side next to the service's database (`url` as LOGS_DATABASE_URL):
 * SQLite reads run in a pool of worker threads; PostgreSQL reads use their own small connection pool
 * whose statement_timeout makes the server cancel a statement at the budget, and a statement whose
 * client left is cancelled then (postgres-reads.ts); with `options.replicas`, on the hot standbys
 * that keep up (postgres/read-replicas.ts). A `sqlite::memory:`
 * database cannot be shared with a worker: its reads stay on `main`.
 */
export async function openStoreReads(url: string, main: Kysely<any>, options: StoreReadsOptions): Promise<StoreReads> {
  if (url.startsWith('sqlite:')) {
    if ((options.replicas?.urls.length ?? 0) > 0) throw new Error('read replicas need the log store on PostgreSQL');
    const path = sqliteFileOf(url);
    if (path === undefined) return { db: main.withPlugin(deadlineGuard), close: async () => undefined };
    const pool = new SqliteReadPool({ path, size: options.workers });
    return { db: readPoolKysely(pool).withPlugin(deadlineGuard), pool, close: () => pool.close() };
  }
  const pool = await openPostgresPool({ connectionString: url, max: options.workers, statement_timeout: Math.max(1, options.timeoutMs) });
  const primary = cancellingPool(pool, cancelBackendAs({ connectionString: url }));
  const replicaUrls = options.replicas?.urls ?? [];
  if (replicaUrls.length === 0) {
    const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: primary }) });
    return { db: db.withPlugin(deadlineGuard), close: () => db.destroy() };
  }
  // Reads go to the standbys that keep up (postgres/read-replicas.ts), else to the primary's pool.
  const replicas = await ReadReplicas.open(url, primary, {
    ...options.replicas!,
    workers: options.workers,
    timeoutMs: options.timeoutMs,
    log: options.log,
  }).catch(async (error: unknown) => {
    await primary.end();
    throw error;
  });
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: replicas.pool }) });
  return { db: db.withPlugin(deadlineGuard), replicas, close: () => db.destroy() };
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
