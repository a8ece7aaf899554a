import {
  Kysely,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type QueryResult,
} from 'kysely';
import { currentClient, currentDeadline } from '../../read-budget.js';
import type { SqliteReadPool } from './read-pool.js';

/** Statements go to the pool with the deadline of the read they belong to, and its client. */
class ReadPoolConnection implements DatabaseConnection {
  constructor(private readonly pool: SqliteReadPool) {}

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const rows = await this.pool.run(compiled.sql, compiled.parameters, currentDeadline(), currentClient());
    return { rows: rows as R[] };
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('the read pool does not stream');
  }
}

class ReadPoolDriver implements Driver {
  readonly #connection: ReadPoolConnection;

  constructor(pool: SqliteReadPool) {
    this.#connection = new ReadPoolConnection(pool);
  }

  async init(): Promise<void> {}
  // Connections are stateless (every statement is its own read): no mutex, statements run in parallel.
  async acquireConnection(): Promise<DatabaseConnection> {
    return this.#connection;
  }
  async beginTransaction(): Promise<void> {
    throw new Error('the read pool runs no transactions');
  }
  async commitTransaction(): Promise<void> {}
  async rollbackTransaction(): Promise<void> {}
  async releaseConnection(): Promise<void> {}
  // The pool belongs to whoever opened it (closed with the service).
  async destroy(): Promise<void> {}
}

/** A Kysely over the read pool: the log store's SQLite reads, off the event loop. */
export function readPoolKysely(pool: SqliteReadPool): Kysely<any> {
  const dialect: Dialect = {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new ReadPoolDriver(pool),
    createQueryCompiler: () => new SqliteQueryCompiler(),
    createIntrospector: (db) => new SqliteIntrospector(db),
  };
  return new Kysely<any>({ dialect });
}
