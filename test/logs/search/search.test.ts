import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DIALECTS } from '../../helpers/databases.js';
import { startTestLogs, uniqueName, type TestLogs } from '../../helpers/logs.js';

const MINUTE = 60_000;
/** The start of an hour a little in the past: recent enough that the default retention keeps it. */
const T0 = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 3 * 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();
const HOUR_RANGE = { from: iso(T0), to: iso(T0 + 60 * MINUTE) };

/** Bulk lines for documents; the API is the way in, as for real shippers. */
function ndjson(docs: object[]): string {
  return `${docs.map((doc) => `{"index":{}}\n${JSON.stringify(doc)}`).join('\n')}\n`;
}

for (const dialect of DIALECTS) {
  describe(`logs search [${dialect}]`, () => {
    let logs: TestLogs;
    let headers: Record<string, string>;
    let otherTenant: string;
    before(async () => {
      logs = await startTestLogs(dialect);
      headers = await logs.admin();
      // 30 entries over the hour: levels cycle info, info, error; services a and b.
      const docs = Array.from({ length: 30 }, (_, i) => ({
        '@timestamp': iso(T0 + i * 2 * MINUTE + 1000),
        message: i % 3 === 2 ? `database timeout on order ${i}` : `request served order ${i}`,
        level: i % 3 === 2 ? 'error' : 'info',
        service: i % 2 === 0 ? 'alpha' : 'beta',
        host: 'web-1',
        http: { status: i % 3 === 2 ? 500 : 200 },
      }));
      const stored = await logs.request({ method: 'POST', url: '/api/v1/_elastic/_bulk', headers, payload: ndjson(docs) });
      assert.equal(stored.json().errors, false);
      const tenant = await logs.request({ method: 'POST', url: '/api/tenants', headers, payload: { name: uniqueName('other') } });
      otherTenant = tenant.json().id;
      const secret = await logs.request({
        method: 'POST',
        url: '/api/v1/_elastic/_bulk',
        headers: { ...headers, 'x-tenant-id': otherTenant },
        payload: ndjson([{ '@timestamp': iso(T0 + 5 * MINUTE), message: 'secret of the other tenant', level: 'error', service: 'gamma' }]),
      });
      assert.equal(secret.json().errors, false);
    });
    after(async () => logs.close());

    const paginate = (payload: object, extraHeaders: Record<string, string> = {}) =>
      logs.request({ method: 'POST', url: '/api/v1/logs/list/paginate', headers: { ...headers, ...extraHeaders }, payload });

    test('paginate: {data, page, limit, total, pages}, newest first by default', async () => {
      const response = await paginate({ timeRange: HOUR_RANGE, limit: 7, page: 2 });
      assert.equal(response.statusCode, 200);
      const body = response.json();
      assert.deepEqual(Object.keys(body).sort(), ['data', 'limit', 'page', 'pages', 'total', 'totalRelation']);
      assert.equal(body.total, 30);
      assert.equal(body.totalRelation, 'eq');
      assert.equal(body.page, 2);
      assert.equal(body.limit, 7);
      assert.equal(body.pages, 5);
      assert.equal(body.data.length, 7);
      const times = body.data.map((entry: { '@timestamp': string }) => Date.parse(entry['@timestamp']));
      assert.deepEqual(
        times,
        [...times].sort((a, b) => b - a),
      );
      assert.equal(times[0], T0 + 22 * 2 * MINUTE + 1000);
      const entry = body.data[0];
      assert.equal(entry.tenant_id, 'default');
      assert.equal(typeof entry.id, 'string');
      assert.equal(entry.attributes['http.status'], 200);

      const defaults = (await paginate({ timeRange: HOUR_RANGE })).json();
      assert.equal(defaults.page, 1);
      assert.equal(defaults.limit, 50);
      assert.equal(defaults.data.length, 30);
    });

    test('trackTotal: counting stops at the bound and says so; true counts every match; pages past the bound still answer', async () => {
      // Every entry has the word `order`: counted on the entries, up to the bound.
      const bounded = (await paginate({ timeRange: HOUR_RANGE, query: 'order', limit: 7, trackTotal: 10 })).json();
      assert.equal(bounded.total, 10);
      assert.equal(bounded.totalRelation, 'gte');
      assert.equal(bounded.data.length, 7);
      const beyond = (await paginate({ timeRange: HOUR_RANGE, query: 'order', limit: 7, page: 3, trackTotal: 10 })).json();
      assert.equal(beyond.data.length, 7, 'the third page lies past the bound and is still there');
      const exact = (await paginate({ timeRange: HOUR_RANGE, query: 'order', trackTotal: true })).json();
      assert.deepEqual([exact.total, exact.totalRelation], [30, 'eq']);
      const enough = (await paginate({ timeRange: HOUR_RANGE, query: 'order', trackTotal: 30 })).json();
      assert.deepEqual([enough.total, enough.totalRelation], [30, 'eq']);
      // No query, or only level and service filters: the rollups count exactly, whatever the bound.
      const cheap = (await paginate({ timeRange: HOUR_RANGE, limit: 7, trackTotal: 10 })).json();
      assert.deepEqual([cheap.total, cheap.totalRelation], [30, 'eq']);
      assert.equal((await paginate({ timeRange: HOUR_RANGE, trackTotal: 0 })).statusCode, 400);
    });

    test('query words, filters, sort ascending', async () => {
      const words = (await paginate({ timeRange: HOUR_RANGE, query: 'database timeout' })).json();
      assert.equal(words.total, 10);
      assert.ok(words.data.every((entry: { message: string }) => entry.message.includes('database timeout')));

      const filtered = (
        await paginate({
          timeRange: HOUR_RANGE,
          filters: [
            { field: 'level', value: 'error' },
            { field: 'service', value: 'alpha' },
          ],
        })
      ).json();
      assert.equal(filtered.total, 5);
      assert.ok(filtered.data.every((entry: { level: string; service: string }) => entry.level === 'error' && entry.service === 'alpha'));

      const fieldQuery = (await paginate({ timeRange: HOUR_RANGE, query: 'service:beta' })).json();
      assert.equal(fieldQuery.total, 15);

      const ascending = (await paginate({ timeRange: HOUR_RANGE, sort: { field: '@timestamp', order: 'asc' }, limit: 3 })).json();
      assert.equal(Date.parse(ascending.data[0]['@timestamp']), T0 + 1000);

      const narrow = (await paginate({ timeRange: { from: iso(T0), to: iso(T0 + 10 * MINUTE) } })).json();
      assert.equal(narrow.total, 5);
    });

    test('bad search bodies are 400 invalid json body; a query syntax error gives its position', async () => {
      for (const payload of [
        { limit: 1001 },
        { limit: 0 },
        { page: 0 },
        { timeRange: { from: iso(T0 + MINUTE), to: iso(T0) } },
        { timeRange: { from: 'yesterday', to: iso(T0) } },
        { sort: { field: '@timestamp', order: 'sideways' } },
        { filters: [{ field: 'level' }] },
        { query: 42 },
      ]) {
        const response = await paginate(payload);
        assert.equal(response.statusCode, 400, JSON.stringify(payload));
        assert.equal(response.json().error, 'invalid json body');
      }
      const syntax = await paginate({ timeRange: HOUR_RANGE, query: 'timeout "unclosed phrase' });
      assert.equal(syntax.statusCode, 400);
      assert.equal(syntax.json().error, 'invalid json body');
      assert.equal(typeof syntax.json().position, 'number');
      assert.match(syntax.json().detail, /position/);
    });

    test('Lucene forms answer alike on /api and _search: boosts, fuzzy terms, regular expressions, wildcards, field groups; the rest is a 400 with its position', async () => {
      const search = (query: string) =>
        logs.request({
          method: 'POST',
          url: '/api/v1/_elastic/_search',
          headers,
          payload: {
            query: { bool: { filter: [{ range: { '@timestamp': { gte: T0, lt: T0 + 60 * MINUTE } } }, { query_string: { query } }] } },
            track_total_hits: true,
          },
        });
      for (const [query, total] of [
        ['level:error^2', 10],
        ['level:error~', 10],
        ['level:eror~1', 10],
        ['timeout~1', 10],
        ['timeuot~', 10],
        ['level:/err.*/', 10],
        ['level:err?r', 10],
        ['mess*ge:timeout', 10],
        ['level:(error OR info)', 30],
        ['serv*:alph?', 15],
        ['http.status:5?0', 10],
        ['ord?r AND NOT level:/e.*/^2', 20],
      ] as const) {
        const mine = await paginate({ timeRange: HOUR_RANGE, query });
        assert.equal(mine.statusCode, 200, query);
        assert.equal(mine.json().total, total, query);
        const theirs = await search(query);
        assert.equal(theirs.statusCode, 200, query);
        assert.equal(theirs.json().hits.total.value, total, query);
      }
      for (const [query, position, reason] of [
        ['level:/^err/', 7, /anchor/],
        ['"database timeout"~2', 18, /proximity/],
        ['timeout~3', 7, /edits/],
        ['level:error^x', 11, /boost/],
        ['/time.*/', 1, /keyword fields/],
        ['service:/a{1,500}/', 13, /at most 100/],
      ] as const) {
        const mine = await paginate({ timeRange: HOUR_RANGE, query });
        assert.equal(mine.statusCode, 400, query);
        assert.equal(mine.json().error, 'invalid json body');
        assert.equal(mine.json().position, position, query);
        assert.match(mine.json().detail, reason, query);
        const theirs = await search(query);
        assert.equal(theirs.statusCode, 400, query);
        assert.equal(theirs.json().error.type, 'query_shard_exception', query);
        assert.match(theirs.json().error.reason, new RegExp(`at position ${position}$`), query);
      }
    });

    test('histogram: about 60 buckets by default covering the whole range, empty ones included; interval; groupBy', async () => {
      const auto = await logs.request({ method: 'POST', url: '/api/v1/logs/histogram', headers, payload: { timeRange: HOUR_RANGE } });
      assert.equal(auto.statusCode, 200);
      const body = auto.json();
      assert.equal(body.interval, '1m');
      assert.equal(body.interval_ms, MINUTE);
      assert.equal(body.buckets.length, 60);
      assert.equal(body.buckets[0].ts, iso(T0));
      assert.equal(
        body.buckets.reduce((sum: number, b: { count: number }) => sum + b.count, 0),
        30,
      );
      assert.equal(body.buckets.filter((b: { count: number }) => b.count === 0).length, 30);

      const grouped = await logs.request({
        method: 'POST',
        url: '/api/v1/logs/histogram',
        headers,
        payload: { timeRange: HOUR_RANGE, interval: '10m', groupBy: 'level', query: 'order' },
      });
      assert.equal(grouped.statusCode, 200);
      const buckets = grouped.json().buckets;
      assert.equal(grouped.json().interval, '10m');
      assert.equal(buckets.length, 6);
      assert.deepEqual(buckets[0].groups, { info: 4, error: 1 });
      const errors = buckets.reduce((sum: number, b: { groups: Record<string, number> }) => sum + (b.groups.error ?? 0), 0);
      assert.equal(errors, 10);

      const tooFine = await logs.request({
        method: 'POST',
        url: '/api/v1/logs/histogram',
        headers,
        payload: { timeRange: { from: iso(T0), to: iso(T0 + 86_400_000) }, interval: '1s' },
      });
      assert.equal(tooFine.statusCode, 400);
    });

    test('fields and distinct values', async () => {
      const fields = await logs.request({ method: 'GET', url: '/api/v1/logs/fields', headers });
      assert.equal(fields.statusCode, 200);
      const names = fields.json().fields.map((f: { name: string }) => f.name);
      for (const name of ['@timestamp', 'message', 'level', 'service', 'host', 'http.status']) assert.ok(names.includes(name), name);
      assert.equal(fields.json().fields.find((f: { name: string }) => f.name === 'http.status').type, 'number');

      const levels = await logs.request({ method: 'GET', url: '/api/v1/logs/fields/level/distinct', headers });
      assert.equal(levels.statusCode, 200);
      assert.deepEqual(levels.json(), {
        field: 'level',
        values: [
          { value: 'info', count: 20 },
          { value: 'error', count: 10 },
        ],
      });
      const filtered = await logs.request({ method: 'GET', url: '/api/v1/logs/fields/service/distinct?q=ALP&limit=5', headers });
      assert.deepEqual(filtered.json().values, [{ value: 'alpha', count: 15 }]);
      const ranged = await logs.request({
        method: 'GET',
        url: `/api/v1/logs/fields/level/distinct?from=${iso(T0)}&to=${iso(T0 + 6 * MINUTE)}`,
        headers,
      });
      assert.deepEqual(ranged.json().values, [
        { value: 'info', count: 2 },
        { value: 'error', count: 1 },
      ]);
      assert.equal((await logs.request({ method: 'GET', url: '/api/v1/logs/fields/level/distinct?limit=0', headers })).statusCode, 400);
    });

    test('inputs that used to be 500s are a clear 400: @timestamp distinct, NUL in a field or value, NOT/- chains, runaway nesting', async () => {
      const get = (url: string) => logs.request({ method: 'GET', url, headers });
      const stamp = await get('/api/v1/logs/fields/@timestamp/distinct');
      assert.equal(stamp.statusCode, 400);
      assert.match(stamp.json().detail, /@timestamp has no distinct values/);
      for (const url of [
        '/api/v1/logs/fields/a%00b/distinct',
        '/api/v1/logs/fields/level%00/distinct',
        '/api/v1/logs/fields/level/distinct?q=a%00b',
      ]) {
        const response = await get(url);
        assert.equal(response.statusCode, 400, url);
        assert.equal(response.json().error, 'invalid json body', url);
      }
      for (const payload of [
        { filters: [{ field: 'a\u0000b', value: 'x' }] },
        { filters: [{ field: 'level', value: 'x\u0000' }] },
        { sort: { field: 'http.\u0000status' } },
        { query: 'timeout\u0000' },
      ]) {
        const response = await paginate({ timeRange: HOUR_RANGE, ...payload });
        assert.equal(response.statusCode, 400, JSON.stringify(payload));
        assert.equal(response.json().error, 'invalid json body');
      }
      const grouped = await logs.request({
        method: 'POST',
        url: '/api/v1/logs/histogram',
        headers,
        payload: { timeRange: HOUR_RANGE, groupBy: 'lev\u0000el' },
      });
      assert.equal(grouped.statusCode, 400);
      for (const query of [
        `${'NOT '.repeat(1000)}timeout`,
        `${'-'.repeat(2000)}timeout`,
        `${'NOT -'.repeat(40)}timeout`,
        `${'('.repeat(20)}${'NOT '.repeat(20)}timeout${')'.repeat(20)}`,
      ]) {
        const response = await paginate({ timeRange: HOUR_RANGE, query });
        assert.equal(response.statusCode, 400, query.slice(0, 40));
        assert.match(response.json().detail, /nested deeper than 32/, query.slice(0, 40));
      }
      // Within the bound, negation still works: an even number of NOTs is the word itself.
      const twice = await paginate({ timeRange: HOUR_RANGE, query: `${'NOT '.repeat(30)}timeout` });
      assert.equal(twice.statusCode, 200);
      assert.equal(twice.json().total, 10);
    });

    test('histogram intervals and time bounds beyond what a date can hold are 400 with a clear message, not a bucket dated 1956', async () => {
      const histogram = (payload: object) =>
        logs.request({ method: 'POST', url: '/api/v1/logs/histogram', headers, payload: { timeRange: HOUR_RANGE, ...payload } });
      for (const interval of ['99999999999999999999d', '9007199254740993ms', '1000000000d', '3651d']) {
        const response = await histogram({ interval });
        assert.equal(response.statusCode, 400, interval);
        assert.match(response.json().detail, /interval must be at most 3650d/, interval);
      }
      assert.equal((await histogram({ interval: '3650d' })).statusCode, 200);
      const huge = await histogram({ interval: '3650d' });
      assert.ok(
        huge.json().buckets.every((bucket: { ts: string }) => bucket.ts.startsWith(iso(T0).slice(0, 4)) || Date.parse(bucket.ts) <= T0),
        'no bucket from another era',
      );
      for (const timeRange of [
        { from: '+275760-09-13T00:00:00.000Z', to: iso(T0) },
        { from: iso(T0), to: '+999999-01-01T00:00:00Z' },
        { from: '-271821-04-20T00:00:00Z', to: iso(T0) },
      ]) {
        const response = await histogram({ timeRange });
        assert.equal(response.statusCode, 400, JSON.stringify(timeRange));
        assert.equal((await paginate({ timeRange })).statusCode, 400, JSON.stringify(timeRange));
      }
      const distinct = await logs.request({
        method: 'GET',
        url: '/api/v1/logs/fields/level/distinct?from=%2B275760-09-13T00:00:00.000Z',
        headers,
      });
      assert.equal(distinct.statusCode, 400);
    });

    test('tenant isolation: nothing crosses, except by X-Tenant-Id with tenants:manage', async () => {
      const mine = (await paginate({ timeRange: HOUR_RANGE, query: 'secret' })).json();
      assert.equal(mine.total, 0);
      const services = (await logs.request({ method: 'GET', url: '/api/v1/logs/fields/service/distinct', headers }))
        .json()
        .values.map((v: { value: string }) => v.value);
      assert.ok(!services.includes('gamma'));
      const histogram = (
        await logs.request({ method: 'POST', url: '/api/v1/logs/histogram', headers, payload: { timeRange: HOUR_RANGE, query: 'secret' } })
      ).json();
      assert.equal(
        histogram.buckets.reduce((sum: number, b: { count: number }) => sum + b.count, 0),
        0,
      );

      const theirs = (await paginate({ timeRange: HOUR_RANGE, query: 'secret' }, { 'x-tenant-id': otherTenant })).json();
      assert.equal(theirs.total, 1);
      assert.equal(theirs.data[0].tenant_id, otherTenant);

      const reader = await logs.userWith(['logs:read'], { tenantId: otherTenant });
      const own = await logs.request({
        method: 'POST',
        url: '/api/v1/logs/list/paginate',
        headers: reader.headers,
        payload: { timeRange: HOUR_RANGE },
      });
      assert.equal(own.json().total, 1);
      const crossing = await logs.request({
        method: 'POST',
        url: '/api/v1/logs/list/paginate',
        headers: { ...reader.headers, 'x-tenant-id': 'default' },
        payload: { timeRange: HOUR_RANGE },
      });
      assert.equal(crossing.statusCode, 403);
    });

    test('time ranges are half-open: an entry at `from` counts, one at `to` does not', async () => {
      const tenant = (await logs.request({ method: 'POST', url: '/api/tenants', headers, payload: { name: uniqueName('edges') } })).json();
      const inTenant = { ...headers, 'x-tenant-id': tenant.id };
      await logs.request({
        method: 'POST',
        url: '/api/v1/_elastic/_bulk',
        headers: inTenant,
        payload: ndjson([
          { '@timestamp': iso(T0), message: 'at from' },
          { '@timestamp': iso(T0 + 60 * MINUTE), message: 'at to' },
        ]),
      });
      const page = await paginate({ timeRange: HOUR_RANGE }, { 'x-tenant-id': tenant.id });
      assert.deepEqual(
        page.json().data.map((entry: { message: string }) => entry.message),
        ['at from'],
      );
      const histogram = (
        await logs.request({ method: 'POST', url: '/api/v1/logs/histogram', headers: inTenant, payload: { timeRange: HOUR_RANGE } })
      ).json();
      assert.equal(histogram.buckets.length, 60);
      assert.equal(histogram.buckets[0].count, 1);
      assert.equal(
        histogram.buckets.reduce((sum: number, b: { count: number }) => sum + b.count, 0),
        1,
      );
      const next = await paginate({ timeRange: { from: iso(T0 + 60 * MINUTE), to: iso(T0 + 120 * MINUTE) } }, { 'x-tenant-id': tenant.id });
      assert.deepEqual(
        next.json().data.map((entry: { message: string }) => entry.message),
        ['at to'],
      );
    });

    test("retention removes a tenant's entries older than its days, and only those", async () => {
      const tenant = (
        await logs.request({ method: 'POST', url: '/api/tenants', headers, payload: { name: uniqueName('short'), retention_days: 2 } })
      ).json();
      const now = logs.clock.now();
      const day = 86_400_000;
      await logs.request({
        method: 'POST',
        url: '/api/v1/_elastic/_bulk',
        headers: { ...headers, 'x-tenant-id': tenant.id },
        payload: ndjson([
          { '@timestamp': iso(now - 10 * day), message: 'ancient entry' },
          { '@timestamp': iso(now - 5 * day), message: 'old entry' },
          { '@timestamp': iso(now - 60_000), message: 'fresh entry' },
        ]),
      });
      const removed = await logs.tenants.applyRetention();
      assert.equal(removed[tenant.id], 2);
      assert.equal(removed.default, 0);
      const left = await paginate({ timeRange: { from: iso(now - 30 * day), to: iso(now + day) } }, { 'x-tenant-id': tenant.id });
      assert.deepEqual(
        left.json().data.map((entry: { message: string }) => entry.message),
        ['fresh entry'],
      );
      assert.equal((await paginate({ timeRange: HOUR_RANGE })).json().total, 30, 'the default tenant (30 days) keeps its entries');
    });
  });
}
