import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from '../../src/shared/db/database.js';

describe('SQLite connection', () => {
  it('reuses statements by their text: after a stream left half-way, and with what changed since', async () => {
    const database = await openDatabase<any>('sqlite::memory:');
    try {
      await sql`CREATE TABLE t (n INTEGER)`.execute(database.db);
      await sql`INSERT INTO t (n) VALUES (1), (2), (3)`.execute(database.db);
      const query = database.db.selectFrom('t').select('n').orderBy('n');
      for await (const row of query.stream()) {
        assert.equal(row.n, 1);
        break;
      }
      assert.deepEqual(
        (await query.execute()).map((row) => row.n),
        [1, 2, 3],
      );
      await sql`INSERT INTO t (n) VALUES (4)`.execute(database.db);
      assert.deepEqual(
        (await query.execute()).map((row) => row.n),
        [1, 2, 3, 4],
      );
      await sql`DROP TABLE t`.execute(database.db);
      await assert.rejects(query.execute(), /no such table/);
    } finally {
      await database.close();
    }
  });
});
