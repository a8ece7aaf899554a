import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { openDatabase, type Database } from '../../src/shared/db/database.js';
import { copyLine, copyRows, enableCopy } from '../../src/shared/db/postgres-copy.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';

/** COPY through Kysely (src/shared/db/postgres-copy.ts): where it runs, and where it must refuse. */
describe('COPY rows [postgres]', () => {
  let server: TestDatabase;
  let database: Database<any>;
  const statement = 'COPY copied (name, n) FROM STDIN';
  const count = async (db: Kysely<any>) => Number((await sql<{ n: string }>`SELECT count(*) AS n FROM copied`.execute(db)).rows[0]!.n);

  before(async () => {
    server = await createTestDatabase('postgres');
    database = await openDatabase<any>(server.url);
    await sql`CREATE TABLE copied (name text, n bigint)`.execute(database.db);
  });
  after(async () => {
    await database.close();
    await server.drop();
  });

  test('runs inside the transaction it is given: rolled back with it, kept with its commit', async () => {
    const lines = [copyLine(['a\tb', 1]), copyLine([null, 2])];
    await assert.rejects(
      database.db.transaction().execute(async (trx) => {
        await copyRows(trx, statement, lines);
        assert.equal(await count(trx), 2, 'the transaction sees its rows');
        throw new Error('roll back');
      }),
      /roll back/,
    );
    assert.equal(await count(database.db), 0);
    await database.db.transaction().execute((trx) => copyRows(trx, statement, lines));
    const { rows } = await sql<{ name: string | null }>`SELECT name FROM copied ORDER BY n`.execute(database.db);
    assert.deepEqual(
      rows.map((row) => row.name),
      ['a\tb', null],
    );
  });

  /** One connection: what runs after a failure runs on the connection the failed COPY used. */
  async function withOneConnection(work: (single: Kysely<any>) => Promise<void>): Promise<void> {
    const pool = new pg.Pool({ connectionString: server.url, max: 1 });
    enableCopy(pool);
    const single = new Kysely<any>({ dialect: new PostgresDialect({ pool }) });
    try {
      await work(single);
    } finally {
      await single.destroy();
    }
  }

  test('rows made while the COPY runs arrive whole; a maker that fails half-way stores none and leaves the connection usable', async () => {
    await withOneConnection(async (single) => {
      const made: string[] = [];
      async function* texts(fail: boolean): AsyncGenerator<string> {
        for (let n = 0; n < 3; n += 1) {
          await new Promise<void>((resolve) => setImmediate(resolve));
          if (fail && n === 2) throw new Error('the maker failed');
          const text = copyLine([`streamed ${n}`, 100 + n]) + copyLine([`streamed ${n}b`, 110 + n]);
          made.push(text);
          yield text;
        }
      }
      const before = await count(single);
      await assert.rejects(
        single.transaction().execute((trx) => copyRows(trx, statement, texts(true))),
        /the maker failed/,
      );
      assert.equal(made.length, 2, 'two texts were sent before the failure');
      assert.equal(await count(single), before, 'nothing of the failed COPY is kept');
      await single.transaction().execute((trx) => copyRows(trx, statement, texts(false)));
      const { rows } = await sql<{ name: string }>`SELECT name FROM copied WHERE n >= 100 ORDER BY n`.execute(single);
      assert.deepEqual(
        rows.map((row) => row.name),
        ['streamed 0', 'streamed 1', 'streamed 2', 'streamed 0b', 'streamed 1b', 'streamed 2b'],
      );
    });
  });

  test('a row the server refuses while more are still being made fails the COPY, stores none, and leaves the connection usable', async () => {
    await withOneConnection(async (single) => {
      async function* texts(): AsyncGenerator<string> {
        for (let n = 0; n < 200; n += 1) {
          await new Promise<void>((resolve) => setImmediate(resolve));
          yield copyLine([`refused ${n}`, n === 1 ? 'not a number' : 1000 + n]);
        }
      }
      const before = await count(single);
      await assert.rejects(
        single.transaction().execute((trx) => copyRows(trx, statement, texts())),
        { code: '22P02' }, // invalid input syntax for type bigint
      );
      assert.equal(await count(single), before, 'nothing of the refused COPY is kept');
      await single.transaction().execute((trx) => copyRows(trx, statement, [copyLine(['after the refusal', 2000])]));
      assert.equal(await count(single), before + 1);
    });
  });

  test('a connection not made by openDatabase refuses the rows loudly instead of dropping them', async () => {
    const plain = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: server.url, max: 1 }) }) });
    try {
      const before = await count(plain);
      await assert.rejects(copyRows(plain, statement, [copyLine(['lost?', 3])]), { code: '42601' }); // syntax error
      assert.equal(await count(plain), before);
    } finally {
      await plain.destroy();
    }
  });

  test('SQLite has no COPY: refused before anything is sent', async () => {
    const sqlite = await openDatabase<any>('sqlite::memory:');
    try {
      await assert.rejects(copyRows(sqlite.db, statement, [copyLine(['x', 1])]), /PostgreSQL only/);
    } finally {
      await sqlite.close();
    }
  });
});
