import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/**
 * `cli.js backup <dir>` and `cli.js restore <dir>` for the embedded default (docs/operations.md).
 * A backup is a consistent online copy of each SQLite database, made with `VACUUM INTO` (one read
 * transaction: writers go on, the copy is the database as of one instant, compacted), and a manifest
 * written last (files, sizes, SHA-256, migrations, time). PostgreSQL is backed up with pg_dump.
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

function sqlitePath(database: DatabaseToSave): string {
  if (!database.url.startsWith('sqlite:')) {
    throw new Error(
      `${database.name}: ${database.url.split(':')[0]} databases are backed up with pg_dump, not this command (docs/operations.md)`,
    );
  }
  const path = database.url.slice('sqlite:'.length);
  if (path === ':memory:') throw new Error(`${database.name}: an in-memory database has nothing to back up`);
  return path;
}

function sha256Of(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

async function openSqlite(path: string, readonly: boolean) {
  const { default: SQLite } = await import('better-sqlite3');
  const db = new SQLite(path, { readonly, fileMustExist: true });
  db.pragma('busy_timeout = 10000');
  return db;
}

export async function backup(dir: string, databases: readonly DatabaseToSave[], now: () => number = Date.now): Promise<Manifest> {
  if (existsSync(dir) && readdirSync(dir).length > 0) throw new Error(`${dir} is not empty: back up into a new directory`);
  mkdirSync(dir, { recursive: true });
  const manifest: Manifest = { format: 'gerbang-backup/1', created_at: new Date(now()).toISOString(), databases: [] };
  for (const database of databases) {
    const source = sqlitePath(database);
    if (!existsSync(source)) throw new Error(`${database.name}: ${source} does not exist`);
    const file = `${database.name}.sqlite`;
    const target = join(dir, file);
    const db = await openSqlite(source, false);
    try {
      db.prepare('VACUUM INTO ?').run(target);
      const migrations = db
        .prepare(`SELECT name FROM ${database.name}_migrations ORDER BY name`)
        .all()
        .map((row) => (row as { name: string }).name);
      manifest.databases.push({ name: database.name, file, bytes: statSync(target).size, sha256: sha256Of(target), migrations });
    } finally {
      db.close();
    }
  }
  writeFileSync(join(dir, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

/** Checks a backup against its manifest; returns the manifest. */
export function verifyBackup(dir: string): Manifest {
  const path = join(dir, MANIFEST);
  if (!existsSync(path)) throw new Error(`${dir} holds no ${MANIFEST}: not a complete backup`);
  const manifest = JSON.parse(readFileSync(path, 'utf8')) as Manifest;
  if (manifest.format !== 'gerbang-backup/1') throw new Error(`${path}: unknown format ${String(manifest.format)}`);
  for (const entry of manifest.databases) {
    const file = join(dir, basename(entry.file));
    if (!existsSync(file)) throw new Error(`${entry.name}: ${file} is missing`);
    if (statSync(file).size !== entry.bytes || sha256Of(file) !== entry.sha256)
      throw new Error(`${entry.name}: ${file} does not match the manifest`);
  }
  return manifest;
}

/**
 * Puts a verified backup in place of the databases, which must not be in use: a `-wal` file beside
 * one means a service has it open (or crashed with it open), and a database that exists is only
 * replaced with `force`. Each file is copied beside its target and renamed over it.
 */
export async function restore(dir: string, databases: readonly DatabaseToSave[], options: { force?: boolean } = {}): Promise<Manifest> {
  const manifest = verifyBackup(dir);
  const plan = databases.map((database) => {
    const entry = manifest.databases.find((saved) => saved.name === database.name);
    if (!entry) throw new Error(`${database.name}: not in this backup`);
    return { database, entry, target: sqlitePath(database) };
  });
  for (const { database, target } of plan) {
    if (existsSync(`${target}-wal`) && !options.force) {
      throw new Error(
        `${database.name}: ${target}-wal exists, so the database is open (or was not closed cleanly): stop the service first`,
      );
    }
    if (existsSync(target) && !options.force)
      throw new Error(`${database.name}: ${target} exists: restore into an empty data directory, or pass --force`);
  }
  for (const { entry, target } of plan) {
    mkdirSync(dirname(target), { recursive: true });
    const staged = `${target}.restoring`;
    copyFileSync(join(dir, basename(entry.file)), staged);
    rmSync(`${target}-wal`, { force: true });
    rmSync(`${target}-shm`, { force: true });
    renameSync(staged, target);
    const db = await openSqlite(target, true);
    try {
      const check = db.pragma('quick_check', { simple: true });
      if (check !== 'ok') throw new Error(`${target}: quick_check says ${String(check)}`);
    } finally {
      db.close();
    }
  }
  return manifest;
}
