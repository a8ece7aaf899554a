import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { DIALECTS } from '../../helpers/databases.js';
import { startTestLogs, uniqueName, type TestLogs } from '../../helpers/logs.js';

// The console's explorer routes: field statistics for a query.

const MINUTE = 60_000;
const T0 = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 3 * 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();
const HOUR_RANGE = { from: iso(T0), to: iso(T0 + 60 * MINUTE) };

function ndjson(docs: object[]): string {
  return `${docs.map((doc) => `{"index":{}}\n${JSON.stringify(doc)}`).join('\n')}\n`;
}

for (const dialect of DIALECTS) {
  describe(`logs explore API [${dialect}]`, () => {
    let logs: TestLogs;
    let headers: Record<string, string>;
    let otherTenant: string;
    before(async () => {
      logs = await startTestLogs(dialect);
      headers = await logs.admin();
      // 30 entries over the hour: levels info, info, error; services alpha (even) and beta (odd); every
      // fifth has a user.
      const docs = Array.from({ length: 30 }, (_, i) => ({
        '@timestamp': iso(T0 + i * 2 * MINUTE + 1000),
        message: i % 3 === 2 ? `database timeout on order ${i}` : `request served order ${i}`,
        level: i % 3 === 2 ? 'error' : 'info',
        service: i % 2 === 0 ? 'alpha' : 'beta',
        host: `web-${i % 3}`,
        http: { status: i % 3 === 2 ? 500 : 200 },
        ...(i % 5 === 0 ? { user: { name: i < 15 ? 'budi' : 'sari' } } : {}),
      }));
      const stored = await logs.request({ method: 'POST', url: '/api/v1/_elastic/_bulk', headers, payload: ndjson(docs) });
      assert.equal(stored.json().errors, false);
      const tenant = await logs.request({ method: 'POST', url: '/api/tenants', headers, payload: { name: uniqueName('other') } });
      otherTenant = tenant.json().id;
      const secret = await logs.request({
        method: 'POST',
        url: '/api/v1/_elastic/_bulk',
        headers: { ...headers, 'x-tenant-id': otherTenant },
        payload: ndjson([{ '@timestamp': iso(T0 + 5 * MINUTE), message: 'secret', level: 'error', service: 'gamma' }]),
      });
      assert.equal(secret.json().errors, false);
    });
    after(async () => logs.close());

    const stats = (field: string, payload: object, extra: Record<string, string> = {}) =>
      logs.request({
        method: 'POST',
        url: `/api/v1/logs/fields/${encodeURIComponent(field)}/stats`,
        headers: { ...headers, ...extra },
        payload,
      });

    test('field statistics follow the query: with level:error the services counted are those of the errors', async () => {
      const all = await stats('http.status', { timeRange: HOUR_RANGE });
      assert.equal(all.statusCode, 200);
      assert.deepEqual(all.json(), {
        field: 'http.status',
        type: 'number',
        matched: 30,
        sampled: 30,
        present: 30,
        coverage: 1,
        distinct: 2,
        values: [
          { value: '200', count: 20, share: 20 / 30 },
          { value: '500', count: 10, share: 10 / 30 },
        ],
      });
      const errors = (await stats('http.status', { timeRange: HOUR_RANGE, query: 'level:error' })).json();
      assert.equal(errors.matched, 10);
      assert.deepEqual(errors.values, [{ value: '500', count: 10, share: 1 }]);
      const alphaHosts = (await stats('host', { timeRange: HOUR_RANGE, query: 'service:alpha', size: 2 })).json();
      // alpha: even i; hosts web-0 (i % 3 = 0: 0,6,12,18,24), web-1 (4,10,16,22,28), web-2 (2,8,...) – five each.
      assert.equal(alphaHosts.matched, 15);
      assert.equal(alphaHosts.distinct, 3);
      assert.deepEqual(
        alphaHosts.values.map((value: { value: string }) => value.value),
        ['web-0', 'web-1'],
        'size cuts the list; ties in code-unit order',
      );
      const filtered = (await stats('level', { timeRange: HOUR_RANGE, filters: [{ field: 'service', value: 'beta' }] })).json();
      assert.deepEqual(
        filtered.values.map((value: { value: string; count: number }) => [value.value, value.count]),
        [
          ['info', 10],
          ['error', 5],
        ],
      );
    });

    test('coverage: the share of the matches that have the field; a field nobody has is type null, coverage 0', async () => {
      const users = (await stats('user.name', { timeRange: HOUR_RANGE })).json();
      assert.equal(users.type, 'string');
      assert.equal(users.present, 6);
      assert.equal(users.coverage, 6 / 30);
      assert.deepEqual(users.values, [
        { value: 'budi', count: 3, share: 3 / 30 },
        { value: 'sari', count: 3, share: 3 / 30 },
      ]);
      const none = (await stats('no.such.field', { timeRange: HOUR_RANGE })).json();
      assert.deepEqual(
        { type: none.type, matched: none.matched, present: none.present, coverage: none.coverage, values: none.values },
        { type: null, matched: 30, present: 0, coverage: 0, values: [] },
      );
      const nothing = (await stats('level', { timeRange: HOUR_RANGE, query: 'nosuchword' })).json();
      assert.deepEqual([nothing.matched, nothing.coverage, nothing.values], [0, 0, []]);
    });

    test('field statistics past the sample: counted in the newest `sample` matches and said so (sampled < matched); within it, of every match', async () => {
      // 300 entries, 10 s apart, two hours before the others: the oldest 200 have route "old", the
      // newest 100 "even" or "odd" by i; every third an error.
      const start = T0 - 2 * 60 * MINUTE;
      const docs = Array.from({ length: 300 }, (_, i) => ({
        '@timestamp': iso(start + i * 10_000),
        message: `sampled line ${i}`,
        level: i % 3 === 0 ? 'error' : 'info',
        route: i < 200 ? 'old' : i % 2 === 0 ? 'even' : 'odd',
        n: i,
      }));
      const stored = await logs.request({ method: 'POST', url: '/api/v1/_elastic/_bulk', headers, payload: ndjson(docs) });
      assert.equal(stored.json().errors, false);
      const timeRange = { from: iso(start), to: iso(start + 60 * MINUTE) };
      const pairs = (body: { values: { value: string; count: number }[] }) => body.values.map((value) => [value.value, value.count]);

      // Every query shape the stores find matches by (all, a word, a phrase, a range on the rows): the newest 100.
      for (const query of ['', 'sampled', '"sampled line"', 'n:>=100']) {
        const sampled = await stats('route', { timeRange, query, sample: 100 });
        assert.equal(sampled.statusCode, 200, sampled.body);
        const body = sampled.json();
        assert.deepEqual(
          [body.matched, body.sampled, body.present, body.coverage, body.distinct],
          [query === 'n:>=100' ? 200 : 300, 100, 100, 1, 2],
          `${query}: every match counted, the values of the newest 100`,
        );
        assert.deepEqual(
          body.values,
          [
            { value: 'even', count: 50, share: 0.5 },
            { value: 'odd', count: 50, share: 0.5 },
          ],
          `${query}: counts and shares of the sample, not of every match`,
        );
      }
      // The newest 100 that are not errors reach back past i = 200: 33 of them "old".
      const notErrors = (await stats('route', { timeRange, query: 'NOT level:error', sample: 100 })).json();
      assert.deepEqual([notErrors.matched, notErrors.sampled], [200, 100]);
      assert.deepEqual(pairs(notErrors), [
        ['even', 34],
        ['odd', 33],
        ['old', 33],
      ]);
      // No more matches than the sample (100 errors): every one counted.
      const errors = (await stats('route', { timeRange, query: 'level:error', sample: 100 })).json();
      assert.deepEqual([errors.matched, errors.sampled], [100, 100]);
      assert.deepEqual(pairs(errors), [
        ['old', 67],
        ['odd', 17],
        ['even', 16],
      ]);
      // The default sample (2,000) holds all 300.
      const whole = (await stats('route', { timeRange })).json();
      assert.deepEqual([whole.matched, whole.sampled, whole.values[0]], [300, 300, { value: 'old', count: 200, share: 200 / 300 }]);
      // Level, service and host without a text query are counted in every match (the per-minute counts), whatever the sample.
      const levels = (await stats('level', { timeRange, sample: 100 })).json();
      assert.deepEqual(
        [levels.matched, levels.sampled, pairs(levels)],
        [
          300,
          300,
          [
            ['info', 200],
            ['error', 100],
          ],
        ],
      );
      assert.equal((await stats('route', { timeRange, sample: 99 })).statusCode, 400);
    });

    test('sort oldest or newest first; searchAfter walks every entry of the range, page after page', async () => {
      const paginate = (payload: object) => logs.request({ method: 'POST', url: '/api/v1/logs/list/paginate', headers, payload });
      for (const order of ['asc', 'desc'] as const) {
        const seen: string[] = [];
        let after: { '@timestamp': string; id: string } | undefined;
        for (let round = 0; round < 10; round += 1) {
          const page = await paginate({
            timeRange: HOUR_RANGE,
            sort: { field: '@timestamp', order },
            limit: 7,
            ...(after ? { searchAfter: after } : {}),
          });
          assert.equal(page.statusCode, 200, page.body);
          const data = page.json().data as { '@timestamp': string; id: string; message: string }[];
          if (data.length === 0) break;
          seen.push(...data.map((entry) => entry.message));
          const last = data.at(-1)!;
          after = { '@timestamp': last['@timestamp'], id: last.id };
        }
        const expected = Array.from({ length: 30 }, (_, i) =>
          i % 3 === 2 ? `database timeout on order ${i}` : `request served order ${i}`,
        );
        assert.deepEqual(seen, order === 'asc' ? expected : expected.reverse(), `every entry once, ${order}`);
      }
      const badId = await paginate({ timeRange: HOUR_RANGE, searchAfter: { '@timestamp': iso(T0), id: 'abc' } });
      assert.equal(badId.statusCode, 400);
      const otherSort = await paginate({
        timeRange: HOUR_RANGE,
        sort: { field: 'service', order: 'asc' },
        searchAfter: { '@timestamp': iso(T0), id: '1' },
      });
      assert.equal(otherSort.statusCode, 400);
      assert.match(otherSort.json().detail, /search_after needs a sort on @timestamp/);
    });

    test('export: every entry of the search streamed as NDJSON or CSV, pages past the first, columns chosen, formulas escaped, audited', async () => {
      // 2,500 entries (two and a half of the export's store pages) in a later hour.
      const start = T0 + 2 * 60 * MINUTE;
      const range = { from: iso(start), to: iso(start + 60 * MINUTE) };
      const many = Array.from({ length: 2500 }, (_, i) => ({
        '@timestamp': iso(start + i * 1000),
        message: i === 7 ? '=HYPERLINK("http://evil.example")' : `bulk line ${i}`,
        level: 'info',
        n: i,
      }));
      for (let i = 0; i < many.length; i += 1000) {
        const stored = await logs.request({
          method: 'POST',
          url: '/api/v1/_elastic/_bulk',
          headers,
          payload: ndjson(many.slice(i, i + 1000)),
        });
        assert.equal(stored.json().errors, false);
      }
      const exported = (payload: object) => logs.request({ method: 'POST', url: '/api/v1/logs/export', headers, payload });

      const lines = await exported({ timeRange: range, format: 'ndjson', order: 'asc' });
      assert.equal(lines.statusCode, 200, lines.body);
      assert.match(String(lines.headers['content-type']), /^application\/x-ndjson/);
      assert.match(String(lines.headers['content-disposition']), /^attachment; filename="logs-.*\.ndjson"$/);
      const entries = lines.body
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as { attributes: { n: number }; tenant_id: string });
      assert.equal(entries.length, 2500);
      assert.deepEqual(
        entries.map((entry) => entry.attributes.n),
        many.map((_, i) => i),
        'every entry once, oldest first',
      );
      assert.equal(entries[0]!.tenant_id, 'default');

      const csv = await exported({
        timeRange: range,
        format: 'csv',
        query: 'level:info',
        columns: ['@timestamp', 'n', 'message', 'missing'],
      });
      assert.equal(csv.statusCode, 200);
      assert.match(String(csv.headers['content-type']), /^text\/csv/);
      const rows = parse(csv.body, { bom: true }) as string[][];
      assert.deepEqual(rows[0], ['@timestamp', 'n', 'message', 'missing']);
      assert.equal(rows.length, 2501);
      assert.deepEqual(rows[1], [iso(start + 2499 * 1000), '2499', 'bulk line 2499', ''], 'newest first by default');
      assert.equal(rows[2500 - 7]![2], `'=HYPERLINK("http://evil.example")`, 'a formula is not run by a spreadsheet');

      const some = await exported({ timeRange: range, format: 'ndjson', query: 'n:42', columns: ['message', 'n'] });
      assert.deepEqual(JSON.parse(some.body), { message: 'bulk line 42', n: 42 });

      const defaults = parse((await exported({ timeRange: HOUR_RANGE, format: 'csv', query: 'level:error' })).body, {
        bom: true,
      }) as string[][];
      assert.deepEqual(defaults[0], ['@timestamp', 'level', 'service', 'host', 'message']);
      assert.equal(defaults.length, 11);

      assert.equal((await exported({ timeRange: range, format: 'xml' })).statusCode, 400);
      assert.equal((await exported({ timeRange: range, format: 'csv', query: 'a:(' })).statusCode, 400);
      const audit = (await logs.request({ method: 'GET', url: '/api/v1/log-audit/search?action=logs.export', headers })).json();
      assert.deepEqual(audit.data.map((row: { details: { format: string } }) => row.details.format).sort(), [
        'csv',
        'csv',
        'ndjson',
        'ndjson',
      ]);
      const reader = await logs.userWith(['alerts:read']);
      const denied = await logs.request({
        method: 'POST',
        url: '/api/v1/logs/export',
        headers: reader.headers,
        payload: { format: 'csv' },
      });
      assert.equal(denied.statusCode, 403);
    });

    test('context: the entries around one, of the same host or service or of all, oldest first', async () => {
      const found = await logs.request({
        method: 'POST',
        url: '/api/v1/logs/list/paginate',
        headers,
        payload: { timeRange: HOUR_RANGE, query: '"served order 15"' },
      });
      const anchor = found.json().data[0] as { id: string; '@timestamp': string; host: string };
      assert.equal(anchor.host, 'web-0');
      const context = (payload: object, extra: Record<string, string> = {}) =>
        logs.request({
          method: 'POST',
          url: '/api/v1/logs/context',
          headers: { ...headers, ...extra },
          payload: { '@timestamp': anchor['@timestamp'], id: anchor.id, ...payload },
        });
      const order = (entries: { message: string }[]) => entries.map((entry) => Number(/order (\d+)/.exec(entry.message)![1]));
      const byHost = await context({ before: 2, after: 2 });
      assert.equal(byHost.statusCode, 200, byHost.body);
      const host = byHost.json();
      assert.deepEqual([host.by, host.value, host.entry.id], ['host', 'web-0', anchor.id]);
      assert.deepEqual(
        [order(host.before), order(host.after)],
        [
          [9, 12],
          [18, 21],
        ],
      );
      const service = (await context({ by: 'service', before: 2, after: 2 })).json();
      assert.deepEqual([service.value, order(service.before), order(service.after)], ['beta', [11, 13], [17, 19]]);
      const all = (await context({ by: 'none', before: 3, after: 0 })).json();
      assert.deepEqual([all.value, order(all.before), all.after], [null, [12, 13, 14], []]);
      const defaults = (await context({})).json();
      assert.deepEqual(
        [order(defaults.before), order(defaults.after)],
        [
          [0, 3, 6, 9, 12],
          [18, 21, 24, 27],
        ],
      );

      assert.equal((await context({ id: '12345' })).statusCode, 404);
      assert.equal((await context({}, { 'x-tenant-id': otherTenant })).statusCode, 404, 'another tenant’s entry is not found');
      assert.equal((await context({ before: 201 })).statusCode, 400);
      assert.equal((await context({ by: 'pod' })).statusCode, 400);
    });

    test('patterns: messages grouped with their variable parts masked, counts and shares, a query for each; sampled when many', async () => {
      const patterns = (payload: object) => logs.request({ method: 'POST', url: '/api/v1/logs/patterns', headers, payload });
      const all = await patterns({ timeRange: HOUR_RANGE });
      assert.equal(all.statusCode, 200, all.body);
      const body = all.json();
      assert.deepEqual([body.matched, body.matchedRelation, body.sampled], [30, 'eq', 30]);
      assert.deepEqual(
        body.patterns.map((p: { pattern: string; count: number; share: number; query: string }) => [p.pattern, p.count, p.share, p.query]),
        [
          ['request served order <*>', 20, 20 / 30, '"request served order"'],
          ['database timeout on order <*>', 10, 10 / 30, '"database timeout on order"'],
        ],
      );
      // The pattern's query finds its entries.
      const found = await logs.request({
        method: 'POST',
        url: '/api/v1/logs/list/paginate',
        headers,
        payload: { timeRange: HOUR_RANGE, query: body.patterns[1].query },
      });
      assert.equal(found.json().total, 10);
      const errors = (await patterns({ timeRange: HOUR_RANGE, query: 'level:error', limit: 1 })).json();
      assert.deepEqual(
        errors.patterns.map((p: { pattern: string }) => p.pattern),
        ['database timeout on order <*>'],
      );

      // 2,500 entries in the later hour (the export test's), sampled: 100 of them, spread over the hour.
      const start = T0 + 2 * 60 * MINUTE;
      const sampled = (await patterns({ timeRange: { from: iso(start), to: iso(start + 2500 * 1000) }, sample: 100 })).json();
      assert.deepEqual(
        [sampled.matched, sampled.sampled],
        [2500, 100],
        'a count of every match (or at least the sample), 100 of them grouped',
      );
      assert.equal(sampled.patterns[0].pattern, 'bulk line <*>');
      assert.ok(sampled.patterns[0].count >= 99);
      assert.equal((await patterns({ timeRange: HOUR_RANGE, sample: 10 })).statusCode, 400);
    });

    test('field statistics: bad input is a 400, the tenant is the caller’s, logs:read is needed', async () => {
      const timestamp = await stats('@timestamp', { timeRange: HOUR_RANGE });
      assert.equal(timestamp.statusCode, 400);
      const syntax = await stats('level', { timeRange: HOUR_RANGE, query: 'level:(' });
      assert.equal(syntax.statusCode, 400);
      assert.equal(typeof syntax.json().error, 'string');
      assert.equal((await stats('level', { timeRange: HOUR_RANGE, size: 0 })).statusCode, 400);

      const other = (await stats('service', { timeRange: HOUR_RANGE }, { 'x-tenant-id': otherTenant })).json();
      assert.deepEqual(other.values, [{ value: 'gamma', count: 1, share: 1 }]);
      const mine = (await stats('service', { timeRange: HOUR_RANGE })).json();
      assert.ok(!mine.values.some((value: { value: string }) => value.value === 'gamma'));

      const reader = await logs.userWith(['logs:read']);
      const read = await logs.request({
        method: 'POST',
        url: '/api/v1/logs/fields/level/stats',
        headers: reader.headers,
        payload: { timeRange: HOUR_RANGE },
      });
      assert.equal(read.statusCode, 200);
      const stranger = await logs.userWith(['alerts:read']);
      const denied = await logs.request({
        method: 'POST',
        url: '/api/v1/logs/fields/level/stats',
        headers: stranger.headers,
        payload: { timeRange: HOUR_RANGE },
      });
      assert.equal(denied.statusCode, 403);
    });
  });
}
