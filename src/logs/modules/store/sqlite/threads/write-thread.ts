import { PATTERN_FUNCTION, patternMatch } from '../../../query/pattern-match-source.js';
import {
  CompiledQuery,
  SqliteAdapter,
  SqliteDialect,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Kysely,
  type Driver,
  type QueryResult,
  type SqliteDatabase,
} from 'kysely';
import type { StatementSource } from '../../../../../shared/db/database.js';
import { isPacked, packValues, type PackedValues } from './packed-values.js';
import { replyError, type IdsStep, type ListedStatement, type Reply } from './protocol.js';
import { SqliteWorker } from './sqlite-worker.js';

/**
 * SQLite writes on a thread of their own (docs/log-store.md, "The SQLite thread"). better-sqlite3 is
 * synchronous: on the event loop a large log batch stops it, and with it every request of the service
 * (docs/performance-notes.md, "SQLite store"). Here one worker thread (sqlite-worker.ts)
 * owns the connection that every write goes through; the event loop posts statements and keeps a
 * connection of its own for plain reads.
 *
 * Values cross the thread boundary by structured clone: BLOBs come back as Uint8Array, not Buffer.
 * If the thread ever stopped, every later write fails with "the SQLite thread stopped" until the
 * service restarts; `/healthz` and `/readyz` then answer 503 (writerThreadOf), so that an
 * orchestrator restarts it.
 */

/**
 * The text of a query whose parameters are statements ({ sql, parameters }) to run in order in one
 * message (runInOrder): a batch's inserts then cost one hop between threads, not one each, and
 * the event loop is free meanwhile. No SQL: only this dialect takes it.
 */
const STATEMENT_LIST = '-- gerbang: statement list';

/** The adapter of sqliteThreadDialect, by which runInOrder knows that a list can go in one message. */
class SqliteThreadAdapter extends SqliteAdapter {
  constructor(readonly driver: SqliteThreadDriver) {
    super();
  }
}

/** What the service's probes (and tests) may ask of the SQLite thread of a database. */
export interface WriterThread {
  /** Whether the thread has stopped: permanent until the process restarts (`/healthz` then fails). */
  stopped(): boolean;
  /** Throws unless the thread answers a statement, without taking the writer (`/readyz`). */
  check(): Promise<void>;
  /** Calls `listener` once if the thread stops (or has stopped) other than by closing the database. */
  onStop(listener: (reason: Error) => void): void;
  /** Stops the thread as a crash would (tests: what a stopped writer looks like). */
  stopAbruptly(): Promise<void>;
}

/** The SQLite thread of `db`; undefined when its writes do not run on one (PostgreSQL, the plain driver). */
export function writerThreadOf(db: Kysely<any>): WriterThread | undefined {
  const { adapter } = db.getExecutor();
  return adapter instanceof SqliteThreadAdapter ? adapter.driver : undefined;
}

/**
 * Rows that one single-row statement (`sql`) inserts, `width` values each, one after the other in
 * `values`. On the SQLite thread the statement is run once a row (its binding is the cheapest way
 * in); elsewhere `statements` says the same rows.
 */
export interface RowsStatement {
  sql: string;
  width: number;
  /** The rows' values, or the same packed (packed-values.ts: what the thread is sent). */
  values: readonly unknown[] | PackedValues;
  statements: () => CompiledQuery[];
}

const packedOf = (values: readonly unknown[] | PackedValues): PackedValues => (isPacked(values) ? values : packValues(values));

/** A step of a list that only the SQLite thread runs: a batch's ids (protocol.ts, IdsStep). */
export interface IdsStatement {
  ids: IdsStep;
}

/**
 * Runs statements in order on `db` (inside the caller's transaction): in one message on the SQLite
 * thread, else one by one. Resolves to the rows of the last (none for a RowsStatement).
 */
export async function runInOrder(
  db: Kysely<any>,
  statements: readonly (CompiledQuery | RowsStatement | IdsStatement)[],
): Promise<unknown[]> {
  if (statements.length === 0) return [];
  if (writerThreadOf(db)) {
    const { rows } = await db.executeQuery(
      CompiledQuery.raw(
        STATEMENT_LIST,
        statements.map((statement): ListedStatement =>
          'ids' in statement
            ? statement
            : 'width' in statement
              ? { sql: statement.sql, parameters: packedOf(statement.values), width: statement.width }
              : { sql: statement.sql, parameters: statement.parameters },
        ),
      ),
    );
    return rows;
  }
  let rows: unknown[] = [];
  for (const statement of statements) {
    if ('ids' in statement) throw new Error('runInOrder: only the SQLite thread gives ids');
    if ('width' in statement) {
      for (const query of statement.statements()) await db.executeQuery(query);
      rows = [];
    } else ({ rows } = await db.executeQuery(statement));
  }
  return rows;
}

/** Kysely's answer to a statement the thread ran. */
function resultOf<R>(reply: Reply): QueryResult<R> {
  if (reply.error) throw replyError(reply.error);
  if (reply.rows) return { rows: reply.rows as R[] };
  return {
    numAffectedRows: reply.changes === undefined ? undefined : BigInt(reply.changes),
    insertId: reply.lastInsertRowid === undefined ? undefined : BigInt(reply.lastInsertRowid),
    rows: [],
  };
}

/** The writer: one holder at a time, from a statement that opens a transaction until the one that ends it. */
class WriterLock {
  #held: Promise<void> | undefined;
  #release: (() => void) | undefined;

  async acquire(): Promise<void> {
    while (this.#held) await this.#held;
    this.#held = new Promise((resolve) => (this.#release = resolve));
  }

  release(): void {
    const release = this.#release;
    this.#held = this.#release = undefined;
    release?.();
  }
}

/**
 * One caller's use of the database (a query, or a transaction from BEGIN to COMMIT). A statement that
 * only reads, outside a transaction, runs on the event loop's connection: small and never waiting
 * (WAL readers do not wait for the writer), and it sees every write whose promise has resolved. Every
 * other statement runs on the thread, holding the writer from the statement that opens a transaction
 * (Kysely's or the store's own `BEGIN IMMEDIATE`) to the one that ends it, as the thread reports.
 */
class SqliteThreadConnection implements DatabaseConnection {
  #holding = false;

  constructor(
    private readonly reads: StatementSource,
    private readonly thread: SqliteWorker,
    private readonly writer: WriterLock,
  ) {}

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const { sql, parameters } = compiled;
    // SQLite ended the transaction itself (a trigger's RAISE(ROLLBACK), a full disk, an I/O error):
    // the caller's ROLLBACK has nothing left to end, and the statement's own error is the one to report.
    if (!this.#holding && /^\s*rollback\s*;?\s*$/i.test(sql)) return { rows: [] };
    if (!this.#holding) {
      const statement = sql === STATEMENT_LIST ? undefined : this.#readOnly(sql);
      if (statement) return { rows: statement.all(parameters) as R[] };
      await this.writer.acquire();
      this.#holding = true;
    }
    let reply: Reply | undefined;
    try {
      reply = await this.thread.run(sql === STATEMENT_LIST ? { list: parameters as readonly ListedStatement[] } : { sql, parameters });
    } finally {
      if (!reply?.inTransaction) this.#letGo();
    }
    return resultOf<R>(reply);
  }

  /** A statement that leaves the writer holding a transaction (a bug) is rolled back when the caller lets go. */
  async release(): Promise<void> {
    if (!this.#holding) return;
    await this.thread.run({ sql: 'ROLLBACK', parameters: [] }).catch(() => undefined);
    this.#letGo();
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('the SQLite thread does not stream: page the query instead');
  }

  #readOnly(sql: string) {
    try {
      const statement = this.reads.prepare(sql);
      return statement.reader && statement.readonly ? statement : undefined;
    } catch {
      // Not preparable here (a table of an uncommitted transaction, say): the thread answers it.
      return undefined;
    }
  }

  #letGo(): void {
    if (!this.#holding) return;
    this.#holding = false;
    this.writer.release();
  }
}

class SqliteThreadDriver implements Driver, WriterThread {
  readonly #writer = new WriterLock();
  readonly #stopListeners: Array<(reason: Error) => void> = [];
  #stopReason: Error | undefined;
  #thread: SqliteWorker | undefined;

  constructor(
    private readonly reads: StatementSource,
    private readonly path: string,
    private readonly pragmas: readonly string[],
  ) {}

  async init(): Promise<void> {
    this.#thread = new SqliteWorker({
      name: 'the SQLite thread',
      path: this.path,
      pragmas: this.pragmas,
      readonly: false,
      onStop: (reason) => {
        this.#stopReason = reason;
        for (const listener of this.#stopListeners.splice(0)) listener(reason);
      },
    });
    await this.#thread.ready;
  }

  stopped(): boolean {
    return this.#thread?.stopped ?? false;
  }

  async check(): Promise<void> {
    if (!this.#thread) throw new Error('the SQLite thread has not started');
    resultOf(await this.#thread.run({ sql: 'SELECT 1', parameters: [] }));
  }

  onStop(listener: (reason: Error) => void): void {
    // A listener that comes after the stop (the service wires it once it listens) is told at once.
    if (this.#stopReason) listener(this.#stopReason);
    else this.#stopListeners.push(listener);
  }

  async stopAbruptly(): Promise<void> {
    await this.#thread?.terminate();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    return new SqliteThreadConnection(this.reads, this.#thread!, this.#writer);
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    await (connection as SqliteThreadConnection).release();
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin'));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async destroy(): Promise<void> {
    await this.#thread?.close();
    this.reads.close();
  }
}

/**
 * A Kysely dialect for a SQLite file whose writes run on a worker thread's connection and whose
 * plain reads run on `reads`, the event loop's connection to the same file.
 */
export function sqliteThreadDialect(reads: StatementSource & SqliteDatabase, path: string, pragmas: readonly string[]): Dialect {
  reads.function(PATTERN_FUNCTION, { deterministic: true }, patternMatch);
  // A memory database is one connection's: it cannot have a second one on a thread.
  if (path === ':memory:') return new SqliteDialect({ database: reads });
  const driver = new SqliteThreadDriver(reads, path, pragmas);
  return {
    createAdapter: () => new SqliteThreadAdapter(driver),
    createDriver: () => driver,
    createQueryCompiler: () => new SqliteQueryCompiler(),
    createIntrospector: (db) => new SqliteIntrospector(db),
  };
}
