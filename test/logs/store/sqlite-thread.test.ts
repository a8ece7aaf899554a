import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { openDatabase, type Database } from '../../../src/shared/db/database.js';
import { sqliteThreadDialect, writerThreadOf } from '../../../src/logs/modules/store/sqlite/threads/write-thread.js';
import { SqliteReadPool } from '../../../src/logs/modules/store/sqlite/threads/read-pool.js';
import { QueryTimeoutError } from '../../../src/logs/modules/store/read-budget.js';
import { nodeArgs } from '../../helpers/node-args.js';

describe('SQLite on its own thread', () => {
  let dir: string;
  let database: Database<any>;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gerbang-sqlite-thread-'));
    database = await openDatabase<any>(`sqlite:${join(dir, 'thread.sqlite')}`, { sqliteThread: sqliteThreadDialect });
    await sql`CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT UNIQUE, data BLOB)`.execute(database.db);
  });
  after(async () => {
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a transaction SQLite itself ended (RAISE(ROLLBACK), a full disk) fails with its own error, not with "cannot rollback"', async () => {
    await sql`CREATE TABLE guarded (v TEXT)`.execute(database.db);
    await sql`CREATE TRIGGER refuse BEFORE INSERT ON guarded WHEN NEW.v = 'bad' BEGIN SELECT RAISE(ROLLBACK, 'refused by the trigger'); END`.execute(
      database.db,
    );
    await assert.rejects(
      database.db.transaction().execute(async (trx) => {
        await trx.insertInto('guarded').values({ v: 'good' }).execute();
        await trx.insertInto('guarded').values({ v: 'bad' }).execute();
      }),
      /refused by the trigger/,
    );
    const { rows } = await sql<{ n: number }>`SELECT count(*) AS n FROM guarded`.execute(database.db);
    assert.equal(rows[0]!.n, 0, 'the whole transaction was rolled back');
    await database.db.transaction().execute((trx) => trx.insertInto('guarded').values({ v: 'next' }).execute());
    assert.equal((await sql<{ n: number }>`SELECT count(*) AS n FROM guarded`.execute(database.db)).rows[0]!.n, 1, 'the writer is free');
  });

  it('answers rows, counts, inserted ids and BLOBs as the event-loop driver does; errors keep their SQLite code', async () => {
    const inserted = await database.db
      .insertInto('t')
      .values({ name: 'a', data: Buffer.from([0, 1, 255]) })
      .executeTakeFirstOrThrow();
    assert.equal(inserted.insertId, 1n);
    assert.equal(inserted.numInsertedOrUpdatedRows, 1n);
    const row = await database.db.selectFrom('t').selectAll().where('name', '=', 'a').executeTakeFirstOrThrow();
    assert.deepEqual([...(row.data as Uint8Array)], [0, 1, 255]);
    await assert.rejects(database.db.insertInto('t').values({ name: 'a' }).execute(), { code: 'SQLITE_CONSTRAINT_UNIQUE' });
    const updated = await database.db.updateTable('t').set({ name: 'b' }).where('name', '=', 'a').executeTakeFirstOrThrow();
    assert.equal(updated.numUpdatedRows, 1n);
  });

  it('runs transactions one at a time; a failed one leaves nothing behind', async () => {
    const add = (name: string) =>
      database.db.transaction().execute(async (trx) => {
        const { count } = await trx
          .selectFrom('t')
          .select((eb) => eb.fn.countAll<number>().as('count'))
          .executeTakeFirstOrThrow();
        await trx
          .insertInto('t')
          .values({ name: `${name}${count}` })
          .execute();
      });
    await Promise.all([add('x'), add('x'), add('x')]);
    const names = (await database.db.selectFrom('t').select('name').where('name', 'like', 'x%').execute()).map((row) => row.name);
    assert.equal(new Set(names).size, 3, `each transaction saw the one before it: ${names.join(', ')}`);
    await assert.rejects(
      database.db.transaction().execute(async (trx) => {
        await trx.insertInto('t').values({ name: 'kept?' }).execute();
        await trx.insertInto('t').values({ name: 'b' }).execute();
      }),
      { code: 'SQLITE_CONSTRAINT_UNIQUE' },
    );
    assert.equal(await database.db.selectFrom('t').select('name').where('name', '=', 'kept?').executeTakeFirst(), undefined);
  });

  it('answers a read while a transaction is open on the writer, with what was committed before it', async () => {
    let reading!: () => void;
    const readDone = new Promise<void>((resolve) => (reading = resolve));
    let inside!: () => void;
    const transactionStarted = new Promise<void>((resolve) => (inside = resolve));
    const writing = database.db.transaction().execute(async (trx) => {
      await trx.insertInto('t').values({ name: 'uncommitted' }).execute();
      inside();
      await readDone;
    });
    await transactionStarted;
    const seen = await database.db.selectFrom('t').select('name').where('name', '=', 'uncommitted').execute();
    reading();
    await writing;
    assert.deepEqual(seen, []);
    assert.equal((await database.db.selectFrom('t').select('name').where('name', '=', 'uncommitted').execute()).length, 1);
  });

  it('rolls back a transaction its caller left open, and the writer serves the next caller', async () => {
    await database.db.connection().execute(async (connection) => {
      await sql`BEGIN IMMEDIATE`.execute(connection);
      await connection.insertInto('t').values({ name: 'left open' }).execute();
    });
    await database.db.insertInto('t').values({ name: 'next caller' }).execute();
    const names = (await database.db.selectFrom('t').select('name').where('name', 'in', ['left open', 'next caller']).execute()).map(
      (row) => row.name,
    );
    assert.deepEqual(names, ['next caller']);
  });

  it('keeps the event loop turning while a statement waits for the lock', async () => {
    // Another connection holds the write lock: the thread's insert waits (busy_timeout) without
    // stopping this thread, which is what releases the lock. On the event loop the insert would
    // block everything here for the whole busy timeout, then fail.
    const other = new SQLite(join(dir, 'thread.sqlite'));
    try {
      other.exec('BEGIN IMMEDIATE');
      let inserted = false;
      const insert = database.db
        .insertInto('t')
        .values({ name: 'after the lock' })
        .execute()
        .then(() => (inserted = true));
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(inserted, false);
      other.exec('COMMIT');
      await insert;
      assert.ok(await database.db.selectFrom('t').select('id').where('name', '=', 'after the lock').executeTakeFirst());
    } finally {
      other.close();
    }
  });

  it('lets the process end when nothing waits, and not before a waiting statement is answered', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [...nodeArgs(join(import.meta.dirname, 'fixtures/sqlite-thread/unclosed.ts')), join(dir, 'unclosed.sqlite')],
      { timeout: 30_000 },
    );
    assert.equal(stdout, '42\n');
  });

  it('keeps the process alive until a close ends, with a request still unanswered or a thread still starting', async () => {
    // In a process of its own: nothing else keeps that event loop alive, as in a test file whose
    // last step closes the database, or a service whose listening socket has closed.
    const closeWhile = async (when: 'running' | 'starting') => {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [...nodeArgs(join(import.meta.dirname, 'fixtures/sqlite-thread/close-while-awaited.ts')), join(dir, `${when}.sqlite`), when],
        { timeout: 30_000 },
      );
      return stdout;
    };
    assert.equal(await closeWhile('running'), 'answered [{"answer":42}]\nclosed\n', 'the request sent before the close is answered');
    assert.equal(await closeWhile('starting'), 'closed\n');
  });

  it('reports a thread that stops other than by closing, and fails the statements after it; a close is no stop', async () => {
    const stopping = await openDatabase<any>(`sqlite:${join(dir, 'stopping.sqlite')}`, { sqliteThread: sqliteThreadDialect });
    const closing = await openDatabase<any>(`sqlite:${join(dir, 'closing.sqlite')}`, { sqliteThread: sqliteThreadDialect });
    const thread = writerThreadOf(stopping.db)!;
    const stops: string[] = [];
    thread.onStop((reason) => stops.push(reason.message));
    writerThreadOf(closing.db)!.onStop((reason) => stops.push(`closed: ${reason.message}`));
    for (const { db } of [stopping, closing]) await sql`CREATE TABLE t (id INTEGER)`.execute(db); // the thread starts with the first statement
    await thread.check();
    assert.equal(thread.stopped(), false);
    await thread.stopAbruptly();
    assert.equal(thread.stopped(), true);
    assert.deepEqual(stops, ['the SQLite thread stopped']);
    thread.onStop((reason) => stops.push(`late: ${reason.message}`));
    assert.deepEqual(stops, ['the SQLite thread stopped', 'late: the SQLite thread stopped'], 'a listener after the stop is told at once');
    await assert.rejects(thread.check(), /the SQLite thread stopped/);
    await assert.rejects(sql`CREATE TABLE later (id INTEGER)`.execute(stopping.db), /the SQLite thread stopped/);
    await stopping.close();
    await closing.close();
    assert.equal(stops.length, 2, 'closing a database is not a stop');
    const memory = await openDatabase<any>('sqlite::memory:');
    assert.equal(writerThreadOf(memory.db), undefined, 'no thread, nothing to watch');
    await memory.close();
  });
});

/** A statement of about a second: longer than any wait below, short enough to wait for. */
const SECOND_LONG = 'WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 5000000) SELECT count(*) AS n FROM c';

describe('the SQLite read pool while stopped statements finish', () => {
  let dir: string;
  let pool: SqliteReadPool;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'gerbang-read-pool-'));
    new SQLite(join(dir, 'reads.sqlite')).close();
    pool = new SqliteReadPool({ path: join(dir, 'reads.sqlite'), size: 1 });
  });
  after(async () => {
    await pool.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A statement stopped at its deadline: its thread finishes it (once in SQLite, it cannot be stopped), and no worker replaces it until then. */
  async function stopRunningStatement(): Promise<void> {
    await pool.run('SELECT 1', []); // a warm worker: the statement starts at once
    // 100 ms: long enough for the thread to be inside the statement (had it not started, the thread
    // would end at once and the assertions below would hold all the same).
    await assert.rejects(pool.run(SECOND_LONG, [], Date.now() + 100), QueryTimeoutError);
  }

  it('answers a read without a deadline that waits for a stopped statement to end', async () => {
    await stopRunningStatement();
    // The one thread allowed to finish a statement is busy: no new worker starts until it ends, and
    // this read, with no deadline, has only that end to wait for.
    assert.deepEqual(pool.threads, { live: 0, dying: 1, queued: 0 });
    assert.deepEqual(await pool.run('SELECT 2 AS n', []), [{ n: 2 }]);
  });

  it('closes once every thread has ended, those finishing a stopped statement included', async () => {
    await stopRunningStatement();
    await pool.close();
    assert.deepEqual(pool.threads, { live: 0, dying: 0, queued: 0 });
    await assert.rejects(pool.run('SELECT 1', []), /the read pool is closed/);
  });
});
