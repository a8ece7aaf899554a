import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestLogs, type TestLogs } from '../../helpers/logs.js';

// Names a client chose are data on the routes added for the console and the compatible API:
// `__proto__` as a field, a column, an aggregation's name, a filter's name, an `_id` and a
// document's key is answered like any other name, never pollutes an object, never crashes.
const T = Date.now() - 60_000;
const RANGE = { from: new Date(T - 3_600_000).toISOString(), to: new Date(T + 120_000).toISOString() };

describe('`__proto__` as a name on the explorer and document routes', () => {
  let logs: TestLogs;
  let headers: Record<string, string>;
  before(async () => {
    logs = await startTestLogs('sqlite');
    headers = { ...(await logs.admin()), 'content-type': 'application/json' };
    const doc = `{"@timestamp":"${new Date(T).toISOString()}","message":"hostile names","__proto__":{"polluted":"yes"},"constructor":"c"}`;
    const stored = await logs.request({ method: 'PUT', url: '/api/v1/_elastic/logs-a/_doc/__proto__', headers, payload: doc });
    assert.ok(stored.statusCode === 201 || stored.statusCode === 200, stored.body);
  });
  after(() => logs.close());

  test('the document reads back under its id, its keys as data', async () => {
    const got = await logs.request({ method: 'GET', url: '/api/v1/_elastic/logs-a/_doc/__proto__', headers });
    assert.equal(got.statusCode, 200, got.body);
    const source = JSON.parse(got.body)._source;
    assert.equal(Object.hasOwn(source, '__proto__.polluted') || Object.hasOwn(source, '__proto__'), true, got.body);
    const mget = await logs.request({
      method: 'POST',
      url: '/api/v1/_elastic/logs-a/_mget',
      headers,
      payload: { ids: ['__proto__', 'constructor'] },
    });
    assert.equal(mget.statusCode, 200, mget.body);
    assert.deepEqual(
      mget.json().docs.map((d: { _id: string; found: boolean }) => [d._id, d.found]),
      [
        ['__proto__', true],
        ['constructor', false],
      ],
    );
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  test('aggregations and filters named __proto__ are answered under that name', async () => {
    const search = await logs.request({
      method: 'POST',
      url: '/api/v1/_elastic/logs-a/_search',
      headers,
      payload: JSON.parse(
        '{"size":0,"aggs":{"__proto__":{"filters":{"filters":{"__proto__":{"match_all":{}},"constructor":{"match":{"message":"hostile"}}}}},"toString":{"value_count":{"field":"message"}}}}',
      ),
    });
    assert.equal(search.statusCode, 200, search.body);
    const aggregations = JSON.parse(search.body).aggregations;
    assert.ok(Object.hasOwn(aggregations, '__proto__'), search.body);
    assert.equal(aggregations['__proto__'].buckets['__proto__'].doc_count, 1);
    assert.equal(aggregations['__proto__'].buckets.constructor.doc_count, 1);
    assert.equal(aggregations.toString.value, 1);
  });

  test('field statistics, export columns and saved-search columns take __proto__ as a field name', async () => {
    const stats = await logs.request({
      method: 'POST',
      url: '/api/v1/logs/fields/__proto__.polluted/stats',
      headers,
      payload: { timeRange: RANGE, query: '' },
    });
    assert.equal(stats.statusCode, 200, stats.body);
    assert.deepEqual(
      stats.json().values.map((v: { value: string }) => v.value),
      ['yes'],
    );
    const bare = await logs.request({ method: 'POST', url: '/api/v1/logs/fields/__proto__/stats', headers, payload: { timeRange: RANGE } });
    assert.equal(bare.statusCode, 200, bare.body);
    assert.deepEqual([bare.json().field, bare.json().present, bare.json().values], ['__proto__', 0, []]);
    const exported = await logs.request({
      method: 'POST',
      url: '/api/v1/logs/export',
      headers,
      payload: { timeRange: RANGE, query: '', format: 'ndjson', columns: ['message', '__proto__.polluted', '__proto__', 'constructor'] },
    });
    assert.equal(exported.statusCode, 200, exported.body);
    const line = JSON.parse(exported.body.trim().split('\n')[0]!);
    assert.equal(line['__proto__.polluted'], 'yes');
    assert.equal(line.constructor, 'c');
    assert.ok(Object.hasOwn(line, '__proto__'));
    const saved = await logs.request({
      method: 'POST',
      url: '/api/v1/logs/saved-searches',
      headers,
      payload: {
        name: '__proto__',
        query: '__proto__.polluted:yes',
        timeRange: { relative: 'now-1h' },
        columns: ['__proto__', 'constructor'],
        sort: 'desc',
      },
    });
    assert.equal(saved.statusCode, 201, saved.body);
    assert.deepEqual([saved.json().name, saved.json().columns], ['__proto__', ['__proto__', 'constructor']]);
    const list = await logs.request({ method: 'GET', url: '/api/v1/logs/saved-searches', headers });
    assert.equal(list.statusCode, 200, list.body);
    assert.ok(JSON.stringify(list.json()).includes('"columns":["__proto__","constructor"]'), list.body);
  });
});
