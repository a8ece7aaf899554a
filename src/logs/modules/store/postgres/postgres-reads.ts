import type pg from 'pg';
import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import { currentClient, QueryAbortedError } from '../read-budget.js';

/** Cancels the statement a server process runs (`pg_cancel_backend`, on a connection of its own). */
export type CancelBackend = (processId: number) => Promise<void>;

/** A CancelBackend that connects as `config` does: a full read pool need not hold a connection free for it. */
export function cancelBackendAs(config: pg.ClientConfig): CancelBackend {
  return async (processId) => {
    const { default: pg } = await import('pg');
    const client = new pg.Client(config);
    client.on('error', () => undefined);
    await client.connect();
    try {
      await client.query('SELECT pg_cancel_backend($1)', [processId]);
    } finally {
      await client.end();
    }
  };
}

/**
 * The read pool's connections as Kysely uses them, stopping the statement of a client that left
 * (read-budget.ts), as the SQLite read pool stops its worker: a closed browser tab frees the
 * connection instead of holding it until statement_timeout. The statement ends with
 * QueryAbortedError, and its connection is closed instead of going back to the pool: a cancel
 * arriving after the statement had ended could otherwise stop the next read on that connection.
 */
export function cancellingPool(pool: pg.Pool, cancel: CancelBackend): PostgresPool {
  return {
    connect: async () => new CancellingClient(await pool.connect(), cancel),
    end: () => pool.end(),
  };
}

class CancellingClient implements PostgresPoolClient {
  /** Set once a cancel was sent for a statement of this connection. */
  #cancelled: Promise<void> | null = null;

  constructor(
    private readonly client: pg.PoolClient,
    private readonly cancel: CancelBackend,
  ) {}

  // Never a cursor: the reads' dialect is given none, so Kysely does not stream through it.
  query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
  query(cursor: never): never;
  query<R>(sql: string, parameters?: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> {
    return this.#run(sql, parameters ?? []);
  }

  async #run<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> {
    const waiting = currentClient();
    // A client that left while this statement waited for a connection (the pool was busy): not started.
    if (waiting?.gone) throw new QueryAbortedError();
    const stopListening = waiting?.onGone(() => {
      const processId = (this.client as unknown as { processID: number }).processID;
      this.#cancelled ??= this.cancel(processId).catch(() => undefined);
    });
    try {
      return (await this.client.query(sql, parameters as unknown[])) as unknown as PostgresQueryResult<R>;
    } catch (error) {
      if (this.#cancelled !== null && (error as { code?: unknown }).code === '57014') throw new QueryAbortedError();
      throw error;
    } finally {
      stopListening?.();
    }
  }

  release(): void {
    if (this.#cancelled === null) this.client.release();
    else void this.#cancelled.then(() => this.client.release(true));
  }
}
