/**
 * Speed never changes an answer: every read of the store (the full-text and facet lookups, the walk
 * in time order, the rollups, the bounded count) is checked against a plain scan of the same entries
 * evaluated in JavaScript (oracle.ts), over data made to reach every plan: several tenants,
 * late and out-of-order batches, many entries in one millisecond and in one second, ragged time
 * ranges, a field with too many values to be faceted, and entries outside the id range.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import type { LogEntry, LogStore, SearchRequest, StoredLogEntry } from '../../../src/logs/modules/store/index.js';
import { searchCondition, type FieldFilter } from '../../../src/logs/modules/query/condition.js';
import { MAX_FACET_VALUES } from '../../../src/logs/modules/store/facets.js';
import { ftsTableName, hourOfId } from '../../../src/logs/modules/store/sqlite/fts-hours.js';
import { assignIds, firstIdOf, idSecond, idWindow, lastIdOf, secondOf } from '../../../src/logs/modules/store/sqlite/time-ids.js';
import { DIALECTS } from '../../helpers/databases.js';
import { byTime, matches } from './oracle.js';
import { HOUR, MINUTE, T0, openTestStore, openTestStoreAt, storedRows, type TestStore } from './helpers.js';
import { seededRandom } from '../../helpers/seeded-random.js';

// With capitals, joiners and another script, so that every way a message's words are found (FTS5,
// PostgreSQL's regular expression over a plain message, or its stored tokens) is asked.
const WORDS = [
  'disk',
  'full',
  'timeout',
  'connection',
  'refused',
  'payment',
  'declined',
  'user',
  'login',
  'cache',
  'retry',
  'café',
  'Disk',
  'disk_full',
  'CAFÉ',
  'timeout;retry',
  'ディスク',
];
const LEVELS = ['info', 'info', 'info', 'debug', 'warn', 'error', 'fatal', undefined];
const SERVICES = ['api', 'worker', 'billing', 'auth', undefined];
const HOSTS = ['h1', 'h2', 'h3', undefined];
const SPAN = 3 * HOUR;

/** `count` entries of one tenant over three hours, in batches that arrive out of time order. */
function generate(r: () => number, count: number): LogEntry[][] {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(r() * list.length)]!;
  const entries: LogEntry[] = [];
  for (let index = 0; index < count; index += 1) {
    // A third in bursts: many entries in one second, some in one millisecond.
    const burst = r() < 0.33;
    const timestamp = burst
      ? T0 + HOUR + Math.floor(r() * 3) * 1000 + (r() < 0.5 ? 0 : Math.floor(r() * 1000))
      : T0 + Math.floor(r() * SPAN);
    const words = Array.from({ length: 2 + Math.floor(r() * 5) }, () => pick(WORDS));
    const attributes: Record<string, string | number | boolean> = { status: pick([200, 200, 404, 500, 503]), ok: r() < 0.5 };
    if (r() < 0.5) attributes.dur = Math.floor(r() * 100) / 10;
    // More distinct values than are faceted: `user` is checked on the rows part-way through.
    attributes.user = `u${index}`;
    if (r() < 0.3) attributes.code = String(pick([500, 503]));
    // Now and then a run of letters too long to be a word (tokenize.ts): never found, not even by a prefix.
    const tail = index % 97 === 0 ? ` ${'q'.repeat(201)}` : '';
    const entry: LogEntry = { timestamp, message: `${words.join(' ')} #${index}${tail}`, attributes };
    for (const [key, list] of [
      ['level', LEVELS],
      ['service', SERVICES],
      ['host', HOSTS],
    ] as const) {
      const value = pick(list);
      if (value !== undefined) entry[key] = value;
    }
    entries.push(entry);
  }
  // Shuffled batches of uneven size: late entries land among earlier ones.
  for (let i = entries.length - 1; i > 0; i -= 1) {
    const j = Math.floor(r() * (i + 1));
    [entries[i], entries[j]] = [entries[j]!, entries[i]!];
  }
  const batches: LogEntry[][] = [];
  for (let start = 0; start < entries.length;) {
    const size = 1 + Math.floor(r() * 400);
    batches.push(entries.slice(start, start + size));
    start += size;
  }
  return batches;
}

const QUERIES = [
  '',
  'disk',
  'disk full',
  '"connection refused"',
  'time*',
  'disk OR payment',
  'disk -full',
  'NOT disk',
  'level:error',
  'level:error OR level:fatal',
  'service:api host:h1',
  '-service:api',
  'status:500',
  'status:"500"',
  'code:500',
  'ok:true',
  'dur:1.5',
  'user:u5',
  `user:u${MAX_FACET_VALUES + 500}`,
  'status:>=500',
  'status:[400 TO 500}',
  '_exists_:dur',
  'user:u1*',
  'disk level:error status:503',
  '(disk OR cache) AND NOT level:info',
  'café',
  // Postings give candidates the rows check (PostgreSQL): a phrase's words, an AND's other sides.
  '"connection refused" level:error',
  'disk-ful*',
  're*',
  'time* OR disk',
  'NOT ti*',
  'disk status:>=500',
  'level:error -"disk full"',
  // NOT of a field an entry lacks, or of a value checked on the rows: the entry matches the NOT.
  '-dur:1.5',
  'NOT user:u5',
  '"disk full" -dur:1.5',
  'ディスク OR "timeout retry"',
  // Phrases of two words that pieces post pairs for (PostgreSQL), or not: reversed, of three words, under OR.
  '"full disk"',
  '"disk full disk"',
  '"disk full" OR "cache retry"',
  'disk-full level:error',
  'qq*',
];

/** Ragged ranges: inside one second, across the burst, whole minutes, the whole span and beyond. */
const RANGES: [number, number][] = [
  [T0, T0 + SPAN],
  [T0 + HOUR + 500, T0 + HOUR + 1499],
  [T0 + HOUR + 1000, T0 + HOUR + 1999],
  [T0 + HOUR - 1, T0 + HOUR + 2001],
  [T0 + 17 * MINUTE + 123, T0 + 2 * HOUR + 4567],
  [T0 - HOUR, T0 + 5 * HOUR],
  [0, T0 + 10 * HOUR],
];

const TENANTS = { big: 2400, small: 300 };

/**
 * The stores as a load balancer sees them: each call goes to the next (round robin), so that every
 * read is answered by one or the other, each with the caches its own writes and reads filled.
 */
function roundRobin(stores: readonly LogStore[]): LogStore {
  let next = 0;
  return new Proxy(stores[0]!, {
    get(_target, name) {
      const store = stores[next % stores.length]! as unknown as Record<string | symbol, unknown>;
      const value = store[name];
      if (typeof value !== 'function') return value;
      next += 1;
      return (...args: unknown[]) => (value as (...args: unknown[]) => unknown).apply(store, args);
    },
  });
}

// PostgreSQL also with two writers: two stores on one database (two logs instances) writing the same
// tenants' hours at once must give the answers one writer gives (docs/log-store.md, "Several instances").
const SETUPS = [
  ...DIALECTS.map((dialect) => ({ dialect, writers: 1, name: dialect })),
  ...DIALECTS.filter((dialect) => dialect === 'postgres').map((dialect) => ({ dialect, writers: 2, name: `${dialect}, two writers` })),
];

for (const { dialect, writers, name } of SETUPS) {
  describe(`log store against a plain scan [${name}]`, () => {
    let handle: TestStore;
    let others: TestStore[] = [];
    let store: LogStore;
    const stored = new Map<string, StoredLogEntry[]>();

    before(async () => {
      handle = await openTestStore(dialect);
      others = await Promise.all(Array.from({ length: writers - 1 }, () => openTestStoreAt(handle.url)));
      const stores = [handle.store, ...others.map((other) => other.store)];
      store = stores.length === 1 ? handle.store : roundRobin(stores);
      const r = seededRandom(7);
      const batches = Object.entries(TENANTS).map(([tenant, count]) => generate(r, count).map((batch) => [tenant, batch] as const));
      // Tenants' batches interleaved, as concurrent shippers send them; with several writers each
      // takes every other batch and all write at once.
      const interleaved: (readonly [string, LogEntry[]])[] = [];
      for (let index = 0; batches.some((list) => index < list.length); index += 1) {
        for (const list of batches) if (index < list.length) interleaved.push(list[index]!);
      }
      await Promise.all(
        stores.map(async (writer, w) => {
          for (const [tenant, batch] of interleaved.filter((_, index) => index % stores.length === w)) await writer.append(tenant, batch);
        }),
      );
      // The plain scan: every stored entry, read without any index.
      for (const tenant of Object.keys(TENANTS)) {
        const rows = await storedRows(handle.database, tenant);
        stored.set(
          tenant,
          rows.map((row) => {
            const entry: StoredLogEntry = {
              id: String(row.id),
              tenant_id: tenant,
              timestamp: Number(row.ts),
              message: row.message as string,
              attributes: row.attributes as StoredLogEntry['attributes'],
            };
            for (const key of ['level', 'service', 'host'] as const) if (row[key] !== null) entry[key] = row[key] as string;
            return entry;
          }),
        );
      }
    });
    after(async () => {
      for (const other of others) await other.close();
      await handle.close();
    });

    const expected = (tenant: string, query: string, from: number, to: number, filters: FieldFilter[] = []) => {
      const condition = searchCondition(query, filters);
      return stored.get(tenant)!.filter((entry) => entry.timestamp >= from && entry.timestamp <= to && matches(entry, condition));
    };

    test('the data reaches the plans it is made for', async () => {
      assert.equal(stored.get('big')!.length, TENANTS.big);
      const { rows } = await sql<{ field: string }>`SELECT field FROM log_unfaceted_fields WHERE tenant_id = 'big'`.execute(
        handle.database.db,
      );
      assert.deepEqual(
        rows.map((row) => row.field),
        ['a:user'],
        'user has more values than are faceted',
      );
      // Each value has one number, and each number one value, whichever writer gave it.
      const { rows: twice } = await sql<{ token: number }>`SELECT token FROM log_facet_values
        GROUP BY tenant_id, token HAVING count(*) > 1`.execute(handle.database.db);
      assert.deepEqual(twice, [], 'no facet number given twice');
    });

    if (writers > 1) {
      test('a batch with document ids sent to both writers at once (a retry that reached the other instance) is stored once', async () => {
        const batch: LogEntry[] = Array.from({ length: 200 }, (_, index) => ({
          timestamp: T0 + 2 * HOUR + index,
          message: `retried ${index}`,
          documentId: `doc-${index}`,
        }));
        // In opposite orders, as two shippers' batches sharing ids may be.
        const [one, two] = await Promise.all([handle.store.append('ids', batch), others[0]!.store.append('ids', [...batch].reverse())]);
        assert.equal(one.duplicates.length + two.duplicates.length, batch.length, 'each id stored by one writer only');
        const found = await store.search({ tenantId: 'ids', from: T0, to: T0 + 5 * HOUR, page: 1, limit: 1 });
        assert.equal(found.total, batch.length);
      });
    }

    test('searches: totals and every page, newest and oldest first, as a plain scan finds them', async () => {
      for (const tenant of Object.keys(TENANTS)) {
        for (const query of QUERIES) {
          for (const [from, to] of RANGES) {
            for (const order of ['desc', 'asc'] as const) {
              const all = expected(tenant, query, from, to).sort(byTime(order));
              const context = `${tenant} ${JSON.stringify(query)} [${from - T0}, ${to - T0}] ${order}`;
              const first = await store.search({
                tenantId: tenant,
                condition: searchCondition(query),
                from,
                to,
                page: 1,
                limit: 7,
                sort: { field: '@timestamp', order },
              });
              assert.equal(first.total, all.length, context);
              assert.equal(first.totalRelation, 'eq', context);
              assert.deepEqual(
                first.entries.map((entry) => entry.id),
                all.slice(0, 7).map((entry) => entry.id),
                context,
              );
              // A deep page, and one past the end.
              const page = Math.max(1, Math.ceil(all.length / 7) - 1);
              const deep = await store.search({
                tenantId: tenant,
                condition: searchCondition(query),
                from,
                to,
                page,
                limit: 7,
                sort: { field: '@timestamp', order },
              });
              assert.deepEqual(
                deep.entries.map((entry) => entry.id),
                all.slice((page - 1) * 7, page * 7).map((entry) => entry.id),
                `${context} page ${page}`,
              );
            }
          }
        }
      }
    });

    test('bounded counts: exact up to the bound, a lower bound past it (exact where the rollups count)', async () => {
      for (const query of QUERIES) {
        const [from, to] = RANGES[0]!;
        const all = expected('big', query, from, to).length;
        const result = await store.search({
          tenantId: 'big',
          condition: searchCondition(query),
          from,
          to,
          page: 1,
          limit: 1,
          trackTotal: 100,
        });
        // Exact where counting is cheap (rollups), else at least the bound.
        if (result.totalRelation === 'eq') assert.equal(result.total, all, query);
        else assert.deepEqual({ total: result.total, beyond: all > 100 }, { total: 100, beyond: true }, query);
      }
      const common = await store.search({
        tenantId: 'big',
        condition: searchCondition('disk'),
        from: T0,
        to: T0 + SPAN,
        page: 1,
        limit: 1,
        trackTotal: 100,
      });
      assert.deepEqual([common.total, common.totalRelation], [100, 'gte']);
    });

    test('search_after walks every match once, in order', async () => {
      for (const query of ['', 'disk', 'level:error', 'status:>=500', '"connection refused"', 're*']) {
        const [from, to] = RANGES[4]!;
        const all = expected('big', query, from, to).sort(byTime('desc'));
        const seen: string[] = [];
        let cursor: SearchRequest['after'];
        for (;;) {
          const page = await store.search({
            tenantId: 'big',
            condition: searchCondition(query),
            from,
            to,
            page: 1,
            limit: 50,
            after: cursor,
          });
          if (page.entries.length === 0) break;
          seen.push(...page.entries.map((entry) => entry.id));
          const last = page.entries.at(-1)!;
          cursor = { timestamp: last.timestamp, id: last.id };
        }
        assert.deepEqual(
          seen,
          all.map((entry) => entry.id),
          query,
        );
      }
    });

    test('histograms: per bucket, in whole seconds, minutes and odd intervals, grouped or not', async () => {
      for (const query of QUERIES) {
        for (const [from, to] of RANGES.slice(0, 5)) {
          for (const intervalMs of [1000, 7000, MINUTE, 10 * MINUTE, 1500, HOUR]) {
            if ((to - from) / intervalMs > 5000) continue;
            const buckets = await store.histogram({ tenantId: 'big', condition: searchCondition(query), from, to, intervalMs });
            const counts = new Map<number, number>();
            for (const entry of expected('big', query, from, to)) {
              const bucket = entry.timestamp - (((entry.timestamp % intervalMs) + intervalMs) % intervalMs);
              counts.set(bucket, (counts.get(bucket) ?? 0) + 1);
            }
            const context = `${JSON.stringify(query)} [${from - T0}, ${to - T0}] every ${intervalMs}`;
            assert.deepEqual(
              buckets.filter((bucket) => bucket.count > 0).map((bucket) => [bucket.ts, bucket.count]),
              [...counts.entries()].sort((a, b) => a[0] - b[0]),
              context,
            );
          }
        }
        const grouped = await store.histogram({
          tenantId: 'big',
          condition: searchCondition(query),
          from: RANGES[4]![0],
          to: RANGES[4]![1],
          intervalMs: 10 * MINUTE,
          groupBy: 'host',
        });
        const total = grouped.reduce((sum, bucket) => sum + Object.values(bucket.groups ?? {}).reduce((a, b) => a + b, 0), 0);
        assert.equal(total, expected('big', query, RANGES[4]![0], RANGES[4]![1]).length, `grouped ${query}`);
        // Each group's count in each bucket (level and service are counted a value at a time in the index where it can).
        for (const groupBy of ['level', 'service'] as const) {
          for (const [[from, to], intervalMs] of [
            [RANGES[4]!, 10 * MINUTE],
            [RANGES[3]!, 1000],
          ] as const) {
            const buckets = await store.histogram({ tenantId: 'big', condition: searchCondition(query), from, to, intervalMs, groupBy });
            const want = new Map<string, number>();
            for (const entry of expected('big', query, from, to)) {
              const key = `${entry.timestamp - (((entry.timestamp % intervalMs) + intervalMs) % intervalMs)} ${entry[groupBy] ?? ''}`;
              want.set(key, (want.get(key) ?? 0) + 1);
            }
            const got = new Map<string, number>();
            for (const bucket of buckets)
              for (const [group, count] of Object.entries(bucket.groups ?? {})) if (count > 0) got.set(`${bucket.ts} ${group}`, count);
            assert.deepEqual(
              [...got].sort(),
              [...want].sort(),
              `${JSON.stringify(query)} by ${groupBy} [${from - T0}, ${to - T0}] every ${intervalMs}`,
            );
          }
        }
      }
    });

    test('aggregations and pages sorted by a field, of every query', async () => {
      const [from, to] = RANGES[4]!;
      for (const query of QUERIES) {
        const all = expected('big', query, from, to);
        const byLevel = new Map<string | null, { count: number; max: number | null }>();
        for (const entry of all) {
          const row = byLevel.get(entry.level ?? null) ?? { count: 0, max: null };
          const dur = entry.attributes.dur;
          row.count += 1;
          if (typeof dur === 'number') row.max = Math.max(row.max ?? -Infinity, dur);
          byLevel.set(entry.level ?? null, row);
        }
        const rows = await store.aggregate({
          tenantId: 'big',
          condition: searchCondition(query),
          from,
          to,
          groups: [{ kind: 'field', field: 'level' }],
          metrics: [{ kind: 'max', field: 'dur' }],
          maxGroups: 100,
        });
        assert.deepEqual(
          Object.fromEntries(rows.map((row) => [String(row.keys[0]), { count: row.count, max: row.metrics[0] }])),
          Object.fromEntries([...byLevel].map(([level, row]) => [String(level), row])),
          query,
        );
        const page = await store.search({
          tenantId: 'big',
          condition: searchCondition(query),
          from,
          to,
          page: 1,
          limit: 5,
          sort: { field: 'user', order: 'asc' },
        });
        const users = all.map((entry) => String(entry.attributes.user)).sort();
        assert.deepEqual(
          page.entries.map((entry) => entry.attributes.user),
          users.slice(0, 5),
          `${query} by user`,
        );
      }
    });

    test("field statistics of every query: matches, entries with the field, distinct values and the top ten (the rollups' answers for level, service and host included)", async () => {
      for (const query of QUERIES) {
        for (const field of ['level', 'service', 'host', 'status']) {
          for (const [from, to] of [RANGES[0]!, RANGES[4]!]) {
            const matched = expected('big', query, from, to);
            const counts = new Map<string, number>();
            for (const entry of matched) {
              const value = field in entry ? (entry as unknown as Record<string, string>)[field] : entry.attributes[field];
              if (value === undefined || value === '') continue;
              counts.set(String(value), (counts.get(String(value)) ?? 0) + 1);
            }
            const top = [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 10);
            const stats = await store.fieldStats({ tenantId: 'big', condition: searchCondition(query), from, to, field, limit: 10 });
            assert.deepEqual(
              { ...stats, values: stats.values.map((row) => [row.value, row.count]) },
              {
                matched: matched.length,
                counted: matched.length,
                present: [...counts.values()].reduce((a, b) => a + b, 0),
                distinct: counts.size,
                values: top,
              },
              `${field} of ${JSON.stringify(query)} [${from - T0}, ${to - T0}]`,
            );
          }
        }
      }
    });

    test('field statistics with a sample: past it, of the newest matches (by time, ties by id), every match counted', async () => {
      for (const query of QUERIES) {
        for (const field of ['status', 'user']) {
          for (const [from, to] of [RANGES[0]!, RANGES[3]!, RANGES[4]!]) {
            for (const sample of [7, 100]) {
              const matched = expected('big', query, from, to).sort(byTime('desc'));
              const counts = new Map<string, number>();
              for (const entry of matched.slice(0, sample)) {
                const value = entry.attributes[field];
                if (value === undefined || value === '') continue;
                counts.set(String(value), (counts.get(String(value)) ?? 0) + 1);
              }
              const top = [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 10);
              const condition = searchCondition(query);
              const stats = await store.fieldStats({ tenantId: 'big', condition, from, to, field, limit: 10, sample });
              assert.deepEqual(
                { ...stats, values: stats.values.map((row) => [row.value, row.count]) },
                {
                  matched: matched.length,
                  counted: Math.min(sample, matched.length),
                  present: [...counts.values()].reduce((a, b) => a + b, 0),
                  distinct: counts.size,
                  values: top,
                },
                `${field} of ${JSON.stringify(query)} [${from - T0}, ${to - T0}], sample ${sample}`,
              );
            }
          }
        }
      }
    });

    test('distinct values and counts of rolled-up and other fields', async () => {
      for (const field of ['level', 'service', 'host', 'status', 'code']) {
        for (const [from, to] of RANGES) {
          const counts = new Map<string, number>();
          for (const entry of expected('big', '', from, to)) {
            const value = field in entry ? (entry as unknown as Record<string, string>)[field] : entry.attributes[field];
            if (value === undefined || value === '') continue;
            counts.set(String(value), (counts.get(String(value)) ?? 0) + 1);
          }
          const distinct = await store.distinct({ tenantId: 'big', field, from, to, limit: 100 });
          assert.deepEqual(
            Object.fromEntries(distinct.map((row) => [row.value, row.count])),
            Object.fromEntries(counts),
            `${field} [${from - T0}, ${to - T0}]`,
          );
        }
      }
    });
  });
}

/** Another tenant's entry takes the last id of `second`: a later entry of that second has none left and spills into the next. */
async function fillSecond(handle: TestStore, second: number): Promise<void> {
  await sql`INSERT INTO log_entries (id, tenant_id, ts_offset, message, attributes) VALUES (${lastIdOf(second)}, 'x', 0, 'x', jsonb('{}'))`.execute(
    handle.database.db,
  );
}

describe('time-ordered ids (SQLite)', () => {
  test('a second holds 2^21 ids; a full one spills into the next, and entries outside 1834-2106 are kept at the ends', async () => {
    const second = secondOf(T0);
    const used = new Map([[second, lastIdOf(second) - 1]]);
    const ids = await assignIds([T0, T0 + 5, T0 + 999, T0 + 1000], async (s) => used.get(s));
    assert.deepEqual(ids, [
      { id: lastIdOf(second), displaced: false },
      { id: firstIdOf(second + 1), displaced: true },
      { id: firstIdOf(second + 1) + 1, displaced: true },
      { id: firstIdOf(second + 1) + 2, displaced: false },
    ]);
    const far = await assignIds([Date.UTC(1700, 0, 1), Date.UTC(2200, 0, 1), -1], async () => undefined);
    assert.deepEqual(
      far.map((id) => id.displaced),
      [true, true, false],
    );
    assert.ok(far.every((id) => Number.isSafeInteger(id.id)));
    assert.equal(idSecond(far[2]!.id), -1, 'a millisecond before 1970 is in second -1');
    assert.deepEqual(idWindow(-1000, 0), { lo: firstIdOf(-1), hi: lastIdOf(-1) });
  });

  test('a batch continues its second after the last batch, and one that finds its second full spills into the next', async () => {
    const handle = await openTestStore('sqlite');
    try {
      const { store } = handle;
      const db = handle.database.db;
      const second = secondOf(T0);
      const idsOf = async () =>
        (await sql<{ id: number; ts: number }>`SELECT id, ts FROM log_entries ORDER BY id`.execute(db)).rows.map((row) => [
          Number(row.id),
          Number(row.ts),
        ]);
      await store.append('acme', [
        { timestamp: T0 + 7, message: 'b' },
        { timestamp: T0 + 3, message: 'a' },
      ]);
      await store.append('acme', [{ timestamp: T0 + 1, message: 'c' }]);
      assert.deepEqual(await idsOf(), [
        [firstIdOf(second), T0 + 3],
        [firstIdOf(second) + 1, T0 + 7],
        [firstIdOf(second) + 2, T0 + 1],
      ]);
      // Another writer took the last id of the next second: the batch learns it only under the writer.
      await fillSecond(handle, second + 1);
      await store.append('acme', [{ timestamp: T0 + 1500, message: 'full disk' }]);
      const { rows } = await sql<{ id: number; ts: number }>`SELECT id, ts FROM log_displaced`.execute(db);
      assert.deepEqual(
        rows.map((row) => [Number(row.id), Number(row.ts)]),
        [[firstIdOf(second + 2), T0 + 1500]],
      );
      const found = await store.search({
        tenantId: 'acme',
        condition: searchCondition('disk'),
        from: T0,
        to: T0 + 2000,
        page: 1,
        limit: 5,
      });
      assert.deepEqual(
        found.entries.map((entry) => [entry.message, entry.timestamp]),
        [['full disk', T0 + 1500]],
      );
    } finally {
      await handle.close();
    }
  });

  test('field statistics of a sample among displaced entries: the newest matches by time, ties by id', async () => {
    const handle = await openTestStore('sqlite');
    try {
      const { store } = handle;
      const second = secondOf(T0);
      const at = (ms: number, user: string): LogEntry => ({ timestamp: T0 + ms, message: `by ${user}`, attributes: { user } });
      await store.append('acme', [at(500, 'g')]);
      await fillSecond(handle, second);
      await store.append('acme', [at(1500, 'c'), at(-1, 'd'), at(1600, 'e'), at(1600, 'f')]);
      // Displaced into the next second, after the ids of c, e and f: in its block, but older than g.
      await store.append('acme', [at(10, 'a'), at(20, 'b')]);
      const statsOf = (sample: number) =>
        store.fieldStats({
          tenantId: 'acme',
          condition: searchCondition('by'),
          from: T0 - 1000,
          to: T0 + 2999,
          field: 'user',
          limit: 10,
          sample,
        });
      // By time: f and e (one time; ties by id, f stored after e), c, g.
      const stats = await statsOf(4);
      assert.deepEqual(
        { ...stats, values: stats.values.map((row) => [row.value, row.count]) },
        {
          matched: 7,
          counted: 4,
          present: 4,
          distinct: 4,
          values: [
            ['c', 1],
            ['e', 1],
            ['f', 1],
            ['g', 1],
          ],
        },
      );
      const all = await statsOf(10);
      assert.deepEqual([all.matched, all.counted, all.distinct], [7, 7, 7]);
    } finally {
      await handle.close();
    }
  });

  test("a batch for an hour whose index table was dropped behind the writer's back makes it again", async () => {
    const handle = await openTestStore('sqlite');
    try {
      const { store } = handle;
      const db = handle.database.db;
      await store.append('acme', [{ timestamp: T0 + HOUR, message: 'first disk' }]);
      await sql`DROP TABLE ${sql.table(ftsTableName('acme', hourOfId(firstIdOf(secondOf(T0 + HOUR)))))}`.execute(db);
      await sql`DELETE FROM log_fts_hours`.execute(db);
      await store.append('acme', [{ timestamp: T0 + HOUR + 5, message: 'second disk' }]);
      const found = await store.search({
        tenantId: 'acme',
        condition: searchCondition('disk'),
        from: T0,
        to: T0 + 2 * HOUR,
        page: 1,
        limit: 5,
      });
      assert.deepEqual(
        found.entries.map((entry) => entry.message),
        ['second disk'],
      );
    } finally {
      await handle.close();
    }
  });

  test('displaced entries are found by every read, beside the others', async () => {
    const handle = await openTestStore('sqlite');
    try {
      const { store } = handle;
      const second = secondOf(T0 + HOUR);
      await fillSecond(handle, second);
      const entries: LogEntry[] = [
        { timestamp: T0 + HOUR + 10, message: 'spilled disk', level: 'error' },
        { timestamp: T0 + HOUR + 20, message: 'spilled too', level: 'info' },
        { timestamp: T0 + HOUR + 1500, message: 'next second disk', level: 'error' },
        { timestamp: T0 + HOUR - 1, message: 'before disk', level: 'error' },
        { timestamp: Date.UTC(1700, 0, 1), message: 'ancient disk', level: 'error' },
        { timestamp: Date.UTC(2200, 0, 1), message: 'future disk', level: 'error' },
      ];
      await store.append('acme', entries);
      const { rows } = await sql<{ n: number }>`SELECT count(*) AS n FROM log_displaced`.execute(handle.database.db);
      assert.equal(Number(rows[0]!.n), 4, 'two spilled, two out of range');
      const messages = async (query: string, from: number, to: number, order: 'asc' | 'desc' = 'desc') =>
        (
          await store.search({
            tenantId: 'acme',
            condition: searchCondition(query),
            from,
            to,
            page: 1,
            limit: 10,
            sort: { field: '@timestamp', order },
          })
        ).entries.map((entry) => entry.message);
      const second0 = T0 + HOUR;
      assert.deepEqual(await messages('', second0, second0 + 999), ['spilled too', 'spilled disk']);
      assert.deepEqual(await messages('disk', second0, second0 + 1999), ['next second disk', 'spilled disk']);
      assert.deepEqual(await messages('level:error', second0 - 1, second0 + 999, 'asc'), ['before disk', 'spilled disk']);
      assert.deepEqual(await messages('disk', second0 + 1000, second0 + 1999), ['next second disk']);
      assert.deepEqual(await messages('disk', Date.UTC(1600, 0, 1), Date.UTC(1800, 0, 1)), ['ancient disk']);
      assert.deepEqual(await messages('disk', Date.UTC(2100, 0, 1), Date.UTC(2300, 0, 1)), ['future disk']);
      assert.equal(
        (await store.search({ tenantId: 'acme', condition: searchCondition('disk'), from: 0, to: Date.UTC(3000, 0, 1), page: 1, limit: 1 }))
          .total,
        4,
      );
      const histogram = await store.histogram({
        tenantId: 'acme',
        condition: searchCondition('disk'),
        from: second0,
        to: second0 + 1999,
        intervalMs: 1000,
      });
      assert.deepEqual(
        histogram.map((bucket) => bucket.count),
        [1, 1],
      );
      await store.removeOlderThan('acme', Date.UTC(1900, 0, 1));
      assert.deepEqual(await messages('disk', Date.UTC(1600, 0, 1), Date.UTC(1800, 0, 1)), []);
      const { rows: left } = await sql<{ n: number }>`SELECT count(*) AS n FROM log_displaced`.execute(handle.database.db);
      assert.equal(Number(left[0]!.n), 3, 'retention forgets a removed displaced entry');
    } finally {
      await handle.close();
    }
  });
});
