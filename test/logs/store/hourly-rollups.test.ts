/**
 * Counts over whole hours come from the hourly rollups (migration 0130): the same answers as the
 * minutes and the entries give, also for a store written before the hourly tables existed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql, type Migration } from 'kysely';
import { openDatabase, type Database } from '../../../src/shared/db/database.js';
import { migrateToLatest } from '../../../src/shared/db/migrator.js';
import { createLogStore, type LogEntry, type LogStore } from '../../../src/logs/modules/store/index.js';
import { logsMigrations } from '../../../src/logs/db/migrations/index.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../../helpers/databases.js';
import { HOUR, MINUTE, T0 } from './helpers.js';
import { searchCondition } from '../../../src/logs/modules/query/condition.js';

const LEVELS = ['info', 'warn', 'error'] as const;

/** Five hours of entries, one every seven minutes and a few seconds, levels and services in turn. */
const ENTRIES: LogEntry[] = Array.from({ length: 45 }, (_, index) => ({
  timestamp: T0 + index * 7 * MINUTE + (index % 5) * 1000,
  level: LEVELS[index % 3],
  service: index % 2 === 0 ? 'payments' : 'gateway',
  host: `h${index % 4}`,
  message: `event ${index}`,
}));

function expectedCounts(from: number, to: number, key: (entry: LogEntry) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const entry of ENTRIES) {
    if (entry.timestamp < from || entry.timestamp > to) continue;
    counts.set(key(entry), (counts.get(key(entry)) ?? 0) + 1);
  }
  return counts;
}

for (const dialect of DIALECTS) {
  describe(`log store hourly rollups [${dialect}]`, () => {
    let testDb: TestDatabase;
    let database: Database<any>;
    let store: LogStore;

    before(async () => {
      testDb = await createTestDatabase(dialect);
      database = await openDatabase<any>(testDb.url);
      const { db } = database;
      // A store as it was before 0012_hourly_rollups: written (by today's writer, which needs the later
      // tables), then without the hourly tables; then 0012 itself, as the upgrade runs it.
      await migrateToLatest(db, logsMigrations, 'logs');
      await createLogStore(db, database.dialect).append('acme', ENTRIES);
      await sql`DROP TABLE log_rollups_hourly`.execute(db);
      await sql`DROP TABLE log_host_rollups_hourly`.execute(db);
      await (logsMigrations.migrations['0012_hourly_rollups'] as Migration).up(db);
      store = createLogStore(db, database.dialect);
    });
    after(async () => {
      await database.close();
      await testDb.drop();
    });

    test('the upgrade counts the old entries by hour', async () => {
      const { rows } = await sql<{ minute: number; n: number }>`SELECT minute, sum(count) AS n FROM log_rollups_hourly
        WHERE tenant_id = 'acme' GROUP BY minute ORDER BY minute`.execute(database.db);
      assert.deepEqual(
        rows.map((row) => [Number(row.minute), Number(row.n)]),
        [0, 1, 2, 3, 4, 5].map((hour) => [
          T0 + hour * HOUR,
          ENTRIES.filter((entry) => Math.floor((entry.timestamp - T0) / HOUR) === hour).length,
        ]),
      );
    });

    test('distinct values and counts over ragged ranges of several hours match the entries', async () => {
      // Ragged at both ends: minutes and milliseconds before the first whole hour and after the last.
      for (const [from, to] of [
        [T0 + 13 * MINUTE + 500, T0 + 4 * HOUR + 29 * MINUTE + 1_999],
        [T0 - HOUR, T0 + 6 * HOUR],
        [T0 + HOUR, T0 + 3 * HOUR - 1],
      ] as const) {
        for (const field of ['level', 'service', 'host'] as const) {
          const got = await store.distinct({ tenantId: 'acme', field, limit: 10, from, to });
          assert.deepEqual(
            new Map(got.map((row) => [row.value, row.count])),
            expectedCounts(from, to, (entry) => entry[field]!),
            `${field} over [${from - T0}, ${to - T0}]`,
          );
        }
        const total = await store.search({ tenantId: 'acme', from, to, page: 1, limit: 1, condition: searchCondition('level:error') });
        assert.equal(total.total, expectedCounts(from, to, (entry) => entry.level!).get('error') ?? 0);
      }
      assert.deepEqual(
        new Map((await store.distinct({ tenantId: 'acme', field: 'level', limit: 10 })).map((row) => [row.value, row.count])),
        expectedCounts(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, (entry) => entry.level!),
      );
    });

    test('histograms by the hour (hourly rows) and by 20 minutes (minute rows) agree, grouped or not', async () => {
      const from = T0 + 10 * MINUTE;
      const to = T0 + 5 * HOUR + 10 * MINUTE - 1;
      const hourly = await store.histogram({ tenantId: 'acme', from, to, intervalMs: HOUR, groupBy: 'service' });
      const fine = await store.histogram({ tenantId: 'acme', from, to, intervalMs: 20 * MINUTE, groupBy: 'service' });
      for (const bucket of hourly) {
        const inside = fine.filter((part) => part.ts >= bucket.ts && part.ts < bucket.ts + HOUR);
        assert.equal(
          bucket.count,
          inside.reduce((sum, part) => sum + part.count, 0),
          `hour ${bucket.ts - T0}`,
        );
        assert.equal(
          bucket.groups?.payments ?? 0,
          inside.reduce((sum, part) => sum + (part.groups?.payments ?? 0), 0),
        );
      }
      assert.equal(
        hourly.reduce((sum, bucket) => sum + bucket.count, 0),
        ENTRIES.filter((entry) => entry.timestamp >= from && entry.timestamp <= to).length,
      );
    });

    test('retention removes the hourly counts with the minutes', async () => {
      await store.removeOlderThan('acme', T0 + 24 * HOUR);
      assert.deepEqual(await store.distinct({ tenantId: 'acme', field: 'level', limit: 10 }), []);
      const { rows } = await sql<{ n: number }>`SELECT count(*) AS n FROM log_host_rollups_hourly WHERE tenant_id = 'acme'`.execute(
        database.db,
      );
      assert.equal(Number(rows[0]!.n), 0);
    });
  });
}
