import { dirname } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, type Dialect, type SqliteDatabase } from 'kysely';
import { openPostgresPool } from './postgres-pool.js';
import { privateDirectory, privateFile, tightenIfPresent } from './private-files.js';

export type DialectName = 'sqlite' | 'postgres';

export interface Database<Schema> {
  readonly db: Kysely<Schema>;
  readonly dialect: DialectName;
  close(): Promise<void>;
}

/** The event loop's connection to a SQLite file as openDatabase hands it on: statements prepared (and cached) by their text. */
export interface StatementSource {
  prepare(sql: string): { reader: boolean; readonly: boolean; all(parameters: readonly unknown[]): unknown[] };
  /** Registers a SQL function on the connection (the log store's pattern matcher). */
  function(name: string, options: { deterministic: boolean }, implementation: (...values: any[]) => unknown): void;
  close(): void;
}

/** Makes the Kysely dialect of a SQLite file whose writes run on a thread, given the event loop's connection for plain reads. */
export type SqliteThreadDialect = (reads: StatementSource & SqliteDatabase, path: string, pragmas: readonly string[]) => Dialect;

export interface OpenOptions {
  /**
   * SQLite files: every write runs on a worker thread's connection, so that the event loop never
   * waits for a large write or the disk; plain reads stay on the event loop. For a database with
   * large writes: the logs service passes its store's (logs/modules/store/sqlite/threads/write-thread.ts).
   * Elsewhere a statement needs no message.
   */
  sqliteThread?: SqliteThreadDialect | undefined;
}

/** The SQLite file of a `sqlite:` URL, or undefined for PostgreSQL and an in-memory database. */
export function sqliteFileOf(url: string): string | undefined {
  if (!url.startsWith('sqlite:')) return undefined;
  const path = url.slice('sqlite:'.length);
  return path === ':memory:' || path === '' ? undefined : path;
}

/** Opens the database named by a `sqlite:` or `postgres://` URL. */
export async function openDatabase<Schema>(url: string, options: OpenOptions = {}): Promise<Database<Schema>> {
  const dialect: DialectName = url.startsWith('sqlite:') ? 'sqlite' : 'postgres';
  const kyselyDialect = dialect === 'sqlite' ? await sqliteDialect(url.slice('sqlite:'.length), options) : await postgresDialect(url);
  const db = new Kysely<Schema>({ dialect: kyselyDialect });
  return { db, dialect, close: () => db.destroy() };
}

/** How long a SQLite statement waits for another connection's write lock. */
export const SQLITE_BUSY_TIMEOUT_MS = 5_000;

/** Every SQLite connection's settings. */
const SQLITE_PRAGMAS = [
  // WAL: readers never block the writer; synchronous=FULL: an acknowledged commit survives a crash.
  'journal_mode = WAL',
  'synchronous = FULL',
  'foreign_keys = ON',
  `busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`,
  // 64 MiB page cache (default 2 MiB): log searches revisit index and row pages of the same hours
  // (docs/performance-notes.md, "Databases").
  'cache_size = -65536',
];

async function sqliteDialect(path: string, options: OpenOptions): Promise<Dialect> {
  if (path !== ':memory:') {
    // Created 0600 in a 0700 directory before SQLite opens it: its -wal and -shm files take its mode.
    privateDirectory(dirname(path));
    privateFile(path);
    tightenIfPresent(`${path}-wal`, `${path}-shm`);
  }
  const { default: SQLite } = await import('better-sqlite3');
  const database = new SQLite(path);
  for (const pragma of SQLITE_PRAGMAS) database.pragma(pragma);
  if (options.sqliteThread) return options.sqliteThread(reusingStatements(database), path, SQLITE_PRAGMAS);
  return new SqliteDialect({ database: reusingStatements(database) });
}

/** Prepared statements kept per connection at most (the stores issue a few dozen shapes over and over). */
const MAX_STATEMENTS = 256;

/**
 * Kysely's SQLite driver prepares every query anew, a cost the log store's large inserts feel
 * (docs/performance-notes.md, "Databases"). Statements are reused by their text instead; one that
 * is still being iterated (a streamed query) is never handed out twice.
 */
function reusingStatements(
  database: BetterSqlite3.Database,
): SqliteDatabase & { prepare(text: string): BetterSqlite3.Statement } & Pick<StatementSource, 'function'> {
  const statements = new Map<string, BetterSqlite3.Statement>();
  return {
    prepare(text: string) {
      const cached = statements.get(text);
      if (cached && !cached.busy) return cached;
      const statement = database.prepare(text);
      if (statements.size >= MAX_STATEMENTS) statements.clear();
      statements.set(text, statement);
      return statement;
    },
    function: (name, options, implementation) => void database.function(name, options, implementation),
    close: () => database.close(),
  };
}

async function postgresDialect(url: string): Promise<Dialect> {
  const { default: pg } = await import('pg');
  // int8 (COUNT, epoch milliseconds) as numbers: every value we store fits in 2^53.
  pg.types.setTypeParser(20, (value) => Number(value));
  const pool = await openPostgresPool({ connectionString: url, max: 10 });
  return new PostgresDialect({ pool });
}
