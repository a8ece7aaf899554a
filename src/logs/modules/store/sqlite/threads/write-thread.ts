import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import {
  CompiledQuery,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Kysely,
  type Driver,
  type QueryResult,
} from 'kysely';
import { isPacked, packValues, UNPACK_ROWS_SOURCE, type PackedValues } from './packed-values.js';

/**
 * SQLite writes on a thread of their own (docs/log-store.md, "The SQLite thread"). better-sqlite3 is
 * synchronous: on the event loop a 5,000-entry log batch stopped it for a quarter of a second
 * (measured), and with it every request of the service. Here one worker thread owns the connection
 * that every write goes through; the event loop posts statements and keeps a connection of its own
 * for plain reads.
 *
 * The worker's code is plain JavaScript, so it starts in about 50 ms without a TypeScript loader
 * (under tsx a worker of a .ts file takes 300–400 ms, and the tests open many databases).
 * Values cross the thread boundary by structured clone: BLOBs come back as Uint8Array, not Buffer.
 * If the thread ever stopped (it runs nothing but better-sqlite3 calls, each in a try), every later
 * write fails with "the SQLite thread stopped" until the service restarts; `/healthz` and `/readyz`
 * then answer 503 (writerThreadOf), so that an orchestrator restarts it.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const SQLite = require(workerData.driver);
const database = new SQLite(workerData.path);
for (const pragma of workerData.pragmas) database.pragma(pragma);
// Statements reused by their text (the stores issue a few dozen shapes over and over).
const statements = new Map();
function prepare(text) {
  let statement = statements.get(text);
  if (statement === undefined) {
    statement = database.prepare(text);
    if (statements.size >= 256) statements.clear();
    statements.set(text, statement);
  }
  return statement;
}
// A Uint8Array is what a Buffer parameter becomes in the clone; better-sqlite3 binds only Buffers.
const bindable = (value) => (value instanceof Uint8Array && !Buffer.isBuffer(value) ? Buffer.from(value.buffer, value.byteOffset, value.byteLength) : value);
function execute(sql, parameters) {
  const statement = prepare(sql);
  const values = parameters.some((value) => value instanceof Uint8Array) ? parameters.map(bindable) : parameters;
  if (statement.reader) return { rows: statement.all(values) };
  const { changes, lastInsertRowid } = statement.run(values);
  return { changes, lastInsertRowid };
}
// Rows of width values each (packed-values.ts), one run of the statement a row.
function executeRows(sql, packed, width) {
  const statement = prepare(sql);
  unpackRows(packed, width, (values) => statement.run(packed.others.length > 0 ? values.map(bindable) : values));
}
${UNPACK_ROWS_SOURCE}
parentPort.on('message', (message) => {
  if (message === 'close') {
    database.close();
    parentPort.close();
    return;
  }
  const { id, sql, parameters, list } = message;
  try {
    // A list: its statements in order, up to the first that fails (the caller's transaction then rolls
    // back); the reply holds the rows of the last.
    const run = (statement) => (statement.width ? (executeRows(statement.sql, statement.parameters, statement.width), {}) : execute(statement.sql, statement.parameters));
    const result = list ? { rows: list.map(run).at(-1).rows ?? [] } : execute(sql, parameters);
    parentPort.postMessage({ id, ...result, inTransaction: database.inTransaction });
  } catch (error) {
    const { name, message, code } = error ?? {};
    parentPort.postMessage({ id, error: { name, message: message ?? String(error), code }, inTransaction: database.inTransaction });
  }
});
parentPort.postMessage('ready');
`;

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
 * `values`. On the SQLite thread the statement is run once a row (its binding is the cheapest way in:
 * docs/benchmarks.md, "Issue 15: smaller SQLite rows"); elsewhere `statements` says the same rows.
 */
export interface RowsStatement {
  sql: string;
  width: number;
  /** The rows' values, or the same packed (packed-values.ts: what the thread is sent). */
  values: readonly unknown[] | PackedValues;
  statements: () => CompiledQuery[];
}

const packedOf = (values: readonly unknown[] | PackedValues): PackedValues => (isPacked(values) ? values : packValues(values));

/**
 * Runs statements in order on `db` (inside the caller's transaction): in one message on the SQLite
 * thread, else one by one. Resolves to the rows of the last (none for a RowsStatement).
 */
export async function runInOrder(db: Kysely<any>, statements: readonly (CompiledQuery | RowsStatement)[]): Promise<unknown[]> {
  if (statements.length === 0) return [];
  if (db.getExecutor().adapter instanceof SqliteThreadAdapter) {
    const { rows } = await db.executeQuery(
      CompiledQuery.raw(
        STATEMENT_LIST,
        statements.map((statement) =>
          'width' in statement
            ? { sql: statement.sql, parameters: packedOf(statement.values), width: statement.width }
            : { sql: statement.sql, parameters: statement.parameters },
        ),
      ),
    );
    return rows;
  }
  let rows: unknown[] = [];
  for (const statement of statements) {
    if ('width' in statement) {
      for (const query of statement.statements()) await db.executeQuery(query);
      rows = [];
    } else ({ rows } = await db.executeQuery(statement));
  }
  return rows;
}

interface Reply {
  id: number;
  /** Whether the connection is inside a transaction after the statement (it began one, or one is still open). */
  inTransaction: boolean;
  rows?: unknown[];
  changes?: number;
  lastInsertRowid?: number | bigint;
  error?: { name?: string; message: string; code?: string };
}

interface Pending {
  resolve: (reply: Reply) => void;
  reject: (error: Error) => void;
}

/** The worker and the statements sent to it that wait for their answer. */
class SqliteThread {
  readonly #worker: Worker;
  readonly #pending = new Map<number, Pending>();
  readonly ready: Promise<void>;
  #nextId = 1;
  /** Why the thread stopped; every later statement fails with it. */
  #stopped: Error | undefined;
  #closing = false;

  constructor(
    path: string,
    pragmas: readonly string[],
    /** Called once if the thread stops other than by `close`. */
    private readonly onStop: (reason: Error) => void,
  ) {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    this.#worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver, path, pragmas } });
    this.ready = new Promise((resolve, reject) => {
      const onMessage = (reply: Reply | 'ready') => {
        if (reply !== 'ready') return this.#settle(reply);
        // From now on only a waiting statement keeps the process alive (ref'd while one is pending).
        if (this.#pending.size === 0) this.#worker.unref();
        resolve();
      };
      this.#worker.on('message', onMessage);
      this.#worker.once('error', (thrown: unknown) => {
        // An error thrown while the thread starts may arrive as a plain object ({ code: 'SQLITE_CANTOPEN' }).
        const code = (thrown as { code?: string } | null)?.code;
        reject(
          this.#stop(
            thrown instanceof Error ? thrown : Object.assign(new Error(`the SQLite thread failed: ${code ?? String(thrown)}`), { code }),
          ),
        );
      });
      this.#worker.once('exit', () => reject(this.#stop(new Error('the SQLite thread stopped'))));
    });
    // Whoever awaits `ready` sees a failed start; nobody else should crash the process over it.
    this.ready.catch(() => undefined);
  }

  /**
   * Runs a statement on the thread, or a list of them (STATEMENT_LIST); its SQLite error, if any, is
   * in the reply, with the transaction state.
   */
  run(sql: string, parameters: readonly unknown[]): Promise<Reply> {
    if (this.#stopped) return Promise.reject(this.#stopped);
    const id = this.#nextId++;
    return new Promise<Reply>((resolve, reject) => {
      if (this.#pending.size === 0) this.#worker.ref();
      this.#pending.set(id, { resolve, reject });
      this.#worker.postMessage(sql === STATEMENT_LIST ? { id, list: parameters } : { id, sql, parameters });
    });
  }

  get stopped(): boolean {
    return this.#stopped !== undefined;
  }

  async terminate(): Promise<void> {
    await this.#worker.terminate();
  }

  async close(): Promise<void> {
    if (this.#stopped) return;
    this.#closing = true;
    const exited = new Promise((resolve) => this.#worker.once('exit', resolve));
    this.#worker.ref();
    this.#worker.postMessage('close');
    await exited;
  }

  #settle(reply: Reply): void {
    const pending = this.#pending.get(reply.id);
    if (!pending) return;
    this.#pending.delete(reply.id);
    if (this.#pending.size === 0) this.#worker.unref();
    pending.resolve(reply);
  }

  /** Fails every waiting and later statement; returns the first reason. */
  #stop(reason: Error): Error {
    if (this.#stopped) return this.#stopped;
    this.#stopped = reason;
    for (const pending of this.#pending.values()) pending.reject(reason);
    this.#pending.clear();
    if (!this.#closing) this.onStop(reason);
    return reason;
  }
}

/** Kysely's answer to a statement the thread ran. */
function resultOf<R>(reply: Reply): QueryResult<R> {
  if (reply.error) throw Object.assign(new Error(reply.error.message), { name: reply.error.name ?? 'Error', code: reply.error.code });
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

/** What the event loop's own connection offers: statements prepared (and cached) by their text. */
export interface StatementSource {
  prepare(sql: string): { reader: boolean; readonly: boolean; all(parameters: readonly unknown[]): unknown[] };
  close(): void;
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
    private readonly thread: SqliteThread,
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
      reply = await this.thread.run(sql, parameters);
    } finally {
      if (!reply?.inTransaction) this.#letGo();
    }
    return resultOf<R>(reply);
  }

  /** A statement that leaves the writer holding a transaction (a bug) is rolled back when the caller lets go. */
  async release(): Promise<void> {
    if (!this.#holding) return;
    await this.thread.run('ROLLBACK', []).catch(() => undefined);
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
  #thread: SqliteThread | undefined;

  constructor(
    private readonly reads: StatementSource,
    private readonly path: string,
    private readonly pragmas: readonly string[],
  ) {}

  async init(): Promise<void> {
    this.#thread = new SqliteThread(this.path, this.pragmas, (reason) => {
      this.#stopReason = reason;
      for (const listener of this.#stopListeners.splice(0)) listener(reason);
    });
    await this.#thread.ready;
  }

  stopped(): boolean {
    return this.#thread?.stopped ?? false;
  }

  async check(): Promise<void> {
    if (!this.#thread) throw new Error('the SQLite thread has not started');
    resultOf(await this.#thread.run('SELECT 1', []));
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
export function sqliteThreadDialect(reads: StatementSource, path: string, pragmas: readonly string[]): Dialect {
  const driver = new SqliteThreadDriver(reads, path, pragmas);
  return {
    createAdapter: () => new SqliteThreadAdapter(driver),
    createDriver: () => driver,
    createQueryCompiler: () => new SqliteQueryCompiler(),
    createIntrospector: (db) => new SqliteIntrospector(db),
  };
}
