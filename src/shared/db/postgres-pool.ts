import type pg from 'pg';

/**
 * How long a new connection may take to be ready. pg's default is to wait forever: a server whose
 * host drops packets (rather than refusing) held every request until TCP's own timeout, minutes later.
 * Past it the statement fails as the database being unavailable (503, `/readyz` reason `database`).
 */
export const POSTGRES_CONNECT_TIMEOUT_MS = 10_000;

/**
 * A pg pool that outlives what its server does to its connections (test/shared/postgres-pool.test.ts).
 * - One the server ends while it is idle is dropped by the pool, which emits 'error' (a warning here).
 * - One it ends while it is checked out (a restart, a failover, an operator's `pg_terminate_backend`)
 *   fails the query in flight, whose caller reports it. pg also emits 'error' on that client, and the
 *   pool listens only while a client is idle: without a listener here that emit crashed the process.
 * - The server says why first (an error of severity FATAL), and the socket closes a moment later; a
 *   client released in between went back to the pool and failed the next query. Ended at once, it is
 *   dropped at its release instead.
 */
export async function openPostgresPool(config: pg.PoolConfig): Promise<pg.Pool> {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionTimeoutMillis: POSTGRES_CONNECT_TIMEOUT_MS, ...config });
  pool.on('error', (error) => process.emitWarning(`PostgreSQL idle connection closed: ${error.message}`));
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
    (client as unknown as pg.Client).connection.on('errorMessage', (message: { severity?: string }) => {
      if (message.severity === 'FATAL') client.end().catch(() => undefined);
    });
  });
  return pool;
}
