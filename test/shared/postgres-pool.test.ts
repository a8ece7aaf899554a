import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { openDatabase, type Database } from '../../src/shared/db/database.js';
import { openStoreReads, type StoreReads } from '../../src/logs/modules/store/index.js';
import { createTestDatabase, describeOnPostgres, type TestDatabase } from '../helpers/databases.js';
import { eventually } from '../helpers/eventually.js';

/**
 * The server ends a connection in the middle of a query (a restart, a failover, an operator's
 * pg_terminate_backend): the query fails, the process lives on (pg emits 'error' on the client,
 * which crashed it before postgres-pool.ts), and the pool's next query runs on a new connection.
 */
describeOnPostgres('PostgreSQL connections ended by the server mid-query [postgres]', () => {
  let server: TestDatabase;
  let database: Database<any>;
  let reads: StoreReads;
  before(async () => {
    server = await createTestDatabase('postgres');
    database = await openDatabase<any>(server.url);
    reads = await openStoreReads(server.url, database.db, { timeoutMs: 60_000, workers: 2 });
  });
  after(async () => {
    await reads.close();
    await database.close();
    await server.drop();
  });

  for (const [name, pool] of [
    ['the main pool', () => database.db],
    ['the store reads pool', () => reads.db],
  ] as const) {
    test(`${name}: the query fails, the next ones run`, async () => {
      const db: Kysely<any> = pool();
      const marker = `terminate me ${name}`;
      const sleeping = sql`SELECT pg_sleep(60), ${marker}::text`.execute(db);
      sleeping.catch(() => undefined);
      const pid = await eventually(async () => {
        const { rows } = await sql<{ pid: number }>`SELECT pid FROM pg_stat_activity
          WHERE wait_event = 'PgSleep' AND query LIKE 'SELECT pg_sleep(60)%' AND pid <> pg_backend_pid()`.execute(database.db);
        assert.equal(rows.length, 1);
        return rows[0]!.pid;
      });
      await sql`SELECT pg_terminate_backend(${pid}::int)`.execute(database.db);
      await assert.rejects(sleeping);
      const answers = await Promise.all(Array.from({ length: 4 }, (_, n) => sql<{ n: number }>`SELECT ${n}::int AS n`.execute(db)));
      assert.deepEqual(
        answers.map(({ rows }) => rows[0]!.n),
        [0, 1, 2, 3],
      );
    });
  }
});
