import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { openDatabase, type Database } from '../../src/shared/db/database.js';
import { openStoreReads, type StoreReads } from '../../src/logs/modules/store/index.js';
import { createTestDatabase, describeOnPostgres, type TestDatabase } from '../helpers/databases.js';
import { eventually } from '../helpers/eventually.js';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { POSTGRES_CONNECT_TIMEOUT_MS } from '../../src/shared/db/postgres-pool.js';
import { storageProblemOf } from '../../src/shared/db/storage-problems.js';

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

/**
 * A server that accepts the connection and never answers (a host behind a firewall that drops
 * packets, a hung server): a statement fails after POSTGRES_CONNECT_TIMEOUT_MS as the database
 * being unavailable, instead of waiting for TCP's own timeout. Needs no PostgreSQL: the server here
 * is a silent TCP listener on loopback.
 */
// Without the connect timeout the statement would wait until this test's own limit.
test(
  'a database that never answers fails a statement after the connect timeout, as unavailable',
  { timeout: 6 * POSTGRES_CONNECT_TIMEOUT_MS },
  async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    const database = await openDatabase<any>(`postgres://gerbang:secret@127.0.0.1:${port}/gerbang`);
    try {
      const failure = await sql`SELECT 1`.execute(database.db).then(
        () => assert.fail('a silent server answered'),
        (error: unknown) => error,
      );
      assert.equal(storageProblemOf(failure), 'unavailable', String(failure));
      assert.match(String(failure), /timeout/, 'the connect timeout ended it');
      assert.ok(sockets.size >= 1, 'the connection reached the silent server');
    } finally {
      for (const socket of sockets) socket.destroy();
      await database.close();
      await new Promise((resolve) => silent.close(resolve));
    }
  },
);

test("pg's words for a server gone away, and refused connections to every address of a name, are the database being unavailable", () => {
  for (const message of [
    'Connection terminated unexpectedly',
    'Client has encountered a connection error and is not queryable',
    'Client was closed and is not queryable',
    'timeout exceeded when trying to connect',
  ]) {
    assert.equal(storageProblemOf(new Error(message)), 'unavailable', message);
  }
  const refused = (address: string) => Object.assign(new Error(`connect ECONNREFUSED ${address}`), { code: 'ECONNREFUSED' });
  assert.equal(storageProblemOf(new AggregateError([refused('::1:5432'), refused('127.0.0.1:5432')])), 'unavailable');
  assert.equal(
    storageProblemOf(new AggregateError([refused('::1:5432'), new Error('a bug')])),
    undefined,
    'not when one is something else',
  );
  assert.equal(storageProblemOf(new Error('syntax error at or near "SELEC"')), undefined);
  // What a hot standby answers a search that WAL replay needed to cancel: retry later, not a bug.
  const conflict = Object.assign(new Error('canceling statement due to conflict with recovery'), { code: '40001' });
  assert.equal(storageProblemOf(conflict), 'unavailable');
});
