import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { PRIVATE_FILE_MODE, privateDirectory, privateFile } from './private-files.js';
import { sqliteFileOf } from './database.js';

/**
 * The lock a service holds on its SQLite database for its whole life, and that `restore` takes
 * before it replaces anything (docs/operations.md, "Who holds a database"). It is a POSIX advisory
 * lock (fcntl) on a small file beside the database, `<database>.lock`, taken through SQLite itself:
 * that file opened with `locking_mode=EXCLUSIVE` and written once keeps SQLite's exclusive lock until
 * the connection closes, and the kernel drops it when the process ends, however it ends (SIGKILL,
 * OOM kill, a crash), so there is nothing stale to clean up. Another process asking for it gets
 * SQLITE_BUSY at once. A PID file alone could not say whether its process still lives (or is the
 * same process: PIDs are reused).
 *
 * Beside it, `<database>.lock-owner` (pid, command, start time) only names the holder in messages.
 *
 * fcntl locks belong to the process, and closing any descriptor of the file drops them: nothing in a
 * holding process may open `<database>.lock` other than through this module (SQLite's own file
 * handling keeps them across its connections; a plain `fs` read would not).
 */

export interface LockOwner {
  pid: number;
  command: string;
  started_at: string;
}

/** The database is held by another process; the message names it. */
export class DataLockedError extends Error {
  constructor(
    readonly database: string,
    readonly owner: LockOwner | undefined,
  ) {
    super(`${database} is in use by ${describeOwner(owner)}`);
    this.name = 'DataLockedError';
  }
}

export interface DataLock {
  /** The lock file. */
  readonly path: string;
  /** Gives the lock up (the end of the process does as much). */
  release(): void;
}

/** Locks held by this process: referenced here so that no garbage collection closes their connections. */
const held = new Set<BetterSqlite3.Database>();

/**
 * Takes the lock of the database at `databaseUrl` for `command` (what the owner record says), or
 * throws DataLockedError at once if another process has it. PostgreSQL and `sqlite::memory:` need
 * none (PostgreSQL serves many clients; a memory database is the process's own): undefined.
 */
export async function holdDataLock(databaseUrl: string, command: string): Promise<DataLock | undefined> {
  const database = sqliteFileOf(databaseUrl);
  if (database === undefined) return undefined;
  const path = `${database}.lock`;
  privateDirectory(dirname(database));
  privateFile(path);
  const { default: SQLite } = await import('better-sqlite3');
  const connection = new SQLite(path, { timeout: 0 });
  try {
    connection.pragma('locking_mode = EXCLUSIVE');
    // The journal in memory: no `-journal` file beside the lock.
    connection.pragma('journal_mode = MEMORY');
    // In exclusive locking mode the lock of the first write transaction stays after it ends.
    connection.exec('BEGIN EXCLUSIVE');
    connection.exec('COMMIT');
  } catch (error) {
    connection.close();
    if ((error as { code?: string }).code === 'SQLITE_BUSY' || (error as { code?: string }).code === 'SQLITE_LOCKED') {
      throw new DataLockedError(database, readOwner(path));
    }
    throw error;
  }
  held.add(connection);
  const ownerPath = `${path}-owner`;
  writeOwner(ownerPath, { pid: process.pid, command, started_at: new Date().toISOString() });
  const removeOwner = () => rmSync(ownerPath, { force: true });
  process.once('exit', removeOwner);
  return {
    path,
    release() {
      if (!held.delete(connection)) return;
      process.off('exit', removeOwner);
      removeOwner();
      connection.close();
    },
  };
}

/** Written whole (a temporary file renamed), so that a reader never sees half of it. */
function writeOwner(path: string, owner: LockOwner): void {
  const staged = `${path}.${process.pid}`;
  writeFileSync(staged, `${JSON.stringify(owner)}\n`, { mode: PRIVATE_FILE_MODE });
  renameSync(staged, path);
}

/** The holder's record; undefined while the holder has not written it yet, or if it is unreadable. */
function readOwner(lockPath: string): LockOwner | undefined {
  const path = `${lockPath}-owner`;
  if (!existsSync(path)) return undefined;
  try {
    const owner = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockOwner>;
    if (typeof owner.pid !== 'number' || typeof owner.command !== 'string' || typeof owner.started_at !== 'string') return undefined;
    return { pid: owner.pid, command: owner.command, started_at: owner.started_at };
  } catch {
    return undefined;
  }
}

function describeOwner(owner: LockOwner | undefined): string {
  if (!owner) return 'another process';
  return `pid ${owner.pid} (${owner.command}, since ${owner.started_at})`;
}

/** What the owner record calls this process: `cli.js logs`, `cli.ts restore`. */
export function commandOfThisProcess(): string {
  const [, script, ...args] = process.argv;
  return [script === undefined ? basename(process.execPath) : basename(script), ...args.slice(0, 1)].join(' ');
}
