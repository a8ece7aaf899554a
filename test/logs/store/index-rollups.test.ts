/**
 * A named index or index pattern (`_index` filter) over the rollups: settled from the index rollups
 * where every entry of the range's whole minutes satisfies it or none does, read from the rows
 * otherwise; either way the same answers as the row scan, on both dialects, for entries of several
 * indexes, entries without `_index`, entries with an `_index` that is not a string, and minutes
 * written before the index rollups existed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql, type KyselyPlugin } from 'kysely';
import { createLogStore, type LogEntry, type LogStore } from '../../../src/logs/modules/store/index.js';
import type { Condition } from '../../../src/logs/modules/query/condition.js';
import { dslSearch } from '../../../src/logs/modules/query/elastic-dsl.js';
import { indexCoverage, splitIndexFilter } from '../../../src/logs/modules/store/rollups.js';
import { batchRollups, prepareEntries } from '../../../src/logs/modules/store/write-batch.js';
import { DIALECTS } from '../../helpers/databases.js';
import { HOUR, MINUTE, openTestStore, T0, type TestStore } from './helpers.js';

const LEVELS = ['info', 'warn', 'error'] as const;

/** The `_index` of the i-th entry of an hour: hour 0 all `logs`; 1 `logs` and `logs-b`; 2 also `metrics` and none; 4 also a number. */
function indexOf(hour: number, i: number): string | number | undefined {
  if (hour === 0) return 'logs';
  if (hour === 1) return i % 2 === 0 ? 'logs' : 'logs-b';
  if (hour === 2) return [undefined, 'logs', 'metrics'][i % 3];
  if (hour === 4) return i % 4 === 0 ? 5 : 'logs';
  return 'logs';
}

function entriesOfHour(hour: number, count: number, offset = 0): LogEntry[] {
  return Array.from({ length: count }, (_, i) => {
    const index = indexOf(hour, i);
    const attributes: Record<string, string | number> = { n: i };
    if (index !== undefined) attributes._index = index;
    return {
      timestamp: T0 + hour * HOUR + offset + ((i * 7_919) % count) * Math.floor(HOUR / count / 2) + (i % 7) * 1_000,
      level: LEVELS[i % 3],
      service: i % 5 === 0 ? 'billing' : 'api',
      host: `h${i % 2}`,
      message: `event ${hour} ${i}`,
      attributes,
    };
  });
}

/** Hours 0 to 4; hour 3's first entries are stored as a store before the index rollups kept them (their rows deleted after). */
const OLD = entriesOfHour(3, 60);
const ENTRIES: LogEntry[] = [...[0, 1, 2, 4].flatMap((hour) => entriesOfHour(hour, 120)), ...entriesOfHour(3, 60, HOUR / 2 - MINUTE)];

/** The condition a search of the compatible API makes of a query string and an index (pattern). */
function conditionOf(q: string, index: string): Condition {
  return dslSearch({ query: q === '' ? undefined : { query_string: { query: q } }, index }, T0).condition;
}

/** The same condition in a form the rollups do not take (an OR with nothing): what the row scan answers. */
function onRows(condition: Condition): Condition {
  return { kind: 'or', children: [condition, { kind: 'not', child: { kind: 'all' } }] };
}

/** What a plain scan of ENTRIES (and OLD) finds, for the tests' queries. */
function expectedTotal(q: string, index: string, from: number, to: number): number {
  const names = index.split(',');
  const matchesIndex = (value: unknown) =>
    names.some((name) =>
      name.endsWith('*')
        ? typeof value === 'string' && value.startsWith(name.slice(0, -1))
        : typeof value === 'string' || typeof value === 'number'
          ? String(value) === name
          : false,
    );
  const matchesQuery: Record<string, (entry: LogEntry) => boolean> = {
    '': () => true,
    'level:error': (entry) => entry.level === 'error',
    'level:error AND service:api': (entry) => entry.level === 'error' && entry.service === 'api',
    'host:h1': (entry) => entry.host === 'h1',
    'NOT level:info': (entry) => entry.level !== 'info',
  };
  return [...OLD, ...ENTRIES].filter(
    (entry) => entry.timestamp >= from && entry.timestamp <= to && matchesIndex(entry.attributes?._index) && matchesQuery[q]!(entry),
  ).length;
}

const QUERIES = ['', 'level:error AND service:api', 'host:h1', 'NOT level:info'];
const INDEXES = ['logs', 'logs*', 'logs-b', 'metrics', 'nothing', 'logs,metrics', 'log*,metrics', '5'];
/** Whole hours, ragged ranges inside one hour and across several, and a range no entry is in. */
const RANGES: [number, number][] = [
  [T0, T0 + 5 * HOUR - 1],
  [T0 + 7 * MINUTE + 500, T0 + 58 * MINUTE + 20_000],
  [T0 + HOUR, T0 + 2 * HOUR - 1],
  [T0 + 1.5 * HOUR + 1, T0 + 2.5 * HOUR + 33],
  [T0 + 2 * HOUR, T0 + 3 * HOUR - 1],
  [T0 + 3 * HOUR, T0 + 4 * HOUR - 1],
  [T0 + 4 * HOUR + 5 * MINUTE, T0 + 5 * HOUR - 1],
  [T0 + 10 * HOUR, T0 + 11 * HOUR],
];

for (const dialect of DIALECTS) {
  describe(`an _index filter over the rollups [${dialect}]`, () => {
    let testStore: TestStore;
    let store: LogStore;

    before(async () => {
      testStore = await openTestStore(dialect);
      store = testStore.store;
      // Hour 3's first half as a store written before 0029_index_rollups: counted by level, service
      // and host, not by index.
      await store.append('acme', OLD);
      await sql`DELETE FROM log_index_rollups`.execute(testStore.database.db);
      await sql`DELETE FROM log_index_rollups_hourly`.execute(testStore.database.db);
      await store.append('acme', ENTRIES);
    });
    after(() => testStore.close());

    test('the index rollups say where every entry, or none, satisfies the filter, and where it is not known', async () => {
      const coverage = (index: string, from: number, to: number) =>
        indexCoverage(
          testStore.database.db,
          { int: (value) => (dialect === 'postgres' ? sql`${value}::bigint` : sql`${value}`), text: (v) => sql`${v}`, sumOfCounts: sql`` },
          'acme',
          [from, to],
          splitIndexFilter(conditionOf('', index))!.test,
        );
      assert.equal(await coverage('logs', T0, T0 + HOUR), 'all');
      assert.equal(await coverage('metrics', T0, T0 + HOUR), 'none');
      assert.equal(await coverage('logs', T0, T0 + 2 * HOUR), null, 'logs-b in hour 1');
      assert.equal(await coverage('logs*', T0, T0 + 2 * HOUR), 'all');
      assert.equal(await coverage('logs,metrics', T0 + 2 * HOUR, T0 + 3 * HOUR), null, 'entries without _index in hour 2');
      assert.equal(await coverage('nothing', T0 + 2 * HOUR, T0 + 3 * HOUR), 'none');
      assert.equal(await coverage('nothing', T0 + 3 * HOUR, T0 + 4 * HOUR), null, 'hour 3 was partly stored before');
      assert.equal(await coverage('nothing', T0 + 4 * HOUR, T0 + 5 * HOUR), null, 'an _index of 5 is not counted by index');
      assert.equal(await coverage('logs', T0 + 3 * HOUR + 40 * MINUTE, T0 + 4 * HOUR), 'all');
    });

    test('counts, histograms and field statistics are the row scan’s, for every index, query and range', async () => {
      for (const [from, to] of RANGES) {
        for (const index of INDEXES) {
          for (const q of QUERIES) {
            const condition = conditionOf(q, index);
            const what = `${q || '*'} in ${index} over [${from - T0}, ${to - T0}]`;
            const total = async (c: Condition) =>
              (await store.search({ tenantId: 'acme', from, to, page: 1, limit: 0, condition: c })).total;
            const expected = expectedTotal(q, index, from, to);
            assert.equal(await total(condition), expected, what);
            assert.equal(await total(onRows(condition)), expected, `${what} on the rows`);
            for (const [intervalMs, groupBy] of [
              [10 * MINUTE, undefined],
              [HOUR, undefined],
              [10 * MINUTE, 'level'],
            ] as const) {
              const asked = { tenantId: 'acme', from, to, intervalMs, groupBy };
              assert.deepEqual(
                await store.histogram({ ...asked, condition }),
                await store.histogram({ ...asked, condition: onRows(condition) }),
                `histogram by ${intervalMs / MINUTE} min and ${groupBy ?? 'nothing'}: ${what}`,
              );
            }
            for (const field of ['service'] as const) {
              const asked = { tenantId: 'acme', from, to, field, limit: 10 };
              assert.deepEqual(
                await store.fieldStats({ ...asked, condition }),
                await store.fieldStats({ ...asked, condition: onRows(condition) }),
                `${field} statistics: ${what}`,
              );
            }
          }
        }
      }
    });

    test('a batch of another index stored while the rollups are read is never counted under the index', async () => {
      const { db, dialect: storeDialect } = testStore.database;
      const writer = createLogStore(db, storeDialect);
      const entry = (index: string, minute: number): LogEntry => ({
        timestamp: T0 + minute * MINUTE + 1_000,
        level: 'error',
        message: `race ${index}`,
        attributes: { _index: index },
      });
      await writer.append('race', [entry('logs', 1), entry('logs', 2)]);
      // Right after the first read of a rollup table (the counts, or a look at the index rollups), an
      // entry of another index arrives in those minutes.
      const rollupReads = new Set<unknown>();
      let arrived = false;
      const reads = db.withPlugin({
        transformQuery: (args) => {
          if (/"log_[a-z_]*rollups[a-z_]*"/.test(JSON.stringify(args.node))) rollupReads.add(args.queryId);
          return args.node;
        },
        transformResult: async (args) => {
          if (!arrived && rollupReads.has(args.queryId)) {
            arrived = true;
            await writer.append('race', [entry('other', 3)]);
          }
          return args.result;
        },
      } satisfies KyselyPlugin);
      const racing = createLogStore(db, storeDialect, { reads });
      const condition = conditionOf('level:error', 'logs');
      const { total } = await racing.search({ tenantId: 'race', from: T0, to: T0 + 10 * MINUTE - 1, page: 1, limit: 0, condition });
      assert.ok(arrived, 'the other entry arrived between the two reads');
      assert.equal(total, 2, 'the entry of `other` is not counted');
    });

    test('the indexes and their entries (`_cat/indices`): the row scan’s, from the index rollups where they count every entry', async () => {
      const expected = (from: number, to: number) => {
        const counts = new Map<string, number>();
        for (const entry of [...OLD, ...ENTRIES]) {
          const index = entry.attributes?._index;
          if (index === undefined || entry.timestamp < from || entry.timestamp > to) continue;
          counts.set(String(index), (counts.get(String(index)) ?? 0) + 1);
        }
        return [...counts].sort(([a], [b]) => (a < b ? -1 : 1));
      };
      const distinct = async (from?: number, to?: number) =>
        (await store.distinct({ tenantId: 'acme', field: '_index', limit: 100, from, to }))
          .map(({ value, count }): [string, number] => [value, count])
          .sort(([a], [b]) => (a < b ? -1 : 1));
      for (const [from, to] of RANGES) assert.deepEqual(await distinct(from, to), expected(from, to), `${from}..${to}`);
      assert.deepEqual(await distinct(), expected(-Infinity, Infinity), 'all time (hour 3 stored before the index rollups: the rows)');

      // Hours 0 to 2 are counted whole by index: read from the rollups (made to say 1,000 more `logs`
      // entries in hour 0 to tell), while all time, not counted whole, still comes from the rows.
      const { db } = testStore.database;
      const bump = async (by: number) => {
        await sql`UPDATE log_index_rollups_hourly SET count = count + ${by} WHERE tenant_id = 'acme' AND minute = ${T0} AND idx = 'logs'`.execute(
          db,
        );
        await sql`UPDATE log_host_rollups_hourly SET count = count + ${by} WHERE tenant_id = 'acme' AND minute = ${T0} AND host = 'h0'`.execute(
          db,
        );
      };
      await bump(1000);
      try {
        const whole = expected(T0, T0 + 3 * HOUR - 1).map(([index, count]): [string, number] => [
          index,
          index === 'logs' ? count + 1000 : count,
        ]);
        assert.deepEqual(await distinct(T0, T0 + 3 * HOUR - 1), whole);
        assert.deepEqual(await distinct(), expected(-Infinity, Infinity));
      } finally {
        await bump(-1000);
      }
    });
  });
}

describe('index rollup rows of a batch', () => {
  test('entries count under their _index, entries without one under "", any other _index not at all', () => {
    const entries = prepareEntries(
      ['logs', 'logs', undefined, 'other', 7, '', true].map((index, i): LogEntry => ({
        timestamp: T0 + i * 1_000,
        message: 'm',
        attributes: index === undefined ? {} : { _index: index },
      })),
    );
    const [minutes] = batchRollups(entries);
    assert.deepEqual(
      minutes!.indexRows.map((row) => [row.minute, row.idx, row.count]),
      [
        [T0, '', 1],
        [T0, 'logs', 2],
        [T0, 'other', 1],
      ],
    );
    assert.equal(minutes!.indexTable, 'log_index_rollups');
    assert.equal(
      minutes!.hostRows.reduce((sum, row) => sum + row.count, 0),
      7,
      'the host rollups count every entry: the minute is incomplete by index',
    );
  });
});
