/**
 * 0011_time_ordered_facets on a store written before it: entries re-stored under time-ordered ids
 * (SQLite) or re-faceted in place (PostgreSQL, then given postings by 0015_postings), and every read answers as for
 * entries written after it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { openDatabase, type Database } from '../../../src/shared/db/database.js';
import { migrateToLatest, migrationsUpTo } from '../../../src/shared/db/migrator.js';
import { createLogStore, type LogStore } from '../../../src/logs/modules/store/index.js';
import { logsMigrations } from '../../../src/logs/db/migrations/index.js';
import { tsvectorText } from '../../../src/logs/db/migrations/support/postgres-refacet.js';
import { ftsBody } from '../../../src/logs/modules/store/indexed-text.js';
import { tokenize } from '../../../src/logs/modules/query/tokenize.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../../helpers/databases.js';
import { HOUR, MINUTE, T0 } from './helpers.js';
import { searchCondition } from '../../../src/logs/modules/query/condition.js';

/** Rows as the store wrote them before 0011_time_ordered_facets: sequential ids, written out of time order. */
const OLD_ROWS = [
  {
    id: 1,
    tenant: 'acme',
    ts: T0 + 3 * MINUTE,
    level: 'error',
    host: 'h1',
    message: 'Disk full on /dev/sda1',
    attributes: { status: 500 },
  },
  { id: 2, tenant: 'acme', ts: T0 + 1 * MINUTE, level: 'info', host: 'h2', message: 'User alice logged in', attributes: { status: 200 } },
  { id: 3, tenant: 'other', ts: T0 + 2 * MINUTE, level: 'error', host: 'x9', message: 'Disk full elsewhere', attributes: { status: 500 } },
  { id: 4, tenant: 'acme', ts: T0 + 2 * MINUTE, level: 'warn', host: 'h1', message: 'Café timeout', attributes: { status: 503 } },
];

const BEFORE_TIME_ORDER = migrationsUpTo(logsMigrations, '0010_api_keys');

for (const dialect of DIALECTS) {
  describe(`log store upgrade to time-ordered ids and facets [${dialect}]`, () => {
    let testDb: TestDatabase;
    let database: Database<any>;
    let store: LogStore;

    before(async () => {
      testDb = await createTestDatabase(dialect);
      database = await openDatabase<any>(testDb.url);
      const { db } = database;
      await migrateToLatest(db, BEFORE_TIME_ORDER, 'logs');
      if (dialect === 'sqlite') {
        for (const row of OLD_ROWS) {
          await sql`INSERT INTO log_entries (id, tenant_id, ts, level, host, message, attributes)
            VALUES (${row.id}, ${row.tenant}, ${row.ts}, ${row.level}, ${row.host}, ${row.message}, ${JSON.stringify(row.attributes)})`.execute(
            db,
          );
          await sql`INSERT INTO log_entries_fts (rowid, body) VALUES (${row.id}, ${ftsBody(row.message)})`.execute(db);
        }
      } else {
        await sql`CREATE TABLE log_entries_p2026112000 PARTITION OF log_entries FOR VALUES FROM (${sql.lit(T0)}) TO (${sql.lit(T0 + HOUR)})`.execute(
          db,
        );
        for (const row of OLD_ROWS) {
          await sql`INSERT INTO log_entries (tenant_id, ts, level, host, message, attributes, search)
            VALUES (${row.tenant}, ${row.ts}::bigint, ${row.level}, ${row.host}, ${row.message}, ${JSON.stringify(row.attributes)}::jsonb,
              ${tsvectorText(tokenize(row.message))}::tsvector)`.execute(db);
        }
      }
      for (const row of OLD_ROWS) {
        await sql`INSERT INTO log_rollups (tenant_id, minute, level, service, count) VALUES (${row.tenant}, ${row.ts}, ${row.level}, '', 1)`.execute(
          db,
        );
      }
      await migrateToLatest(db, logsMigrations, 'logs');
      store = createLogStore(db, database.dialect);
    });
    after(async () => {
      await database.close();
      await testDb.drop();
    });

    const find = async (query: string) =>
      (
        await store.search({ tenantId: 'acme', condition: searchCondition(query), from: T0, to: T0 + HOUR - 1, page: 1, limit: 10 })
      ).entries.map((entry) => entry.message);

    test('words, facets and time order answer for the old entries', async () => {
      assert.deepEqual(await find(''), ['Disk full on /dev/sda1', 'Café timeout', 'User alice logged in']);
      assert.deepEqual(await find('disk'), ['Disk full on /dev/sda1']);
      assert.deepEqual(await find('cafe'), ['Café timeout']);
      assert.deepEqual(await find('caf*'), ['Café timeout']);
      assert.deepEqual(await find('"disk full" OR ti*'), ['Disk full on /dev/sda1', 'Café timeout']);
      assert.deepEqual(await find('level:error'), ['Disk full on /dev/sda1']);
      assert.deepEqual(await find('status:500 OR status:503'), ['Disk full on /dev/sda1', 'Café timeout']);
      assert.deepEqual(await find('host:h1 -level:warn'), ['Disk full on /dev/sda1']);
    });

    test('rollups count each old entry once; hosts are counted too', async () => {
      const histogram = await store.histogram({ tenantId: 'acme', from: T0, to: T0 + 5 * MINUTE - 1, intervalMs: MINUTE });
      assert.deepEqual(
        histogram.map((bucket) => bucket.count),
        [0, 1, 1, 1, 0],
      );
      assert.deepEqual(await store.distinct({ tenantId: 'acme', field: 'host', limit: 10 }), [
        { value: 'h1', count: 2 },
        { value: 'h2', count: 1 },
      ]);
    });

    test('word and facet counts include the old entries (PostgreSQL: postings made by 0150)', async () => {
      const counts = async (query: string) =>
        (
          await store.histogram({
            tenantId: 'acme',
            condition: searchCondition(query),
            from: T0,
            to: T0 + 5 * MINUTE - 1,
            intervalMs: MINUTE,
          })
        ).map((bucket) => bucket.count);
      assert.deepEqual(await counts('disk OR cafe'), [0, 0, 1, 1, 0]);
      assert.deepEqual(await counts('status:500 OR host:h2'), [0, 1, 0, 1, 0]);
      assert.deepEqual(await counts('NOT disk'), [0, 1, 1, 0, 0]);
      if (dialect === 'postgres') {
        const { rows } = await sql<{ tenant_id: string; entries: number }>`SELECT tenant_id, entries FROM log_batches ORDER BY 1`.execute(
          database.db,
        );
        assert.deepEqual(rows, [
          { tenant_id: 'acme', entries: 3 },
          { tenant_id: 'other', entries: 1 },
        ]);
      }
    });

    test('entries written after the upgrade join the old ones in time order', async () => {
      await store.append('acme', [{ timestamp: T0 + 2 * MINUTE + 1, level: 'error', message: 'Disk check late' }]);
      assert.deepEqual(await find('disk'), ['Disk full on /dev/sda1', 'Disk check late']);
      assert.equal(
        (await store.search({ tenantId: 'acme', condition: searchCondition('disk'), from: T0, to: T0 + HOUR - 1, page: 1, limit: 1 }))
          .total,
        2,
      );
      assert.deepEqual(await find('level:error'), ['Disk full on /dev/sda1', 'Disk check late']);
    });
  });
}
