import { SqliteAdapter, sql, type Kysely, type Migration } from 'kysely';
import { dict } from '../dict.js';
import { SQLITE_BUSY_TIMEOUT_MS } from './database.js';

/**
 * The services' migrations (docs/operations.md, "Upgrade and rollback"). Each service keeps its own
 * history table (`<table>_migrations`, name and time, as Kysely's migrator kept it) so that the
 * gateway and the logs service can share one PostgreSQL database.
 *
 * Each migration runs in a transaction of its own together with its line in the history: a stop
 * leaves it whole or not begun. A long data rewrite is a ResumableMigration instead: chunks, each
 * committed with its position in `<table>_migration_progress`, so that the next start continues
 * where the last one stopped. Several processes starting together do not run anything twice: on
 * PostgreSQL they take an advisory lock in turn; on SQLite every transaction is IMMEDIATE (the
 * file's write lock) and looks at the history and the position again inside it.
 *
 * One order: a service's migrations run in name order (`NNNN_words`, each number once), and a
 * database's history must be the first of them, however many. A history with a gap (a migration
 * recorded while one before it is not) is refused rather than filled in, so that every database
 * applies the same migrations in the same order. Names an older version recorded are renamed in
 * the history first (MigrationSequence.renamed: the upgrade path from the numbering by ranges).
 */

/** A long data rewrite, done in committed chunks and resumed after a stop. */
export interface ResumableMigration {
  /**
   * Schema work before the first chunk, in the transaction that saves the first position; returns
   * how many rows there are to do (for progress). Runs once, however often the migration is resumed.
   */
  start: (db: Kysely<any>) => Promise<number>;
  /**
   * The next chunk after `position` (null at first), in a transaction of its own that also saves the
   * position it returns; null when nothing is left. Must not depend on anything but the database and
   * `position`: it may run in another process than the one before.
   */
  chunk: (db: Kysely<any>, position: ChunkPosition | null) => Promise<{ position: ChunkPosition; rows: number } | null>;
  /** Schema work after the last chunk, in the transaction that records the migration. */
  finish: (db: Kysely<any>) => Promise<void>;
}

/** Where a resumable migration is: any JSON value (stored as text). */
export type ChunkPosition = string | number | boolean | null | ChunkPosition[] | { [key: string]: ChunkPosition };

export type AnyMigration = Migration | ResumableMigration;

/** What a running migration has done: rows of a resumable one (0 of 0 for the others). */
export interface MigrationProgress {
  migration: string;
  done: number;
  total: number;
}

/** Where migrations report (the service's logger). */
export interface MigrationLog {
  info(fields: object, message: string): void;
}

export interface MigrateOptions {
  log?: MigrationLog | undefined;
  /** Called as each migration starts and after each chunk (the service's `/readyz` shows it). */
  onProgress?: ((progress: MigrationProgress) => void) | undefined;
  /** Least time between two progress lines of one migration (default 10 s). */
  progressIntervalMs?: number | undefined;
  now?: () => number;
}

export const DEFAULT_PROGRESS_INTERVAL_MS = 10_000;

/** A service's migrations: what runs, in which order, and the names older versions recorded. */
export interface MigrationSequence {
  /** Every migration by name, in the order they run (names and numbers strictly increasing). */
  readonly migrations: Readonly<Record<string, AnyMigration>>;
  /** Old name -> current name: applied to the history before anything runs. */
  readonly renamed: ReadonlyMap<string, string>;
}

const MIGRATION_NAME = /^(\d{4})_[a-z0-9]+(?:_[a-z0-9]+)*$/;

/**
 * The sequence of `migrations` (declared in the order they run) and the names an older version
 * recorded for some of them. Throws when two share a number, a name is out of order or malformed,
 * or a rename is ambiguous: a mistake in the code, found as the module loads.
 */
export function migrationSequence(
  migrations: Record<string, AnyMigration>,
  renamed: Readonly<Record<string, string>> = dict(),
): MigrationSequence {
  const names = Object.keys(migrations);
  names.forEach((name, index) => {
    if (!MIGRATION_NAME.test(name)) throw new Error(`migration name ${name} is not NNNN_words (four digits, lower-case words)`);
    const before = names[index - 1];
    if (before !== undefined && before.slice(0, 4) >= name.slice(0, 4)) {
      throw new Error(`migration ${name} comes after ${before}: each number once, in the order they run`);
    }
  });
  const renames = new Map<string, string>();
  const targets = new Set<string>();
  for (const [old, current] of Object.entries(renamed)) {
    if (!Object.hasOwn(migrations, current)) throw new Error(`old migration name ${old} is renamed to ${current}, which does not exist`);
    if (Object.hasOwn(migrations, old)) throw new Error(`old migration name ${old} is also a current name`);
    if (targets.has(current)) throw new Error(`two old migration names are renamed to ${current}`);
    targets.add(current);
    renames.set(old, current);
  }
  return { migrations, renamed: renames };
}

/** The first migrations of `sequence`, up to and with `last`: a database of an older version (tests, benchmarks). */
export function migrationsUpTo(sequence: MigrationSequence, last: string): MigrationSequence {
  const names = Object.keys(sequence.migrations);
  const end = names.indexOf(last);
  if (end < 0) throw new Error(`no migration ${last}`);
  const first = dict(names.slice(0, end + 1).map((name) => [name, sequence.migrations[name]!] as const));
  return { migrations: first, renamed: sequence.renamed };
}

/** Kysely's migrator's lock: a process of the version before this one waits for this one, too. */
const POSTGRES_LOCK_ID = sql.lit('3853314791062309107');

export function isResumable(migration: AnyMigration): migration is ResumableMigration {
  return 'chunk' in migration;
}

const isSqlite = (db: Kysely<any>) => db.getExecutor().adapter instanceof SqliteAdapter;

/** Names of the migrations that have not run yet, in the order they would run. */
export async function pendingMigrations(db: Kysely<any>, sequence: MigrationSequence, table: string): Promise<string[]> {
  const executed = new Set((await executedMigrations(db, table)).map((name) => sequence.renamed.get(name) ?? name));
  return Object.keys(sequence.migrations).filter((name) => !executed.has(name));
}

/**
 * Runs every pending migration, in order; returns the names it ran. Throws on failure, and on a
 * history that is not the first migrations of `sequence`, so the caller exits non-zero.
 */
export async function migrateToLatest(
  db: Kysely<any>,
  sequence: MigrationSequence,
  table: string,
  options: MigrateOptions = {},
): Promise<string[]> {
  return db.connection().execute(async (connection) => {
    const sqlite = isSqlite(connection);
    if (!sqlite) await sql`SELECT pg_advisory_lock(${POSTGRES_LOCK_ID})`.execute(connection);
    // SQLite waits for another connection's write lock inside the call, blocking its thread: two
    // services of one process (tests) would wait on each other. So no wait there, and an async retry.
    else await sql`PRAGMA busy_timeout = 0`.execute(connection);
    try {
      await whenUnlocked(sqlite, () => createHistoryTables(connection, table));
      const run = new MigrationRun(connection, table, sqlite, options);
      return await run.all(sequence);
    } finally {
      if (!sqlite) await sql`SELECT pg_advisory_unlock(${POSTGRES_LOCK_ID})`.execute(connection);
      else await sql`PRAGMA busy_timeout = ${sql.raw(String(SQLITE_BUSY_TIMEOUT_MS))}`.execute(connection);
    }
  });
}

/** How long a migration waits for another connection's write lock on SQLite before it fails. */
const SQLITE_LOCK_WAIT_MS = 60_000;

/** Runs `step`, again after a short pause while SQLite says another connection holds the write lock. */
async function whenUnlocked<T>(sqlite: boolean, step: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + SQLITE_LOCK_WAIT_MS;
  for (let pause = 5; ; pause = Math.min(pause * 2, 200)) {
    try {
      return await step();
    } catch (error) {
      const busy = sqlite && /SQLITE_BUSY|database is locked/.test(`${(error as { code?: string }).code} ${(error as Error).message}`);
      if (!busy || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}

async function createHistoryTables(db: Kysely<any>, table: string): Promise<void> {
  // The history as Kysely's migrator made it, so that every existing database goes on from its own.
  await sql`CREATE TABLE IF NOT EXISTS ${sql.table(`${table}_migrations`)} (
    name varchar(255) NOT NULL PRIMARY KEY,
    timestamp varchar(255) NOT NULL
  )`.execute(db);
  await sql`CREATE TABLE IF NOT EXISTS ${sql.table(`${table}_migration_progress`)} (
    name varchar(255) NOT NULL PRIMARY KEY,
    position text,
    done bigint NOT NULL,
    total bigint NOT NULL,
    started_at varchar(255) NOT NULL
  )`.execute(db);
}

async function executedMigrations(db: Kysely<any>, table: string): Promise<string[]> {
  try {
    const { rows } = await sql<{ name: string }>`SELECT name FROM ${sql.table(`${table}_migrations`)}`.execute(db);
    return rows.map((row) => row.name);
  } catch (error) {
    // No history yet: a new database.
    if (/no such table|does not exist/.test((error as Error).message)) return [];
    throw error;
  }
}

class MigrationRun {
  readonly #history;
  readonly #progress;
  readonly #now: () => number;
  readonly #intervalMs: number;

  constructor(
    private readonly db: Kysely<any>,
    private readonly table: string,
    private readonly sqlite: boolean,
    private readonly options: MigrateOptions,
  ) {
    this.#history = sql.table(`${table}_migrations`);
    this.#progress = sql.table(`${table}_migration_progress`);
    this.#now = options.now ?? Date.now;
    this.#intervalMs = options.progressIntervalMs ?? DEFAULT_PROGRESS_INTERVAL_MS;
  }

  async all({ migrations, renamed }: MigrationSequence): Promise<string[]> {
    let executed = await executedMigrations(this.db, this.table);
    if (executed.some((name) => renamed.has(name))) executed = await this.#transaction(() => this.#rename(renamed));
    const unknown = executed.filter((name) => !Object.hasOwn(migrations, name));
    if (unknown.length > 0) {
      throw new Error(
        `the database holds migrations this version does not know (${unknown.join(', ')}): a newer version upgraded it; run that version or restore a backup taken before`,
      );
    }
    const names = Object.keys(migrations);
    const done = new Set(executed);
    const gap = names.findIndex((name) => !done.has(name));
    const outOfOrder = gap < 0 ? undefined : names.slice(gap).find((name) => done.has(name));
    if (outOfOrder !== undefined) {
      throw new Error(
        `the ${this.table}_migrations history records ${outOfOrder} but not ${names[gap]}, which runs before it: migrations run in one order only (docs/operations.md, "Upgrade and rollback")`,
      );
    }
    const applied: string[] = [];
    const started = this.#now();
    for (const name of names.slice(gap < 0 ? names.length : gap)) {
      const migration = migrations[name]!;
      try {
        const ran = isResumable(migration) ? await this.#resumable(name, migration) : await this.#plain(name, migration);
        if (ran) applied.push(name);
      } catch (error) {
        const cause = error instanceof Error ? error.message : String(error);
        throw Object.assign(new Error(`migration ${name} failed: ${cause}`), { cause: error });
      }
    }
    if (applied.length > 0) this.options.log?.info({ applied: applied.length, ms: this.#now() - started }, 'migrations done');
    return applied;
  }

  /**
   * The history, and the position of a rewrite the older version left unfinished, under the
   * current names; returns the history. In one transaction: a stop leaves every name old or every
   * name new.
   */
  async #rename(renamed: ReadonlyMap<string, string>): Promise<string[]> {
    for (const [old, current] of renamed) {
      await sql`UPDATE ${this.#history} SET name = ${current} WHERE name = ${old}`.execute(this.db);
      await sql`UPDATE ${this.#progress} SET name = ${current} WHERE name = ${old}`.execute(this.db);
    }
    this.options.log?.info({ history: `${this.table}_migrations` }, "migration history renamed to this version's names");
    return executedMigrations(this.db, this.table);
  }

  /** False when another process ran it meanwhile. */
  async #plain(name: string, migration: Migration): Promise<boolean> {
    const started = this.#now();
    this.options.onProgress?.({ migration: name, done: 0, total: 0 });
    const ran = await this.#transaction(async () => {
      if (await this.#recorded(name)) return false;
      await migration.up(this.db);
      await this.#record(name);
      return true;
    });
    if (ran) this.options.log?.info({ migration: name, ms: this.#now() - started }, 'migration applied');
    return ran;
  }

  async #resumable(name: string, migration: ResumableMigration): Promise<boolean> {
    const started = this.#now();
    const begun = await this.#transaction(async () => {
      if (await this.#recorded(name)) return undefined;
      const saved = await this.#saved(name);
      if (saved) return { ...saved, resumed: true };
      const total = await migration.start(this.db);
      await sql`INSERT INTO ${this.#progress} (name, position, done, total, started_at)
        VALUES (${name}, ${null}, ${0}, ${total}, ${new Date(this.#now()).toISOString()})`.execute(this.db);
      return { done: 0, total, resumed: false };
    });
    if (begun === undefined) return false;
    const { resumed, total } = begun;
    let { done } = begun;
    if (resumed || total > 0) this.options.log?.info({ migration: name, done, total }, resumed ? 'migration resumed' : 'migration started');
    this.options.onProgress?.({ migration: name, done, total });
    let loggedAt = this.#now();
    for (;;) {
      const next = await this.#transaction(async () => {
        const saved = await this.#saved(name);
        if (!saved) return null;
        const chunk = await migration.chunk(this.db, saved.position);
        if (chunk === null) return null;
        const doneNow = saved.done + chunk.rows;
        await sql`UPDATE ${this.#progress} SET position = ${JSON.stringify(chunk.position)}, done = ${doneNow}
          WHERE name = ${name}`.execute(this.db);
        return doneNow;
      });
      if (next === null) break;
      done = next;
      this.options.onProgress?.({ migration: name, done, total });
      if (this.#now() - loggedAt >= this.#intervalMs) {
        loggedAt = this.#now();
        this.options.log?.info({ migration: name, done, total }, 'migration progress');
      }
    }
    const ran = await this.#transaction(async () => {
      if (await this.#recorded(name)) return false;
      await migration.finish(this.db);
      await sql`DELETE FROM ${this.#progress} WHERE name = ${name}`.execute(this.db);
      await this.#record(name);
      return true;
    });
    if (ran) this.options.log?.info({ migration: name, done, total, ms: this.#now() - started }, 'migration applied');
    return ran;
  }

  async #saved(name: string): Promise<{ position: ChunkPosition | null; done: number; total: number } | undefined> {
    const { rows } = await sql<{ position: string | null; done: number | string; total: number | string }>`SELECT position, done, total
      FROM ${this.#progress} WHERE name = ${name}`.execute(this.db);
    const row = rows[0];
    if (!row) return undefined;
    return {
      position: row.position === null ? null : (JSON.parse(row.position) as ChunkPosition),
      done: Number(row.done),
      total: Number(row.total),
    };
  }

  async #recorded(name: string): Promise<boolean> {
    const { rows } = await sql`SELECT 1 AS found FROM ${this.#history} WHERE name = ${name}`.execute(this.db);
    return rows.length > 0;
  }

  async #record(name: string): Promise<void> {
    await sql`INSERT INTO ${this.#history} (name, timestamp) VALUES (${name}, ${new Date(this.#now()).toISOString()})`.execute(this.db);
  }

  /** `work` in one transaction: SQLite's IMMEDIATE takes the file's write lock before anything is read. */
  async #transaction<T>(work: () => Promise<T>): Promise<T> {
    await whenUnlocked(this.sqlite, () => sql.raw(this.sqlite ? 'BEGIN IMMEDIATE' : 'BEGIN').execute(this.db));
    try {
      const result = await work();
      await sql`COMMIT`.execute(this.db);
      return result;
    } catch (error) {
      await sql`ROLLBACK`.execute(this.db).catch(() => undefined);
      throw error;
    }
  }
}
