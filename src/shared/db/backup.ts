import { createHash } from 'node:crypto';
import {
  closeSync,
  copyFileSync,
  existsSync,
  fsyncSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { DataLockedError, holdDataLock, type DataLock } from './data-lock.js';
import { sqliteFileOf } from './database.js';
import { PRIVATE_FILE_MODE, privateDirectory, privateFile, tightenIfPresent } from './private-files.js';

/**
 * `cli.js backup <dir>` and `cli.js restore <dir>` for the embedded default (docs/operations.md,
 * "Backup and restore"). A backup is a consistent online copy of each SQLite database, made with
 * `VACUUM INTO` (one read transaction: writers go on, the copy is the database as of one instant,
 * compacted), and a manifest written last (files, sizes, SHA-256, migrations, time). PostgreSQL is
 * backed up with pg_dump. Every file is 0600 in a 0700 directory (private-files.ts).
 */

export interface DatabaseToSave {
  /** `gateway` or `logs`: the file name in the backup and the migration history table. */
  name: string;
  /** The service's database URL (`sqlite:<path>`). */
  url: string;
}

export interface Manifest {
  format: 'gerbang-backup/1';
  created_at: string;
  databases: { name: string; file: string; bytes: number; sha256: string; migrations: string[] }[];
}

export const MANIFEST = 'manifest.json';

/** What a failed restore stages beside its target: removed by the next restore, never opened by a service. */
export const STAGED_SUFFIX = '.restoring';

function sqlitePath(database: DatabaseToSave): string {
  const path = sqliteFileOf(database.url);
  if (path !== undefined) return path;
  if (!database.url.startsWith('sqlite:')) {
    throw new Error(
      `${database.name}: ${database.url.split(':')[0]} databases are backed up with pg_dump and pg_restore, not this command (docs/operations.md)`,
    );
  }
  throw new Error(`${database.name}: an in-memory database has nothing to back up or restore`);
}

/** SHA-256 of a file, read in 1 MiB pieces (a database may be larger than the memory). */
function sha256Of(path: string): string {
  const hash = createHash('sha256');
  const buffer = Buffer.alloc(1 << 20);
  const fd = openSync(path, 'r');
  try {
    for (let read = readSync(fd, buffer); read > 0; read = readSync(fd, buffer)) hash.update(buffer.subarray(0, read));
  } finally {
    closeSync(fd);
  }
  return hash.digest('hex');
}

function fsyncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

async function openSqlite(path: string, options: { readonly?: boolean; timeout?: number } = {}) {
  const { default: SQLite } = await import('better-sqlite3');
  return new SQLite(path, { readonly: options.readonly ?? false, fileMustExist: true, timeout: options.timeout ?? 10_000 });
}

function migrationsOf(db: { prepare(sql: string): { all(): unknown[] } }, name: string): string[] {
  return db
    .prepare(`SELECT name FROM ${name}_migrations ORDER BY name`)
    .all()
    .map((row) => (row as { name: string }).name);
}

export async function backup(dir: string, databases: readonly DatabaseToSave[], now: () => number = Date.now): Promise<Manifest> {
  // Every source is checked before anything is written: no half backup of one database of two.
  const sources = databases.map((database) => ({ database, source: sqlitePath(database) }));
  for (const { database, source } of sources) if (!existsSync(source)) throw new Error(`${database.name}: ${source} does not exist`);
  if (existsSync(dir) && readdirSync(dir).length > 0) throw new Error(`${dir} is not empty: back up into a new directory`);
  privateDirectory(dir);
  const manifest: Manifest = { format: 'gerbang-backup/1', created_at: new Date(now()).toISOString(), databases: [] };
  for (const { database, source } of sources) {
    const file = `${database.name}.sqlite`;
    const target = join(dir, file);
    // VACUUM INTO fills an empty file as it is, so the copy is 0600 from its first byte.
    privateFile(target);
    const db = await openSqlite(source);
    try {
      db.prepare('VACUUM INTO ?').run(target);
      const migrations = migrationsOf(db, database.name);
      manifest.databases.push({ name: database.name, file, bytes: statSync(target).size, sha256: sha256Of(target), migrations });
    } finally {
      db.close();
    }
  }
  writeFileSync(join(dir, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`, { mode: PRIVATE_FILE_MODE });
  return manifest;
}

/** Reads a backup's manifest and checks its files against it; returns the manifest. */
export function verifyBackup(dir: string): Manifest {
  const path = join(dir, MANIFEST);
  if (!existsSync(path)) throw new Error(`${dir} holds no ${MANIFEST}: not a complete backup`);
  let manifest: Manifest;
  try {
    manifest = JSON.parse(readFileSync(path, 'utf8')) as Manifest;
  } catch {
    throw new Error(`${path} is not valid JSON: not a complete backup`);
  }
  if (manifest?.format !== 'gerbang-backup/1' || !Array.isArray(manifest.databases))
    throw new Error(`${path}: unknown format ${String(manifest?.format)}`);
  for (const entry of manifest.databases) {
    const file = join(dir, basename(entry.file));
    if (!existsSync(file)) throw new Error(`${entry.name}: ${file} is missing`);
    if (!matches(file, entry)) throw new Error(`${entry.name}: ${file} does not match the manifest`);
  }
  return manifest;
}

function matches(file: string, entry: Manifest['databases'][number]): boolean {
  return statSync(file).size === entry.bytes && sha256Of(file) === entry.sha256;
}

export interface RestoreOptions {
  /** Replace databases that exist (never ones in use). */
  force?: boolean;
  /** What the owner record of the locks says while the restore holds them. */
  command?: string;
}

/**
 * Puts a verified backup in place of the databases, and never harms them on the way:
 * 1. It takes each database's lock (data-lock.ts): a service holding one, or starting meanwhile, is
 *    refused, and the message names the holder. It then checks that no other process has a database
 *    open at all (a CLI command, a sqlite3 shell): SQLite's exclusive lock on the file itself, which
 *    also folds a crashed service's `-wal` into its database first. `force` changes neither check.
 * 2. Each backup file is copied to `<target>.restoring`, beside its target (one file system, so the
 *    rename below is atomic), synced, and checked there: size and SHA-256 against the manifest,
 *    `PRAGMA quick_check`, and the migrations the manifest lists. Any failure removes the copies
 *    and leaves every database as it was.
 * 3. Only when every copy has passed is each renamed over its target.
 * A `.restoring` file left by a killed restore is removed by the next; no service ever opens one.
 */
export async function restore(dir: string, databases: readonly DatabaseToSave[], options: RestoreOptions = {}): Promise<Manifest> {
  const manifest = verifyBackup(dir);
  const plan = databases.map((database) => {
    const entry = manifest.databases.find((saved) => saved.name === database.name);
    if (!entry) throw new Error(`${database.name}: not in this backup`);
    const target = sqlitePath(database);
    return { database, entry, target, staged: `${target}${STAGED_SUFFIX}` };
  });
  const locks: DataLock[] = [];
  try {
    for (const { database } of plan) {
      try {
        const lock = await holdDataLock(database.url, options.command ?? 'restore');
        if (lock) locks.push(lock);
      } catch (error) {
        if (error instanceof DataLockedError)
          throw new Error(`restore refused: the ${database.name} database ${error.message}: stop it first`);
        throw error;
      }
    }
    for (const { database, target } of plan) {
      if (!existsSync(target)) continue;
      if (!options.force) throw new Error(`${database.name}: ${target} exists: restore into an empty data directory, or pass --force`);
      await assertNotOpen(database.name, target);
    }
    try {
      for (const step of plan) await stage(join(dir, basename(step.entry.file)), step);
      for (const { target, staged } of plan) {
        rmSync(`${target}-wal`, { force: true });
        rmSync(`${target}-shm`, { force: true });
        renameSync(staged, target);
        fsyncPath(dirname(target));
      }
    } finally {
      for (const { staged } of plan) removeDatabaseFiles(staged);
    }
  } finally {
    for (const lock of locks) lock.release();
  }
  return manifest;
}

/**
 * Refuses a database that another process has open. Opening it with an exclusive lock fails while
 * any connection has it (in WAL mode every connection holds a shared lock on the file); when it
 * succeeds, closing it checkpoints a `-wal` left by a crash into the database, so that nothing but
 * the database file itself is replaced.
 */
async function assertNotOpen(name: string, target: string): Promise<void> {
  let db;
  try {
    db = await openSqlite(target, { timeout: 0 });
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
    db.exec('ROLLBACK');
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED')
      throw new Error(`restore refused: ${target} (${name}) is open in another process: stop it first`);
    // Not a database any more (the reason to restore it): replaced as it is.
  } finally {
    db?.close();
  }
}

async function stage(source: string, { entry, target, staged }: { entry: Manifest['databases'][number]; target: string; staged: string }) {
  privateDirectory(dirname(target));
  removeDatabaseFiles(staged);
  copyFileSync(source, staged);
  tightenIfPresent(staged);
  fsyncPath(staged);
  // The copy itself is checked, not only its source.
  if (!matches(staged, entry))
    throw new Error(`${entry.name}: the copy of ${source} does not match the manifest (disk full?): nothing restored`);
  let db;
  let problem: string | undefined;
  try {
    db = await openSqlite(staged, { readonly: true });
    const findings = quickCheck(db);
    if (findings.length > 0) problem = `quick_check found ${findings.length} problem(s), the first: ${findings[0]}`;
    else if (migrationsOf(db, entry.name).join('\n') !== entry.migrations.join('\n'))
      problem = 'its migrations are not the ones the manifest lists';
  } catch (error) {
    problem = error instanceof Error ? error.message : String(error);
  } finally {
    db?.close();
  }
  if (problem !== undefined) throw new Error(`${entry.name}: ${source} is not a sound database (${problem}): nothing restored`);
}

/** SQLite's quick_check, one line a problem; none for a sound database. */
function quickCheck(db: { pragma(source: string): unknown }): string[] {
  const rows = db.pragma('quick_check') as { quick_check: string }[];
  const lines = rows.flatMap((row) => row.quick_check.split('\n')).filter((line) => line !== '' && !line.startsWith('*** in database'));
  return lines.length === 1 && lines[0] === 'ok' ? [] : lines;
}

function removeDatabaseFiles(path: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(`${path}${suffix}`, { force: true });
}
