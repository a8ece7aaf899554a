import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { createLogStore, type LogEntry, type LogStore, type SearchRequest } from '../../../src/logs/modules/store/index.js';
import { QuerySyntaxError } from '../../../src/logs/modules/query/errors.js';
import { filtersToCondition, searchCondition, type FieldFilter } from '../../../src/logs/modules/query/condition.js';
import { describeOnPostgres, DIALECTS } from '../../helpers/databases.js';
import { eventually } from '../../helpers/eventually.js';
import { DAY, HOUR, MINUTE, T0, openTestStore, type TestStore } from './helpers.js';
import { plain } from '../../helpers/prototypes.js';

const ACME: LogEntry[] = [
  {
    timestamp: T0 + 1 * MINUTE,
    level: 'ERROR',
    service: 'api',
    host: 'h1',
    message: 'Disk full on /dev/sda1',
    attributes: { 'http.status': 500, 'k8s.pod.name': 'api-1', ok: false },
  },
  {
    timestamp: T0 + 2 * MINUTE,
    level: 'info',
    service: 'api',
    host: 'h1',
    message: 'User alice logged in from 10.0.0.1',
    attributes: { 'http.status': 200, user: 'alice' },
  },
  {
    timestamp: T0 + 3 * MINUTE,
    level: 'warn',
    service: 'worker',
    host: 'h2',
    message: 'Connection timeout after 30s',
    attributes: { retry: 3 },
  },
  {
    timestamp: T0 + 4 * MINUTE,
    level: 'error',
    service: 'worker',
    host: 'h2',
    message: 'Connection refused by upstream',
    trace_id: 'abc123',
    span_id: 'def456',
  },
  { timestamp: T0 + 5 * MINUTE, level: 'info', service: 'api', host: 'h1', message: 'Café crème délivré — 東京 ünïcödé' },
  {
    timestamp: T0 + 6 * MINUTE,
    level: 'info',
    service: 'api',
    host: 'h3',
    message: "SQL: '; DROP TABLE log_entries; --",
    attributes: { 'weird"key\\x': 'v"q' },
  },
  { timestamp: T0 + 7 * MINUTE, level: 'debug', service: 'api', host: 'h1', message: 'timeouts happen NEAR(a b) * ^col: x' },
  { timestamp: T0 + 61 * MINUTE, level: 'info', service: 'api', host: 'h1', message: 'later hour disk check' },
];

const OTHER: LogEntry[] = [
  {
    timestamp: T0 + 1 * MINUTE,
    level: 'error',
    service: 'billing',
    host: 'x9',
    message: 'Disk full on other tenant',
    attributes: { secret: 'other-only' },
  },
  { timestamp: T0 + 2 * MINUTE, level: 'fatal', service: 'billing', host: 'x9', message: 'Connection refused in other tenant' },
];

function messagesOf(entries: { message: string }[]): string[] {
  return entries.map((entry) => entry.message);
}

for (const dialect of DIALECTS) {
  describe(`log store [${dialect}]`, () => {
    let handle: TestStore;
    let store: LogStore;
    const base = (extra: Partial<SearchRequest> = {}): SearchRequest => ({
      tenantId: 'acme',
      from: T0,
      to: T0 + DAY - 1,
      page: 1,
      limit: 50,
      ...extra,
    });
    const find = async (query: string, extra: Partial<SearchRequest> & { filters?: FieldFilter[] } = {}): Promise<string[]> => {
      const { filters, ...rest } = extra;
      const result = await store.search(base({ condition: searchCondition(query, filters), ...rest }));
      return messagesOf(result.entries);
    };
    const at = (...indexes: number[]): string[] => indexes.map((index) => ACME[index - 1]!.message);

    before(async () => {
      handle = await openTestStore(dialect);
      store = handle.store;
      await store.append('acme', ACME.slice(0, 4));
      await store.append('acme', ACME.slice(4));
      await store.append('other', OTHER);
    });
    after(async () => handle.close());

    test('an empty query returns every entry of the tenant in the range, newest first, with attributes', async () => {
      const result = await store.search(base());
      assert.equal(result.total, 8);
      assert.deepEqual(messagesOf(result.entries), at(8, 7, 6, 5, 4, 3, 2, 1));
      const first = result.entries.at(-1)!;
      assert.equal(first.tenant_id, 'acme');
      assert.equal(first.timestamp, T0 + MINUTE);
      assert.equal(first.level, 'error', 'levels are stored lower-case');
      assert.deepEqual(plain(first.attributes), { 'http.status': 500, 'k8s.pod.name': 'api-1', ok: false });
      assert.equal(typeof first.id, 'string');
      const traced = result.entries.find((entry) => entry.trace_id === 'abc123')!;
      assert.equal(traced.span_id, 'def456');
      assert.equal(traced.host, 'h2');
    });

    test('words must all match, in any order and case', async () => {
      assert.deepEqual(await find('disk full'), at(1));
      assert.deepEqual(await find('FULL disk'), at(1));
      assert.deepEqual(await find('disk'), at(8, 1));
      assert.deepEqual(await find('disk nothing-like-this'), []);
    });

    test('quoted phrases match adjacent words in order', async () => {
      assert.deepEqual(await find('"full on"'), at(1));
      assert.deepEqual(await find('"on full"'), []);
      assert.deepEqual(await find('message:"connection refused"'), at(4));
      assert.deepEqual(await find('"10.0.0.1"'), at(2));
    });

    test('prefix terms', async () => {
      assert.deepEqual(await find('time*'), at(7, 3));
      assert.deepEqual(await find('timeout*'), at(7, 3));
      assert.deepEqual(await find('timeouts*'), at(7));
      assert.deepEqual(await find('level:err*'), at(4, 1));
      assert.deepEqual(await find('k8s.pod.name:api*'), at(1));
    });

    test('field:value on columns and attributes (numbers, booleans, strings)', async () => {
      assert.deepEqual(await find('level:error'), at(4, 1));
      assert.deepEqual(await find('level:ERROR'), at(4, 1));
      assert.deepEqual(await find('service:worker'), at(4, 3));
      assert.deepEqual(await find('host:h3'), at(6));
      assert.deepEqual(await find('trace_id:abc123'), at(4));
      assert.deepEqual(await find('span_id:def456'), at(4));
      assert.deepEqual(await find('http.status:500'), at(1));
      assert.deepEqual(await find('retry:3'), at(3));
      assert.deepEqual(await find('ok:false'), at(1));
      assert.deepEqual(await find('user:alice'), at(2));
      assert.deepEqual(await find('user:"alice"'), at(2));
      assert.deepEqual(await find('user:ali'), [], 'field values match exactly');
      assert.deepEqual(await find('service:"worker"'), at(4, 3));
    });

    test('NOT and - exclude', async () => {
      assert.deepEqual(await find('connection -refused'), at(3));
      assert.deepEqual(await find('connection NOT refused'), at(3));
      assert.deepEqual(await find('-level:info -level:debug'), at(4, 3, 1));
      assert.deepEqual(await find('NOT disk'), at(7, 6, 5, 4, 3, 2));
      assert.deepEqual(await find('NOT (disk OR connection OR level:info)'), at(7));
    });

    test('OR and parentheses', async () => {
      assert.deepEqual(await find('timeout OR refused'), at(4, 3));
      assert.deepEqual(await find('(refused OR disk) AND level:error'), at(4, 1));
      assert.deepEqual(await find('(refused OR full) level:error service:api'), at(1));
      assert.deepEqual(await find('level:warn OR user:alice OR "disk full"'), at(3, 2, 1));
      assert.deepEqual(await find('disk AND full OR timeout'), at(3, 1), 'AND binds tighter than OR');
    });

    test('ranges, comparisons and existence on numbers, numeric strings, times and keywords', async () => {
      const entry = (minute: number, host: string, message: string, attributes?: LogEntry['attributes'], trace?: string): LogEntry => ({
        timestamp: T0 + minute * MINUTE,
        level: 'info',
        service: 'ranges',
        host,
        message,
        ...(attributes ? { attributes } : {}),
        ...(trace ? { trace_id: trace } : {}),
      });
      await store.append('ranges', [
        entry(1, 'h1', 'a', { status: 500, latency: 1.5 }),
        entry(2, 'h10', 'b', { status: '503', latency: '0.25' }),
        entry(3, 'h2', 'c', { status: 200 }),
        entry(4, 'h3', 'd', { status: 'n/a' }),
        entry(5, 'h1', 'e', undefined, 't1'),
      ]);
      const ranges = async (query: string) =>
        messagesOf(
          (await store.search(base({ tenantId: 'ranges', condition: searchCondition(query), sort: { field: '@timestamp', order: 'asc' } })))
            .entries,
        ).join('');
      assert.equal(await ranges('status:>=500'), 'ab');
      assert.equal(await ranges('status:>500'), 'b');
      assert.equal(await ranges('status:<500'), 'c');
      assert.equal(await ranges('status:<=200'), 'c');
      assert.equal(await ranges('status:[500 TO 599]'), 'ab');
      assert.equal(await ranges('status:{500 TO 599]'), 'b');
      assert.equal(await ranges('status:[200 TO 500}'), 'c');
      assert.equal(await ranges('latency:>1'), 'a');
      assert.equal(await ranges('latency:[0 TO 1]'), 'b');
      assert.equal(await ranges('status:[* TO *]'), 'abcd');
      assert.equal(await ranges('_exists_:status'), 'abcd');
      assert.equal(await ranges('status:*'), 'abcd');
      assert.equal(await ranges('NOT _exists_:status'), 'e');
      assert.equal(await ranges('_exists_:trace_id'), 'e');
      assert.equal(await ranges('_exists_:host'), 'abcde');
      assert.equal(await ranges('*'), 'abcde');
      assert.equal(await ranges(`@timestamp:[${T0 + 2 * MINUTE} TO ${T0 + 3 * MINUTE}]`), 'bc');
      assert.equal(await ranges(`@timestamp:>=${new Date(T0 + 4 * MINUTE).toISOString()}`), 'de');
      assert.equal(await ranges(`@timestamp:<"${new Date(T0 + 2 * MINUTE).toISOString()}"`), 'a');
      // Keywords compare bytewise on both dialects: "h10" sorts between "h1" and "h2".
      assert.equal(await ranges('host:[h1 TO h2]'), 'abce');
      assert.equal(await ranges('host:{h1 TO h2}'), 'b');
      assert.equal(await ranges('status:>=500 AND NOT host:h1'), 'b');
      assert.throws(() => searchCondition('message:>5'), QuerySyntaxError);
      assert.throws(() => searchCondition('@timestamp:>=yesterday'), QuerySyntaxError);
    });

    test('filters are exact matches joined with the query', async () => {
      assert.deepEqual(await find('connection', { filters: [{ field: 'service', value: 'worker' }] }), at(4, 3));
      assert.deepEqual(
        await find('', {
          filters: [
            { field: 'service', value: 'api' },
            { field: 'level', value: 'INFO' },
          ],
        }),
        at(8, 6, 5, 2),
      );
      assert.deepEqual(await find('', { filters: [{ field: 'http.status', value: '200' }] }), at(2));
      assert.deepEqual(await find('', { filters: [{ field: 'message', value: 'Disk full on /dev/sda1' }] }), at(1));
      assert.deepEqual(
        await find('', { filters: [{ field: 'weird"key\\x', value: 'v"q' }] }),
        at(6),
        'attribute names with quotes and backslashes',
      );
      assert.deepEqual(await find('', { filters: [{ field: 'user', value: "alice' OR '1'='1" }] }), []);
    });

    test('sort ascending, descending and on another field', async () => {
      assert.deepEqual(await find('connection', { sort: { field: '@timestamp', order: 'asc' } }), at(3, 4));
      assert.deepEqual(await find('connection', { sort: { field: '@timestamp', order: 'desc' } }), at(4, 3));
      const byHost = await store.search(base({ condition: searchCondition('level:info'), sort: { field: 'host', order: 'desc' } }));
      assert.deepEqual(
        byHost.entries.map((entry) => entry.host),
        ['h3', 'h1', 'h1', 'h1'],
      );
      const byStatus = await store.search(
        base({ condition: searchCondition('http.status:*00 OR user:alice OR level:error'), sort: { field: 'service', order: 'asc' } }),
      );
      assert.deepEqual(
        byStatus.entries.map((entry) => entry.service),
        ['api', 'api', 'worker'],
      );
      // Entries without the field come last in both orders, then by time.
      assert.deepEqual(await find('', { sort: { field: 'http.status', order: 'asc' }, limit: 3 }), at(2, 1, 3));
      assert.deepEqual(await find('', { sort: { field: 'http.status', order: 'desc' }, limit: 3 }), at(1, 2, 8));
    });

    test('pagination returns the page and the total', async () => {
      const page1 = await store.search(base({ limit: 3, page: 1 }));
      const page2 = await store.search(base({ limit: 3, page: 2 }));
      const page3 = await store.search(base({ limit: 3, page: 3 }));
      const page4 = await store.search(base({ limit: 3, page: 4 }));
      assert.deepEqual([page1.total, page2.total, page3.total, page4.total], [8, 8, 8, 8]);
      assert.deepEqual(
        [...messagesOf(page1.entries), ...messagesOf(page2.entries), ...messagesOf(page3.entries)],
        at(8, 7, 6, 5, 4, 3, 2, 1),
      );
      assert.deepEqual(page4.entries, []);
    });

    test('the time range includes both bounds and nothing outside', async () => {
      assert.deepEqual(await find('', { from: T0 + 2 * MINUTE, to: T0 + 4 * MINUTE }), at(4, 3, 2));
      assert.deepEqual(await find('connection', { from: T0 + 2 * MINUTE, to: T0 + 4 * MINUTE - 1 }), at(3));
      assert.deepEqual(await find('', { from: T0 + 2 * MINUTE + 1, to: T0 + 3 * MINUTE - 1 }), []);
      assert.deepEqual(await find('disk', { from: T0 + HOUR, to: T0 + 2 * HOUR }), at(8));
      assert.equal((await store.search(base({ from: T0 - DAY, to: T0 - 1 }))).total, 0);
      assert.equal((await store.search(base({ condition: searchCondition('disk'), from: T0 - DAY, to: T0 - 1 }))).total, 0);
    });

    test('tenant isolation: nothing crosses in search, histogram, fields or distinct', async () => {
      assert.deepEqual(await find('other'), []);
      assert.deepEqual(await find('secret:other-only'), []);
      assert.deepEqual(await find('service:billing'), []);
      const other = await store.search({ ...base(), tenantId: 'other' });
      assert.deepEqual(messagesOf(other.entries), ['Connection refused in other tenant', 'Disk full on other tenant']);
      const otherDisk = await store.search({ ...base({ condition: searchCondition('disk full') }), tenantId: 'other' });
      assert.deepEqual(messagesOf(otherDisk.entries), ['Disk full on other tenant']);
      const histogram = await store.histogram({ tenantId: 'acme', from: T0, to: T0 + HOUR - 1, intervalMs: HOUR, groupBy: 'level' });
      assert.deepEqual(plain(histogram), [{ ts: T0, count: 7, groups: { error: 2, info: 3, warn: 1, debug: 1 } }]);
      const fields = (await store.fields('acme')).map((field) => field.name);
      assert.ok(!fields.includes('secret'));
      assert.deepEqual(await store.distinct({ tenantId: 'acme', field: 'service', limit: 10 }), [
        { value: 'api', count: 6 },
        { value: 'worker', count: 2 },
      ]);
      assert.deepEqual(await store.distinct({ tenantId: 'nobody', field: 'service', limit: 10 }), []);
      assert.equal((await store.search({ ...base(), tenantId: 'nobody' })).total, 0);
    });

    test('histogram: every bucket from..to with empty ones, groupBy, query filters', async () => {
      const hourly = await store.histogram({ tenantId: 'acme', from: T0, to: T0 + 3 * HOUR - 1, intervalMs: HOUR });
      assert.deepEqual(hourly, [
        { ts: T0, count: 7 },
        { ts: T0 + HOUR, count: 1 },
        { ts: T0 + 2 * HOUR, count: 0 },
      ]);
      const minutes = await store.histogram({ tenantId: 'acme', from: T0, to: T0 + 10 * MINUTE - 1, intervalMs: 2 * MINUTE });
      assert.deepEqual(
        minutes.map((bucket) => bucket.count),
        [1, 2, 2, 2, 0],
      );
      assert.deepEqual(
        minutes.map((bucket) => bucket.ts),
        [0, 2, 4, 6, 8].map((m) => T0 + m * MINUTE),
      );
      const withQuery = await store.histogram({
        tenantId: 'acme',
        condition: searchCondition('connection OR disk'),
        from: T0,
        to: T0 + 2 * HOUR - 1,
        intervalMs: HOUR,
        groupBy: 'service',
      });
      assert.deepEqual(plain(withQuery), [
        { ts: T0, count: 3, groups: { api: 1, worker: 2 } },
        { ts: T0 + HOUR, count: 1, groups: { api: 1 } },
      ]);
      const byAttribute = await store.histogram({
        tenantId: 'acme',
        from: T0,
        to: T0 + HOUR - 1,
        intervalMs: HOUR,
        groupBy: 'http.status',
      });
      assert.deepEqual(plain(byAttribute), [{ ts: T0, count: 7, groups: { '500': 1, '200': 1, '': 5 } }]);
      const filtered = await store.histogram({
        tenantId: 'acme',
        from: T0,
        to: T0 + HOUR - 1,
        intervalMs: HOUR,
        condition: filtersToCondition([{ field: 'level', value: 'info' }]),
      });
      assert.deepEqual(filtered, [{ ts: T0, count: 3 }]);
    });

    test('histogram: ragged bounds give the same counts from rollups as from the entries', async () => {
      // 30 s past the minute: the edge minutes are counted from the entries, the rest from the rollups.
      const from = T0 + 2 * MINUTE + 1;
      const to = T0 + 61 * MINUTE;
      const fromRollups = await store.histogram({ tenantId: 'acme', from, to, intervalMs: MINUTE * 30 });
      const fromEntries = await store.histogram({
        tenantId: 'acme',
        from,
        to,
        intervalMs: MINUTE * 30,
        condition: searchCondition('NOT zzzznothing'),
      });
      assert.deepEqual(fromRollups, fromEntries);
      assert.deepEqual(
        fromRollups.map((bucket) => bucket.count),
        [5, 0, 1],
      );
      const precise = await store.histogram({ tenantId: 'acme', from: T0 + MINUTE + 1, to: T0 + 4 * MINUTE, intervalMs: MINUTE });
      assert.deepEqual(
        precise.map((bucket) => bucket.count),
        [0, 1, 1, 1],
      );
    });

    test('fields lists fixed fields and the attribute names with their types', async () => {
      const fields = await store.fields('acme');
      const byName = Object.fromEntries(fields.map((field) => [field.name, field.type]));
      assert.equal(byName['@timestamp'], 'date');
      assert.equal(byName.message, 'string');
      assert.equal(byName.level, 'string');
      assert.equal(byName['http.status'], 'number');
      assert.equal(byName.ok, 'boolean');
      assert.equal(byName.user, 'string');
      assert.equal(byName['k8s.pod.name'], 'string');
      assert.equal(byName.retry, 'number');
    });

    test('distinct: most frequent first, q is a case-insensitive substring, time range, limit', async () => {
      assert.deepEqual(await store.distinct({ tenantId: 'acme', field: 'level', limit: 10 }), [
        { value: 'info', count: 4 },
        { value: 'error', count: 2 },
        { value: 'debug', count: 1 },
        { value: 'warn', count: 1 },
      ]);
      assert.deepEqual(await store.distinct({ tenantId: 'acme', field: 'level', limit: 1 }), [{ value: 'info', count: 4 }]);
      assert.deepEqual(await store.distinct({ tenantId: 'acme', field: 'level', q: 'ERR', limit: 10 }), [{ value: 'error', count: 2 }]);
      assert.deepEqual(await store.distinct({ tenantId: 'acme', field: 'host', q: 'H', limit: 10 }), [
        { value: 'h1', count: 5 },
        { value: 'h2', count: 2 },
        { value: 'h3', count: 1 },
      ]);
      assert.deepEqual(await store.distinct({ tenantId: 'acme', field: 'host', from: T0 + 3 * MINUTE, to: T0 + 6 * MINUTE, limit: 10 }), [
        { value: 'h2', count: 2 },
        { value: 'h1', count: 1 },
        { value: 'h3', count: 1 },
      ]);
      assert.deepEqual(
        await store.distinct({ tenantId: 'acme', field: 'level', from: T0 + 3 * MINUTE + 1, to: T0 + 61 * MINUTE, limit: 10 }),
        [
          { value: 'info', count: 3 },
          { value: 'debug', count: 1 },
          { value: 'error', count: 1 },
        ],
      );
      assert.deepEqual(await store.distinct({ tenantId: 'acme', field: 'http.status', limit: 10 }), [
        { value: '200', count: 1 },
        { value: '500', count: 1 },
      ]);
      assert.deepEqual(await store.distinct({ tenantId: 'acme', field: 'host', q: "'; DROP TABLE x; --", limit: 10 }), []);
    });

    test('special characters and injection attempts are searched literally or refused as syntax errors', async () => {
      assert.deepEqual(await find(`"'; DROP TABLE log_entries; --"`), at(6));
      assert.deepEqual(await find(`"'; DROP TABLE log_entries;"`), at(6));
      assert.deepEqual(await find(`';`), at(6), 'a term without letters is a substring match');
      assert.deepEqual(await find('NEAR(a b)'), at(7));
      assert.deepEqual(await find('"NEAR(a b)"'), at(7));
      assert.deepEqual(await find('log_entries'), at(6));
      assert.deepEqual(await find('"*"'), at(7));
      assert.deepEqual(await find('sda1* OR NEAR'), at(7, 1));
      assert.deepEqual(await find('\\"; OR 1=1'), [], 'escaped quote and operators stay literal');
      // A `^` without a boost after a term is Lucene's syntax error too.
      for (const bad of ['status:[1 TO', '"unterminated', 'a OR', '(a', 'a)', 'NOT', 'level:', '--', '^col:']) {
        assert.throws(() => searchCondition(bad), QuerySyntaxError, bad);
      }
      assert.equal((await store.search(base())).total, 8, 'still all there');
    });

    test('pages past the last are empty with the total; another tenant has its own matches', async () => {
      assert.deepEqual(messagesOf((await store.search(base({ condition: searchCondition('disk'), from: T0 + HOUR }))).entries), at(8));
      assert.deepEqual(messagesOf((await store.search(base({ condition: searchCondition('disk'), limit: 1, page: 2 }))).entries), at(1));
      const beyond = await store.search(base({ condition: searchCondition('disk'), limit: 1, page: 5 }));
      assert.deepEqual(beyond, { entries: [], total: 2, totalRelation: 'eq' });
      assert.equal((await store.search({ ...base({ condition: searchCondition('disk') }), tenantId: 'other' })).total, 1);
    });

    test('unicode: diacritics and case fold, other scripts match', async () => {
      assert.deepEqual(await find('cafe'), at(5));
      assert.deepEqual(await find('CRÈME'), at(5));
      assert.deepEqual(await find('delivre'), at(5));
      assert.deepEqual(await find('東京'), at(5));
      assert.deepEqual(await find('unicode'), at(5));
      assert.deepEqual(await find('"café crème"'), at(5));
      assert.deepEqual(await find('—'), at(5));
    });
  });

  describe(`log store writes and retention [${dialect}]`, () => {
    let handle: TestStore;
    before(async () => {
      handle = await openTestStore(dialect);
    });
    after(async () => handle.close());

    test('a batch with an invalid entry is refused whole', async () => {
      const { store } = handle;
      await assert.rejects(
        store.append('t1', [
          { timestamp: T0, message: 'good' },
          { timestamp: Number.NaN, message: 'bad' },
        ]),
      );
      assert.equal((await store.search({ tenantId: 't1', from: 0, to: T0 + DAY, page: 1, limit: 10 })).total, 0);
    });

    test('a batch whose writes fail part-way stores nothing, and the same batch is stored once afterwards', async () => {
      const { store, database } = handle;
      const batch: LogEntry[] = [
        { timestamp: T0 + 1, message: 'halfway alpha', level: 'error', attributes: { 'first.seen': 'yes', region: 'north' } },
        { timestamp: T0 + HOUR, message: 'halfway beta', attributes: { 'first.seen': 'no' } },
      ];
      // The rollups are written after the rows and the words: a failure there leaves both half-written.
      if (dialect === 'sqlite') {
        await sql`CREATE TRIGGER refuse_rollups BEFORE INSERT ON log_rollups BEGIN SELECT RAISE(ABORT, 'refused'); END`.execute(
          database.db,
        );
      } else {
        await sql`CREATE FUNCTION refuse_rollups() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$`.execute(
          database.db,
        );
        await sql`CREATE TRIGGER refuse_rollups BEFORE INSERT ON log_rollups FOR EACH ROW EXECUTE FUNCTION refuse_rollups()`.execute(
          database.db,
        );
      }
      const everything = { tenantId: 't-half', from: T0, to: T0 + DAY - 1, page: 1, limit: 10 };
      try {
        await assert.rejects(store.append('t-half', batch), /refused/);
        assert.equal((await store.search(everything)).total, 0);
        assert.equal((await store.search({ ...everything, condition: searchCondition('halfway') })).total, 0);
        assert.ok(!(await store.fields('t-half')).some((field) => field.name === 'first.seen'));
      } finally {
        await sql`DROP TRIGGER refuse_rollups ${sql.raw(dialect === 'sqlite' ? '' : 'ON log_rollups')}`.execute(database.db);
      }
      await store.append('t-half', batch);
      const stored = await store.search({ ...everything, condition: searchCondition('first.seen:yes halfway') });
      assert.deepEqual(plain(stored.entries.map((entry) => [entry.message, entry.attributes])), [
        ['halfway alpha', { 'first.seen': 'yes', region: 'north' }],
      ]);
      assert.equal((await store.search({ ...everything, condition: searchCondition('halfway') })).total, 2);
      const { page: _page, limit: _limit, ...range } = everything;
      assert.deepEqual(await store.histogram({ ...range, intervalMs: DAY }), [{ ts: T0, count: 2 }]);
    });

    test('NUL characters, lone surrogates and odd attribute values are stored safely', async () => {
      const { store } = handle;
      await store.append('t2', [
        {
          timestamp: T0,
          message: 'nul\u0000here \ud800 end',
          attributes: { 'a\u0000b': 'x\u0000y', n: 1.5, big: 1e21, nested: { no: 1 } as never, inf: Infinity },
        },
      ]);
      const result = await store.search({ tenantId: 't2', condition: searchCondition('here end'), from: T0, to: T0, page: 1, limit: 10 });
      assert.equal(result.total, 1);
      assert.equal(result.entries[0]!.message, 'nul\uFFFDhere \uFFFD end');
      assert.deepEqual(plain(result.entries[0]!.attributes), { 'a\uFFFDb': 'x\uFFFDy', n: 1.5, big: 1e21 });
      assert.deepEqual(
        messagesOf(
          (await store.search({ tenantId: 't2', condition: searchCondition('n:1.5'), from: T0, to: T0, page: 1, limit: 10 })).entries,
        ),
        ['nul\uFFFDhere \uFFFD end'],
      );
    });

    test("tabs, line breaks, backslashes and COPY's \\N come back as they were sent, in every column", async () => {
      const { store } = handle;
      const odd = 'a\tb\nc\rd\\e \\N \\\\t \\. end';
      const entry: LogEntry = {
        timestamp: T0,
        level: 'warn',
        service: `svc${odd}`,
        host: `host${odd}`,
        trace_id: `t${odd}`,
        span_id: `s${odd}`,
        message: `copy ${odd}`,
        attributes: { [`key${odd}`]: `value${odd}`, plain: '\\N', slash: '\\' },
      };
      await store.append('t-copy', [entry, { timestamp: T0 + 1, message: '\\N' }]);
      const { entries } = await store.search({
        tenantId: 't-copy',
        from: T0,
        to: T0 + 1,
        page: 1,
        limit: 10,
        sort: { field: '@timestamp', order: 'asc' },
      });
      assert.equal(entries.length, 2);
      const [stored, bare] = entries;
      assert.deepEqual(plain([stored!.service, stored!.host, stored!.trace_id, stored!.span_id, stored!.message, stored!.attributes]), [
        entry.service,
        entry.host,
        entry.trace_id,
        entry.span_id,
        entry.message,
        entry.attributes,
      ]);
      assert.equal(bare!.message, '\\N', 'a message that is the text \\N is not NULL');
      assert.equal(
        (await store.search({ tenantId: 't-copy', condition: searchCondition('end'), from: T0, to: T0 + 1, page: 1, limit: 10 })).total,
        1,
      );
    });

    test('retention removes whole days of one tenant only', async () => {
      const { store } = handle;
      const day = (d: number, h: number): number => T0 + d * DAY + h * HOUR;
      const entries = (tenant: string): LogEntry[] =>
        [0, 1, 2].flatMap((d) =>
          [1, 13].map((h) => ({ timestamp: day(d, h), message: `${tenant} day ${d} hour ${h}`, level: 'info', service: 'svc' })),
        );
      await store.append('keep', entries('keep'));
      await store.append('drop', entries('drop'));
      // Day-aligned: a cutoff in the middle of day 1 removes day 0 only.
      assert.equal(await store.removeOlderThan('drop', day(1, 12)), 2);
      const left = await store.search({
        tenantId: 'drop',
        from: T0,
        to: day(3, 0),
        page: 1,
        limit: 10,
        sort: { field: '@timestamp', order: 'asc' },
      });
      assert.deepEqual(messagesOf(left.entries), ['drop day 1 hour 1', 'drop day 1 hour 13', 'drop day 2 hour 1', 'drop day 2 hour 13']);
      assert.equal(
        (await store.search({ tenantId: 'drop', condition: searchCondition('day'), from: T0, to: day(0, 23), page: 1, limit: 10 })).total,
        0,
      );
      const hist = await store.histogram({ tenantId: 'drop', from: T0, to: day(3, 0) - 1, intervalMs: DAY });
      assert.deepEqual(
        hist.map((bucket) => bucket.count),
        [0, 2, 2],
      );
      assert.deepEqual(await store.distinct({ tenantId: 'drop', field: 'level', limit: 5 }), [{ value: 'info', count: 4 }]);
      // The other tenant keeps everything.
      assert.equal((await store.search({ tenantId: 'keep', from: T0, to: day(3, 0), page: 1, limit: 10 })).total, 6);
      // Now every tenant's day 0 and 1 go; then nothing is left to remove.
      assert.equal(await store.removeOlderThan('keep', day(2, 0)), 4);
      assert.equal(await store.removeOlderThan('drop', day(2, 0)), 2);
      assert.equal(await store.removeOlderThan('drop', day(2, 0)), 0);
      assert.equal((await store.search({ tenantId: 'keep', from: T0, to: day(3, 0), page: 1, limit: 10 })).total, 2);
      // Writing into a removed day again works (PostgreSQL recreates the partition).
      await store.append('drop', [{ timestamp: day(0, 5), message: 'late arrival' }]);
      assert.deepEqual(
        messagesOf(
          (await store.search({ tenantId: 'drop', condition: searchCondition('late'), from: T0, to: day(3, 0), page: 1, limit: 10 }))
            .entries,
        ),
        ['late arrival'],
      );
    });

    test('a large purge by retention lets the event loop and new batches in between its own transactions', async () => {
      const { store } = handle;
      // Four of retention's batches (5,000 entries each) of one old day.
      for (let start = 0; start < 20_000; start += 5_000) {
        await store.append(
          'purged',
          Array.from({ length: 5_000 }, (_, k) => ({ timestamp: T0 + (start + k) * 1_000, message: `old ${start + k}` })),
        );
      }
      let purged = false;
      const purge = store.removeOlderThan('purged', T0 + 2 * DAY).then((removed) => {
        purged = true;
        return removed;
      });
      // A timer, as a request or a shipper's next batch arrives. SQLite runs on the event loop: a purge
      // that never yields keeps every timer and request waiting until its last transaction (measured:
      // 36 s at 10M entries). (PostgreSQL's purge is I/O and drops whole hour partitions: it may even
      // end first, and nothing waits for it.)
      await new Promise((resolve) => setTimeout(resolve, 0));
      if (dialect === 'sqlite') assert.equal(purged, false, 'the event loop turned during the purge');
      await store.append('purged', [{ timestamp: T0 + 3 * DAY, message: 'arrived during the purge' }]);
      if (dialect === 'sqlite') assert.equal(purged, false, 'the new batch was stored before the purge ended');
      assert.equal(await purge, 20_000);
      assert.equal((await store.search({ tenantId: 'purged', from: T0, to: T0 + 4 * DAY, page: 1, limit: 10 })).total, 1);
    });

    test('a day being purged is found by no read, indexed or not, from the moment its index is gone', async () => {
      const { store, database } = handle;
      const { sql } = await import('kysely');
      for (let start = 0; start < 20_000; start += 5_000) {
        await store.append(
          'fading',
          Array.from({ length: 5_000 }, (_, k) => ({
            timestamp: T0 + (start + k) * 1_000,
            message: `old ${start + k}`,
            attributes: { n: k },
          })),
        );
      }
      await store.append('fading', [{ timestamp: T0 + 3 * DAY, message: 'new one', attributes: { n: 1 } }]);
      const day = { tenantId: 'fading', from: T0, to: T0 + 4 * DAY, page: 1, limit: 5 };
      let done = false;
      const purge = store.removeOlderThan('fading', T0 + 2 * DAY).finally(() => (done = true));
      let hiddenWhileRowsLeft = false;
      while (!done) {
        const indexed = (await store.search({ ...day, condition: searchCondition('old') })).total;
        const unindexed = await store.search({ ...day, condition: searchCondition('n:>=0') });
        const { rows } = await sql<{ n: number }>`SELECT ${
          dialect === 'sqlite' ? sql`count(*)` : sql`coalesce(sum(cardinality(ts)), 0)`
        } AS n FROM ${dialect === 'sqlite' ? sql`log_entries` : sql`log_blocks`} WHERE tenant_id = 'fading'`.execute(database.db);
        if (indexed === 0) {
          assert.deepEqual(messagesOf(unindexed.entries), ['new one'], 'rows of the purged day are read by no search');
          if (Number(rows[0]!.n) > 1) hiddenWhileRowsLeft = true;
        }
        await new Promise((resolve) => setImmediate(resolve));
      }
      assert.equal(await purge, 20_000);
      // SQLite deletes rows for a while after the day's index is gone; PostgreSQL detaches the day at once.
      if (dialect === 'sqlite') assert.ok(hiddenWhileRowsLeft, 'the purge was watched while rows were left');
      assert.deepEqual(messagesOf((await store.search({ ...day, condition: searchCondition('n:>=0') })).entries), ['new one']);
    });

    test('a purged day leaves every read at once, not an hour at a time', async () => {
      const { store } = handle;
      // Six hours of one old day: six index tables on SQLite, six partitions on PostgreSQL.
      for (let start = 0; start < 20_000; start += 5_000) {
        await store.append(
          'whole',
          Array.from({ length: 5_000 }, (_, k) => ({ timestamp: T0 + (start + k) * 1_000, message: `old ${start + k}`, level: 'info' })),
        );
      }
      // Another tenant in the same hours: PostgreSQL then deletes rows partition by partition.
      await store.append(
        'beside',
        Array.from({ length: 6 }, (_, hour) => ({ timestamp: T0 + hour * HOUR, message: 'other tenant' })),
      );
      const day = { tenantId: 'whole', from: T0, to: T0 + DAY - 1, page: 1, limit: 0 };
      let done = false;
      const purge = store.removeOlderThan('whole', T0 + 2 * DAY).finally(() => (done = true));
      // A word, found through the index; a level, counted from the rollups.
      const reads = [{ condition: searchCondition('old') }, { condition: searchCondition('level:info') }];
      const seen: number[] = [];
      while (!done) {
        for (const read of reads) seen.push((await store.search({ ...day, ...read })).total);
        await new Promise((resolve) => setImmediate(resolve));
      }
      assert.equal(await purge, 20_000);
      assert.deepEqual(
        seen.filter((total) => total !== 20_000 && total !== 0),
        [],
        'every read saw the whole day or none of it',
      );
      const gone = seen.indexOf(0);
      assert.ok(gone >= 0, 'the purge was watched after the day was gone');
      assert.deepEqual(
        seen.slice(gone).filter((total) => total !== 0),
        [],
        'once gone, the day stayed gone',
      );
    });

    test('a removal that stopped half-way keeps its day hidden until the next one ends', async () => {
      const { store, database } = handle;
      const { sql } = await import('kysely');
      await store.append('halted', [
        { timestamp: T0 + HOUR, message: 'old entry', level: 'info' },
        { timestamp: T0 + 3 * DAY, message: 'new entry', level: 'info' },
      ]);
      const all = { tenantId: 'halted', from: T0, to: T0 + 4 * DAY, page: 1, limit: 10 };
      // What a removal leaves when the process stops after its first write.
      await sql`INSERT INTO log_retention_floors (tenant_id, hidden_before) VALUES ('halted', ${T0 + 2 * DAY})`.execute(database.db);
      assert.deepEqual(messagesOf((await store.search(all)).entries), ['new entry']);
      assert.equal((await store.search({ ...all, condition: searchCondition('old') })).total, 0);
      assert.deepEqual(
        (await store.histogram({ tenantId: 'halted', from: T0, to: T0 + DAY - 1, intervalMs: DAY })).map((bucket) => bucket.count),
        [0],
      );
      assert.deepEqual(await store.distinct({ tenantId: 'halted', field: 'level', from: T0, to: T0 + DAY - 1, limit: 5 }), []);
      assert.equal(await store.removeOlderThan('halted', T0 + 2 * DAY), 1);
      // Once removed, nothing is hidden: an old entry that arrives later is found, as without retention.
      await store.append('halted', [{ timestamp: T0 + 2 * HOUR, message: 'late old entry' }]);
      assert.deepEqual(messagesOf((await store.search(all)).entries), ['new entry', 'late old entry']);
    });

    test("a removal with an earlier cutoff leaves a later removal's floor in place", async () => {
      const { store, database } = handle;
      const { sql } = await import('kysely');
      await store.append('overlap', [
        { timestamp: T0 + HOUR, message: 'day one' },
        { timestamp: T0 + DAY + HOUR, message: 'day two' },
        { timestamp: T0 + 3 * DAY, message: 'day four' },
      ]);
      // A removal of the first two days is under way (its floor is written) when one of the first day runs.
      await sql`INSERT INTO log_retention_floors (tenant_id, hidden_before) VALUES ('overlap', ${T0 + 2 * DAY})`.execute(database.db);
      assert.equal(await store.removeOlderThan('overlap', T0 + DAY), 1);
      const all = { tenantId: 'overlap', from: T0, to: T0 + 4 * DAY, page: 1, limit: 10 };
      assert.deepEqual(messagesOf((await store.search(all)).entries), ['day four'], 'the second day stays hidden');
      assert.equal(await store.removeOlderThan('overlap', T0 + 2 * DAY), 1);
      assert.deepEqual(messagesOf((await store.search(all)).entries), ['day four']);
      const { rows } = await sql`SELECT 1 FROM log_retention_floors WHERE tenant_id = 'overlap'`.execute(database.db);
      assert.equal(rows.length, 0, 'the floor went with the last removal');
    });

    test('a retried batch: entries whose document id is stored or repeated are left out, the rest stored and counted', async () => {
      const { store } = handle;
      const at = (minute: number, message: string, level: string, documentId?: string) => ({
        timestamp: T0 + 2 * HOUR + minute * MINUTE,
        message,
        level,
        service: 'retry',
        ...(documentId === undefined ? {} : { documentId }),
      });
      assert.deepEqual(
        (await store.append('retried', [at(5, 'first one', 'info', 'd1'), at(6, 'first two', 'info', 'd2')])).duplicates,
        [],
      );
      // Out of time order, as a shipper resends: stored ids, a new one twice, and an entry without an id.
      const { duplicates } = await store.append('retried', [
        at(9, 'again two', 'error', 'd2'),
        at(1, 'new three', 'warn', 'd3'),
        at(4, 'no id', 'debug'),
        at(8, 'again one', 'error', 'd1'),
        at(2, 'three twice', 'error', 'd3'),
      ]);
      assert.deepEqual(duplicates, [0, 3, 4]);
      const range = { tenantId: 'retried', from: T0 + 2 * HOUR, to: T0 + 3 * HOUR };
      const page = await store.search({ ...range, page: 1, limit: 10, sort: { field: '@timestamp', order: 'asc' } });
      assert.deepEqual(
        page.entries.map((entry) => entry.message),
        ['new three', 'no id', 'first one', 'first two'],
      );
      const histogram = await store.histogram({ ...range, to: range.to - 1, intervalMs: HOUR, groupBy: 'level' });
      assert.deepEqual(plain(histogram), [{ ts: T0 + 2 * HOUR, count: 4, groups: { info: 2, warn: 1, debug: 1 } }]);
      assert.equal((await store.search({ ...range, condition: searchCondition('level:error'), page: 1, limit: 1 })).total, 0);
    });

    test('a batch that fails half-way is not stored at all; the batches after it are stored and found', async () => {
      const { store, database } = handle;
      const { sql } = await import('kysely');
      const entry = (host: string, service = 'ok') => ({ timestamp: T0 + HOUR, message: `from ${host}`, level: 'info', service, host });
      await store.append('failing', [entry('h-old')]);
      // The batch's last statements (its rollups) fail, after its entries, index rows and new facet
      // values were written in its transaction.
      const trigger =
        dialect === 'sqlite'
          ? sql`CREATE TRIGGER boom BEFORE INSERT ON log_rollups WHEN NEW.service = 'boom' BEGIN SELECT RAISE(ABORT, 'boom'); END`
          : sql`CREATE FUNCTION boom() RETURNS trigger AS $$ BEGIN IF NEW.service = 'boom' THEN RAISE EXCEPTION 'boom'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql;
              CREATE TRIGGER boom BEFORE INSERT ON log_rollups FOR EACH ROW EXECUTE FUNCTION boom()`;
      await trigger.execute(database.db);
      await assert.rejects(store.append('failing', [entry('h-new', 'boom'), entry('h-new2', 'boom')]), /boom/);
      await sql`DROP TRIGGER boom${dialect === 'postgres' ? sql` ON log_rollups` : sql``}`.execute(database.db);
      await store.append('failing', [entry('h-new2')]);
      await store.append('failing', [entry('h-new')]);
      // A writer that starts afresh (a restart) numbers values from what is stored, and must find the
      // entries written before it.
      const restarted = createLogStore(database.db, dialect);
      await restarted.append('failing', [entry('h-other')]);
      await restarted.append('failing', [entry('h-new')]);
      const count = async (query: string) =>
        (await restarted.search({ tenantId: 'failing', condition: searchCondition(query), from: T0, to: T0 + DAY, page: 1, limit: 10 }))
          .total;
      assert.deepEqual(
        [await count('host:h-old'), await count('host:h-new'), await count('host:h-new2'), await count('service:boom')],
        [1, 2, 1, 0],
      );
    });

    test('concurrent batches are all stored, with the facet values they add numbered once', async () => {
      const { store, database } = handle;
      const { sql } = await import('kysely');
      // Each batch brings a host no other has, and one of three services the others bring too: while
      // one batch writes, the next prepares its facets against a dictionary that is about to change
      // (loaded by a first batch, an hour before the others: batches then prepare with the dictionary).
      await store.append('conc', [{ timestamp: T0 - HOUR, message: 'first', service: 'first', host: 'first' }]);
      await Promise.all(
        Array.from({ length: 8 }, (_, batch) =>
          store.append(
            'conc',
            Array.from({ length: 50 }, (_, i) => ({
              timestamp: T0 + batch * 1000 + i,
              message: `batch ${batch} item ${i}`,
              level: 'info',
              service: `s${batch % 3}`,
              host: `h${batch}`,
            })),
          ),
        ),
      );
      const count = async (query: string) =>
        (await store.search({ tenantId: 'conc', condition: searchCondition(query), from: T0, to: T0 + DAY, page: 1, limit: 1 })).total;
      assert.deepEqual([await count('service:s0'), await count('service:s1'), await count('service:s2')], [150, 150, 100]);
      assert.deepEqual(await Promise.all(Array.from({ length: 8 }, (_, batch) => count(`host:h${batch}`))), Array(8).fill(50));
      // With a word, the index answers (the counts above may come from rollups).
      assert.deepEqual([await count('item service:s0'), await count('item service:s2')], [150, 100]);
      assert.deepEqual(await Promise.all(Array.from({ length: 8 }, (_, batch) => count(`item host:h${batch}`))), Array(8).fill(50));
      const { rows } = await sql<{ n: number; tokens: number }>`SELECT count(*) AS n, count(DISTINCT token) AS tokens
        FROM log_facet_values WHERE tenant_id = 'conc'`.execute(database.db);
      assert.equal(Number(rows[0]!.tokens), Number(rows[0]!.n));
      assert.equal((await store.search({ tenantId: 'conc', from: T0, to: T0 + DAY, page: 1, limit: 1 })).total, 400);
      assert.equal(
        (await store.search({ tenantId: 'conc', condition: searchCondition('item'), from: T0, to: T0 + DAY, page: 1, limit: 1 })).total,
        400,
      );
      const hist = await store.histogram({ tenantId: 'conc', from: T0, to: T0 + MINUTE - 1, intervalMs: MINUTE });
      assert.deepEqual(hist, [{ ts: T0, count: 400 }]);
    });
  });
}

// PostgreSQL keeps one partition per UTC hour, shared by the tenants: retention (whole days) drops a
// partition once no tenant has rows left in it, and ingest recreates it on demand.
describeOnPostgres('log store partitions [postgres]', () => {
  let handle: TestStore;
  before(async () => {
    handle = await openTestStore('postgres');
  });
  after(async () => handle.close());

  const partitions = async (): Promise<string[]> => {
    const { sql } = await import('kysely');
    const { rows } = await sql<{ name: string }>`SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'log_blocks'::regclass ORDER BY 1`.execute(handle.database.db);
    return rows.map((row) => row.name);
  };

  test('partitions are created per hour at ingest and dropped when the last tenant’s retention passed', async () => {
    const { store } = handle;
    for (const tenant of ['a', 'b']) {
      await store.append(tenant, [
        { timestamp: T0 + HOUR, message: `${tenant} day 0` },
        { timestamp: T0 + DAY + HOUR, message: `${tenant} day 1` },
      ]);
    }
    assert.deepEqual(await partitions(), ['log_blocks_p2026112001', 'log_blocks_p2026112101']);
    assert.equal(await store.removeOlderThan('a', T0 + DAY), 1);
    assert.deepEqual(await partitions(), ['log_blocks_p2026112001', 'log_blocks_p2026112101'], 'tenant b still has rows on day 0');
    assert.equal((await store.search({ tenantId: 'b', from: T0, to: T0 + 2 * DAY, page: 1, limit: 10 })).total, 2);
    assert.equal(await store.removeOlderThan('b', T0 + DAY), 1);
    assert.deepEqual(await partitions(), ['log_blocks_p2026112101']);
    await store.append('a', [{ timestamp: T0 + 2 * HOUR, message: 'a late day 0' }]);
    assert.deepEqual(await partitions(), ['log_blocks_p2026112002', 'log_blocks_p2026112101']);
    assert.equal((await store.search({ tenantId: 'a', from: T0, to: T0 + 2 * DAY, page: 1, limit: 10 })).total, 2);
  });

  test('another process that still believes a dropped partition exists recreates it and stores the batch', async () => {
    const { store } = handle;
    const otherProcess = createLogStore(handle.database.db, 'postgres');
    await otherProcess.append('c', [{ timestamp: T0 + 5 * DAY, message: 'c first' }]);
    assert.equal(await store.removeOlderThan('c', T0 + 6 * DAY), 1);
    assert.ok(!(await partitions()).includes('log_blocks_p2026112500'));
    await otherProcess.append('c', [{ timestamp: T0 + 5 * DAY + 1, message: 'c second' }]);
    assert.deepEqual(messagesOf((await store.search({ tenantId: 'c', from: T0, to: T0 + 6 * DAY, page: 1, limit: 10 })).entries), [
      'c second',
    ]);
  });

  const removedTables = async (): Promise<string[]> => {
    const { sql } = await import('kysely');
    const { rows } = await sql<{
      name: string;
    }>`SELECT relname AS name FROM pg_class WHERE relname LIKE 'log\\_removed\\_%' ORDER BY 1`.execute(handle.database.db);
    return rows.map((row) => row.name);
  };

  test('a removed day leaves no table behind, counts come from the rollups, and a stopped run’s leftovers go with the next run', async () => {
    const { store } = handle;
    const { sql } = await import('kysely');
    // Two hours of day 10 with 3 and 2 entries, one hour of day 11.
    await store.append('d', [
      ...[1, 2, 3].map((n) => ({ timestamp: T0 + 10 * DAY + 3 * HOUR + n, message: `d ${n}`, level: 'info' })),
      ...[1, 2].map((n) => ({ timestamp: T0 + 10 * DAY + 7 * HOUR + n, message: `d ${n}`, level: 'warn', service: 's' })),
      { timestamp: T0 + 11 * DAY, message: 'd kept' },
    ]);
    // What a run stopped between detaching and dropping leaves: a detached, renamed table.
    await sql`CREATE TABLE log_removed_p2026110100_1 (LIKE log_blocks)`.execute(handle.database.db);
    assert.equal(await store.removeOlderThan('d', T0 + 11 * DAY), 5);
    assert.deepEqual(await removedTables(), []);
    assert.ok(!(await partitions()).some((name) => name.startsWith('log_blocks_p202611300')));
    assert.equal((await store.search({ tenantId: 'd', from: T0, to: T0 + 12 * DAY, page: 1, limit: 10 })).total, 1);
    assert.deepEqual(await store.distinct({ tenantId: 'd', field: 'level', limit: 5 }), []);
    // The same hour written and removed again.
    await store.append('d', [{ timestamp: T0 + 10 * DAY + 3 * HOUR, message: 'd again' }]);
    assert.equal(await store.removeOlderThan('d', T0 + 11 * DAY), 1);
    assert.deepEqual(await removedTables(), []);
    assert.equal(
      (await store.search({ tenantId: 'd', condition: searchCondition('again'), from: T0, to: T0 + 12 * DAY, page: 1, limit: 10 })).total,
      0,
    );
  });

  test('retention removes a tenant’s postings with its rows, in a shared hour or not; a batch stored in the hour since keeps its own', async () => {
    const { sql } = await import('kysely');
    const { store, database } = handle;
    const day = T0 + 30 * DAY;
    // Hour 1 holds both tenants' rows (its rows are deleted), hour 2 only p's (its table is detached).
    await store.append('p', [
      { timestamp: day + HOUR, message: 'alpha p1' },
      { timestamp: day + 2 * HOUR, message: 'alpha p2', host: 'h' },
      { timestamp: day + DAY, message: 'alpha p kept', host: 'h' },
    ]);
    await store.append('q', [{ timestamp: day + HOUR + 5, message: 'alpha q1', host: 'h' }]);
    const batches = async (tenant: string) => {
      const { rows } = await sql<{ n: string }>`SELECT sum(entries)::text AS n FROM log_batches
        WHERE tenant_id = ${tenant} AND first_ts >= ${day}::bigint AND first_ts < ${day + DAY}::bigint`.execute(database.db);
      return Number(rows[0]!.n ?? 0);
    };
    const total = async (tenant: string, query: string) =>
      (await store.search({ tenantId: tenant, condition: searchCondition(query), from: day, to: day + 2 * DAY, page: 1, limit: 1 })).total;
    assert.deepEqual([await batches('p'), await total('p', 'alpha'), await total('p', 'host:h')], [2, 3, 2]);
    assert.equal(await store.removeOlderThan('p', day + DAY), 2);
    assert.deepEqual([await batches('p'), await total('p', 'alpha'), await total('p', 'host:h')], [0, 1, 1]);
    assert.deepEqual([await batches('q'), await total('q', 'alpha')], [1, 1], 'the other tenant keeps its postings');
    // An entry of the removed day that arrives later is counted once, by postings of its own.
    await store.append('p', [{ timestamp: day + 2 * HOUR + 7, message: 'alpha late' }]);
    const byHour = await store.histogram({
      tenantId: 'p',
      condition: searchCondition('alpha'),
      from: day,
      to: day + 3 * HOUR - 1,
      intervalMs: HOUR,
    });
    assert.deepEqual(
      byHour.map((bucket) => bucket.count),
      [0, 0, 1],
    );
  });

  test('removing an emptied hour’s postings spares the batches numbered after the hour was emptied', async () => {
    const { sql } = await import('kysely');
    const { removePostings } = await import('../../../src/logs/modules/store/postgres/postgres-postings-write.js');
    const { store, database } = handle;
    const hour = T0 + 32 * DAY;
    await store.append('r', [{ timestamp: hour + 1, message: 'before the removal' }]);
    const { rows } = await sql<{ batch: string }>`SELECT batch::text FROM log_batches WHERE tenant_id = 'r'`.execute(database.db);
    // A batch that stores rows in the hour after its rows were removed, before its postings are.
    await store.append('r', [{ timestamp: hour + 2, message: 'after the removal' }]);
    await removePostings(database.db, 'r', { start: hour, lastPiece: Number(rows[0]!.batch) });
    const left = await sql<{
      entries: number;
      first_ts: string;
    }>`SELECT entries, first_ts::text FROM log_batches WHERE tenant_id = 'r'`.execute(database.db);
    assert.deepEqual(left.rows, [{ entries: 1, first_ts: String(hour + 2) }]);
    const { rows: postings } = await sql<{ n: string }>`SELECT count(*)::text AS n FROM log_postings WHERE tenant_id = 'r'`.execute(
      database.db,
    );
    assert.equal(postings[0]!.n, '1', 'one group for a batch of one entry');
  });

  test('postings of more batches than one read takes: histograms count them all, a bounded total stops past its bound', async () => {
    const { store } = handle;
    const day = T0 + 34 * DAY;
    // 1,050 batches of one entry (pieces are read a thousand at a time), two seconds apart.
    const entries = Array.from({ length: 1_050 }, (_, n) => ({
      timestamp: day + n * 2_000,
      message: n % 3 === 0 ? `tick ${n}` : `tock ${n}`,
    }));
    for (let first = 0; first < entries.length; first += 50) {
      await Promise.all(entries.slice(first, first + 50).map((entry) => store.append('pages', [entry])));
    }
    const to = day + 2_100_000 - 1;
    const histogram = await store.histogram({
      tenantId: 'pages',
      condition: searchCondition('tick'),
      from: day,
      to,
      intervalMs: 10 * MINUTE,
    });
    assert.deepEqual(
      histogram.map((bucket) => bucket.count),
      [100, 100, 100, 50],
    );
    const total = (trackTotal?: number) =>
      store.search({ tenantId: 'pages', condition: searchCondition('tock'), from: day, to, page: 1, limit: 1, trackTotal });
    for (const [bound, expected] of [
      [undefined, [700, 'eq']],
      [10, [10, 'gte']],
    ] as const) {
      const { total: found, totalRelation } = await total(bound);
      assert.deepEqual([found, totalRelation], expected);
    }
  });

  test('a phrase of two common words is counted from its pair; a batch without the pair is checked on its rows, also in a shared millisecond', async () => {
    const { store, database } = handle;
    const hour = T0 + 38 * DAY;
    // A: 100 entries a second apart, both words in all of them, in a row in half (its piece posts the pair).
    const a = Array.from({ length: 100 }, (_, n) => ({
      timestamp: hour + n * 1_000,
      message: n % 2 === 0 ? `connection refused by peer #a${n}` : `refused connection #a${n}`,
    }));
    // B: three entries, too few for pairs; one at the millisecond of A's first match.
    const b = [
      { timestamp: hour, message: 'connection refused again #b0' },
      { timestamp: hour + 2_000, message: 'refused connection #b1' },
      { timestamp: hour + 4_000, message: 'connection refused #b2' },
    ];
    await store.append('pairs', a);
    await store.append('pairs', b);
    const range = { tenantId: 'pairs', condition: searchCondition('"connection refused"'), from: hour, to: hour + HOUR - 1 };
    const counts = async () => ({
      total: (await store.search({ ...range, page: 1, limit: 1 })).total,
      hour: (await store.histogram({ ...range, intervalMs: HOUR })).map((bucket) => bucket.count),
      tenSeconds: (await store.histogram({ ...range, intervalMs: 10_000 })).slice(0, 11).map((bucket) => bucket.count),
    });
    const expected = { total: 52, hour: [52], tenSeconds: [7, 5, 5, 5, 5, 5, 5, 5, 5, 5, 0] };
    assert.deepEqual(await counts(), expected);
    // A's matches come from its pair, not its entries: with its blocks gone, the counts stay.
    const before = (await store.search({ ...range, condition: searchCondition('"connection refused by"'), page: 1, limit: 1 })).total;
    await sql`DELETE FROM log_blocks WHERE tenant_id = 'pairs' AND message[1] LIKE '%#a%'`.execute(database.db);
    assert.deepEqual(await counts(), expected);
    assert.deepEqual(
      [before, (await store.search({ ...range, condition: searchCondition('"connection refused by"'), page: 1, limit: 1 })).total],
      [50, 0],
      'three words: the entries are checked (and A is gone)',
    );
  });

  test('a page of a rare word among many rows: the newest and oldest matches, whatever lies between them', async () => {
    const { store } = handle;
    const hour = T0 + 36 * DAY;
    // 6,600 entries in an hour, a needle every 120th: the 50 newest needles span 6,000 rows.
    const entries = Array.from({ length: 6_600 }, (_, n) => ({
      timestamp: hour + n * 545,
      message: n % 120 === 0 ? `needle ${n}` : `filler ${n}`,
    }));
    for (let first = 0; first < entries.length; first += 1_000) await store.append('wide', entries.slice(first, first + 1_000));
    const needles = entries.filter((entry) => entry.message.startsWith('needle')).map((entry) => entry.message);
    for (const order of ['desc', 'asc'] as const) {
      const page = await store.search({
        tenantId: 'wide',
        condition: searchCondition('needle'),
        from: hour,
        to: hour + HOUR - 1,
        page: 1,
        limit: 50,
        sort: { field: '@timestamp', order },
      });
      assert.equal(page.total, 55);
      assert.deepEqual(messagesOf(page.entries), order === 'desc' ? needles.slice(-50).reverse() : needles.slice(0, 50));
    }
  });

  /** `size` entries a millisecond apart from `start`; the one at `marked` says `marker` (a trigger's cue). */
  const copyBatch = (start: number, size: number, marked: number, marker: string): LogEntry[] =>
    Array.from({ length: size }, (_, index) => ({ timestamp: start + index, message: index === marked ? marker : `copy row ${index}` }));

  test('a batch whose connection the server drops while its blocks are stored is not stored, and the pool serves the next batches', async () => {
    const { sql } = await import('kysely');
    const { store, database } = handle;
    const batch = (size: number, stallAt = -1) => copyBatch(T0 + 22 * DAY, size, stallAt, 'copy stall');
    // Row 1,000 of 5,000 waits in the server until its backend is terminated (a restart, a failover).
    await sql`CREATE FUNCTION copy_stall() RETURNS trigger AS $$ BEGIN IF 'copy stall' = ANY(NEW.message) THEN PERFORM pg_sleep(60); END IF; RETURN NEW; END $$ LANGUAGE plpgsql;
      CREATE TRIGGER copy_stall BEFORE INSERT ON log_blocks FOR EACH ROW EXECUTE FUNCTION copy_stall()`.execute(database.db);
    try {
      const stalled = store.append('copy-dropped', batch(5_000, 999));
      stalled.catch(() => undefined);
      const pid = await eventually(async () => {
        const { rows } = await sql<{ pid: number }>`SELECT pid FROM pg_stat_activity
          WHERE query LIKE 'INSERT INTO log_blocks%' AND wait_event = 'PgSleep'`.execute(database.db);
        assert.equal(rows.length, 1, 'the insert is waiting in the server');
        return rows[0]!.pid;
      });
      await sql`SELECT pg_terminate_backend(${pid}::int)`.execute(database.db);
      await assert.rejects(stalled, /terminat|connection|ECONNRESET|not queryable/i);
    } finally {
      await sql`DROP TRIGGER copy_stall ON log_blocks; DROP FUNCTION copy_stall()`.execute(database.db);
    }
    const count = (tenantId: string) =>
      store.search({ tenantId, from: T0 + 22 * DAY, to: T0 + 23 * DAY, page: 1, limit: 1, trackTotal: 10_000 });
    assert.equal((await count('copy-dropped')).total, 0);
    await Promise.all(Array.from({ length: 12 }, (_, n) => store.append(`copy-next-${n}`, batch(1_000))));
    for (let n = 0; n < 12; n += 1) assert.equal((await count(`copy-next-${n}`)).total, 1_000);
  });

  test(
    'a batch that waits on a stalled server past the write timeout fails, stores nothing, and the next batch is stored',
    { timeout: 20_000 },
    async () => {
      const { sql } = await import('kysely');
      const { database } = handle;
      const store = createLogStore(database.db, 'postgres', { writeTimeoutMs: 300 });
      const day = T0 + 30 * DAY;
      await database.db.connection().execute(async (other) => {
        await sql`BEGIN`.execute(other);
        // Another session holds the rollups: the batch's rows are copied, then its counts wait, as on a
        // server that stalls (without the timeout, until the lock goes: this test's own timeout).
        await sql`LOCK TABLE log_rollups IN ACCESS EXCLUSIVE MODE`.execute(other);
        try {
          await assert.rejects(store.append('stalled', [{ timestamp: day, message: 'waits' }]), /statement timeout/);
        } finally {
          await sql`ROLLBACK`.execute(other);
        }
      });
      await store.append('stalled', [{ timestamp: day + 1, message: 'after' }]);
      const found = await store.search({ tenantId: 'stalled', from: day, to: day + HOUR, page: 1, limit: 10 });
      assert.deepEqual(
        found.entries.map((entry) => entry.message),
        ['after'],
      );
    },
  );

  test('a batch whose blocks the server refuses part-way stores nothing, and every pooled connection serves the batches after it', async () => {
    const { sql } = await import('kysely');
    const { store, database } = handle;
    const batch = (size: number, failAt = -1) => copyBatch(T0 + 20 * DAY, size, failAt, 'copy boom');
    await sql`CREATE FUNCTION copy_boom() RETURNS trigger AS $$ BEGIN IF 'copy boom' = ANY(NEW.message) THEN RAISE EXCEPTION 'copy boom'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql;
      CREATE TRIGGER copy_boom BEFORE INSERT ON log_blocks FOR EACH ROW EXECUTE FUNCTION copy_boom()`.execute(database.db);
    try {
      // The 3,000th of 5,000 rows fails while the rest of the data is still on its way; twelve at once
      // take every connection of the pool (ten), some of them twice.
      const results = await Promise.allSettled(Array.from({ length: 12 }, (_, n) => store.append(`copy-fail-${n}`, batch(5_000, 2_999))));
      assert.ok(results.every((result) => result.status === 'rejected' && /copy boom/.test(String(result.reason))));
    } finally {
      await sql`DROP TRIGGER copy_boom ON log_blocks; DROP FUNCTION copy_boom()`.execute(database.db);
    }
    const count = (tenantId: string) =>
      store.search({ tenantId, from: T0 + 20 * DAY, to: T0 + 21 * DAY, page: 1, limit: 1, trackTotal: 10_000 });
    for (let n = 0; n < 12; n += 1) assert.equal((await count(`copy-fail-${n}`)).total, 0);
    await Promise.all(Array.from({ length: 12 }, (_, n) => store.append(`copy-after-${n}`, batch(2_000))));
    for (let n = 0; n < 12; n += 1) assert.equal((await count(`copy-after-${n}`)).total, 2_000);
  });
});
