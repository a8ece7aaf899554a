import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { openDatabase, type Database } from '../../src/shared/db/database.js';
import { copyLine, copyRows } from '../../src/shared/db/postgres-copy.js';
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
