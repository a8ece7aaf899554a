/**
 * A client that leaves stops the store reads made for it (client-gone.ts, read-budget.ts): a closed
 * browser tab frees the read workers instead of holding them until the read's budget.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Fastify from 'fastify';
import { sql } from 'kysely';
import pg from 'pg';
import { openDatabase, type Database } from '../../../src/shared/db/database.js';
import { migrateToLatest } from '../../../src/shared/db/migrator.js';
import { stopReadsWhenClientLeaves } from '../../../src/logs/http/client-gone.js';
import { createLogStore, openStoreReads, sqliteThreadDialect, type StoreReads } from '../../../src/logs/modules/store/index.js';
import { logsMigrations } from '../../../src/logs/db/migrations/index.js';
import { cancellingPool } from '../../../src/logs/modules/store/postgres/postgres-reads.js';
import { currentClient, QueryAbortedError, whileClientWaits, type WaitingClient } from '../../../src/logs/modules/store/read-budget.js';
import { createTestDatabase, describeOnPostgres, type TestDatabase } from '../../helpers/databases.js';
import { eventually } from '../../helpers/eventually.js';
import { T0 } from '../store/helpers.js';

/** A client that leaves when the test says so. */
function testClient(): { client: WaitingClient; leave: () => void } {
  let gone = false;
  const listeners = new Set<() => void>();
  return {
    client: {
      get gone() {
        return gone;
      },
      onGone(listener) {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    },
    leave: () => {
      gone = true;
      for (const listener of [...listeners]) listener();
    },
  };
}

/** A statement that runs for seconds on any machine here. */
const SLOW = 'WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 200000000) SELECT count(*) AS n FROM c';

describe('reads of a client that left', () => {
  let dir: string;
  let database: Database<any>;
  let reads: StoreReads;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gerbang-client-gone-'));
    const url = `sqlite:${join(dir, 'logs.sqlite')}`;
    database = await openDatabase<any>(url, { sqliteThread: sqliteThreadDialect });
    await migrateToLatest(database.db, logsMigrations, 'logs');
    reads = await openStoreReads(url, database.db, { timeoutMs: 60_000, workers: 1 });
  });
  after(async () => {
    await reads.close();
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the read pool stops a running statement when its client leaves, and serves the next one', async () => {
    const pool = reads.pool!;
    await pool.run('SELECT 1', []); // a warm worker, so the slow statement runs at once
    const { client, leave } = testClient();
    const slow = pool.run(SLOW, [], Number.POSITIVE_INFINITY, client);
    leave();
    await assert.rejects(slow, QueryAbortedError);
    assert.deepEqual(await pool.run('SELECT 2 AS n', []), [{ n: 2 }]);
    await eventually(async () => assert.deepEqual(pool.threads, { live: 1, dying: 0, queued: 0 }));
  });

  test('a store read for a client that left starts no statement; one for a client that waits answers', async () => {
    const store = createLogStore(database.db, 'sqlite', { reads: reads.db });
    await store.append('acme', [{ timestamp: T0, message: 'here' }]);
    const request = { tenantId: 'acme', from: T0, to: T0 + 1000, page: 1, limit: 10 };
    const gone = testClient();
    gone.leave();
    await assert.rejects(
      whileClientWaits(gone.client, () => store.search(request)),
      (error: Error) => error instanceof QueryAbortedError && error.name === 'QueryAbortedError',
    );
    const found = await whileClientWaits(testClient().client, () => store.search(request));
    assert.deepEqual(
      found.entries.map((entry) => entry.message),
      ['here'],
    );
  });

  test('a route handler learns that its client closed the connection before the response', { timeout: 10_000 }, async () => {
    const app = Fastify();
    app.addHook('onRoute', stopReadsWhenClientLeaves);
    let started!: () => void;
    const handlerStarted = new Promise<void>((resolve) => (started = resolve));
    const sawAbort = new Promise<boolean>((resolve) => {
      app.get('/slow', async () => {
        const client = currentClient()!;
        assert.equal(client.gone, false);
        const left = new Promise<void>((done) => client.onGone(done));
        started();
        await left;
        resolve(client.gone);
        return { late: true };
      });
    });
    let answered = false;
    app.get('/fast', async () => {
      answered = true;
      return { gone: currentClient()!.gone };
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const { port } = app.server.address() as { port: number };
      const socket = connect({ host: '127.0.0.1', port });
      socket.on('error', () => {});
      socket.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n');
      await handlerStarted;
      socket.destroy();
      assert.equal(await sawAbort, true);
      // A client that waits for its answer is not aborted by the close after it.
      const response = await app.inject({ method: 'GET', url: '/fast' });
      assert.equal(answered, true);
      assert.deepEqual(response.json(), { gone: false });
    } finally {
      await app.close();
    }
  });
});

describeOnPostgres('reads of a client that left [postgres]', () => {
  let database: TestDatabase;
  let reads: StoreReads;
  let admin: pg.Client;

  before(async () => {
    database = await createTestDatabase('postgres');
    reads = await openStoreReads(database.url, undefined as never, { timeoutMs: 60_000, workers: 1 });
    admin = new pg.Client(database.url);
    await admin.connect();
  });
  after(async () => {
    await admin.end();
    await reads.close();
    await database.drop();
  });

  const sleeping = async () =>
    (await admin.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE '%pg_sleep(%' AND pid <> pg_backend_pid()`))
      .rows[0].n;

  test(
    'the server stops a running statement when its client leaves, and the one connection serves the next read',
    { timeout: 20_000 },
    async () => {
      const { client, leave } = testClient();
      const slow = whileClientWaits(client, () => sql`SELECT pg_sleep(30)`.execute(reads.db));
      await eventually(async () => assert.equal(await sleeping(), 1));
      leave();
      await assert.rejects(slow, QueryAbortedError);
      await eventually(async () => assert.equal(await sleeping(), 0));
      // The pool's one connection was closed rather than reused; a new one answers.
      const { rows } = await whileClientWaits(testClient().client, () => sql<{ n: number }>`SELECT 2 AS n`.execute(reads.db));
      assert.deepEqual(rows, [{ n: 2 }]);
    },
  );

  test(
    'when the cancel cannot reach the server, the statement ends as it would and its connection is not reused',
    { timeout: 20_000 },
    async () => {
      const pool = new pg.Pool({ connectionString: database.url, max: 1 });
      const clients = cancellingPool(pool, async () => {
        throw new Error('too many connections');
      });
      try {
        const pidOf = async () => {
          const client = await clients.connect();
          try {
            return (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid', [])).rows[0]!.pid;
          } finally {
            client.release();
          }
        };
        const first = await pidOf();
        const { client, leave } = testClient();
        const connection = await clients.connect();
        const slow = whileClientWaits(client, () => connection.query<{ n: number }>('SELECT 1 AS n FROM pg_sleep(0.3)', []));
        leave();
        assert.deepEqual((await slow).rows, [{ n: 1 }]);
        connection.release();
        assert.notEqual(await pidOf(), first, 'a connection a cancel was sent for is closed, not reused');
      } finally {
        await pool.end();
      }
    },
  );

  test('a statement whose client left while it waited for the busy pool is not started', { timeout: 20_000 }, async () => {
    const first = whileClientWaits(testClient().client, () => sql<{ n: number }>`SELECT 1 AS n FROM pg_sleep(0.5)`.execute(reads.db));
    await eventually(async () => assert.equal(await sleeping(), 1));
    const { client, leave } = testClient();
    const queued = whileClientWaits(client, () => sql`SELECT pg_sleep(30)`.execute(reads.db));
    leave();
    assert.deepEqual((await first).rows, [{ n: 1 }]);
    await assert.rejects(queued, QueryAbortedError);
  });
});
