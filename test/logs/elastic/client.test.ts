import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client as Client9, errors as errors9 } from '@elastic/elasticsearch';
import { Client as Client8 } from 'elasticsearch8';
import { DIALECTS } from '../../helpers/databases.js';
import { listenOnLoopback } from '../../helpers/listen.js';
import { BASE, COUNT, documents, type Doc } from '../../helpers/elastic-documents.js';
import { PASSWORD, startTestLogs, uniqueName, type TestLogs } from '../../helpers/logs.js';

/**
 * The official Elasticsearch clients (8.x and 9.x) against the Elasticsearch-compatible API of a
 * listening logs service: info, bulk (helpers.bulk with retries), search, msearch, aggregations,
 * paging, mappings, errors. docs/elasticsearch.md.
 */

const CLIENTS = [
  { name: '9.x', Client: Client9 },
  { name: '8.x', Client: Client8 as unknown as typeof Client9 },
];

for (const dialect of DIALECTS) {
  describe(`Elasticsearch clients [${dialect}]`, () => {
    let logs: TestLogs;
    let node: string;
    let reader: { username: string };
    let writer: { username: string };
    const marker = uniqueName('esclient').toLowerCase();
    const docs = documents(marker);
    const client = (username: string, Client = Client9) => new Client({ node, auth: { username, password: PASSWORD }, maxRetries: 0 });
    const timeRange = { range: { '@timestamp': { gte: BASE, lte: BASE + COUNT * 1000, format: 'epoch_millis' } } };
    const mine = { bool: { filter: [timeRange, { query_string: { query: `"${marker}"` } }] } };

    before(async () => {
      logs = await startTestLogs(dialect);
      node = `http://127.0.0.1:${await listenOnLoopback(logs.app)}/api/v1/_elastic`;
      reader = await logs.userWith(['logs:read']);
      writer = await logs.userWith(['logs:write']);
    });
    after(async () => logs.close());

    for (const { name, Client } of CLIENTS) {
      test(`${name} client: info and ping pass the product check`, async () => {
        const es = client(writer.username, Client);
        const info = await es.info();
        assert.match(info.version.number, /^8\./);
        assert.equal(await es.ping(), true);
      });
    }

    test('what shippers probe: HEAD /, _cat/health, _nodes, _license; index templates acknowledged', async () => {
      const es = client(writer.username);
      const authorization = `Basic ${Buffer.from(`${writer.username}:${PASSWORD}`).toString('base64')}`;
      const head = await fetch(`${node}/`, { method: 'HEAD', headers: { authorization } });
      assert.equal(head.status, 200);
      assert.equal(head.headers.get('x-elastic-product'), 'Elasticsearch');
      const cat = await fetch(`${node}/_cat/health`, { headers: { authorization } });
      assert.match(await cat.text(), / gerbang green /);
      assert.deepEqual(await es.cat.health({ format: 'json' }), [{ cluster: 'gerbang', status: 'green', 'node.total': '1' }]);
      assert.equal((await es.nodes.info()).cluster_name, 'gerbang');
      assert.equal((await es.license.get()).license.status, 'active');
      assert.equal((await es.indices.putIndexTemplate({ name: 'logs', index_patterns: ['app-*'] })).acknowledged, true);
      const anonymous = await fetch(`${node}/`, { method: 'HEAD' });
      assert.equal(anonymous.status, 401);
    });

    test('helpers.bulk stores every document once, and a full retry with the same _ids stores nothing twice', async () => {
      const es = client(writer.username);
      const ship = () =>
        es.helpers.bulk({
          datasource: docs,
          onDocument: (doc) => ({ index: { _index: `app-${marker}`, _id: doc.id } }),
          flushBytes: 100_000,
          concurrency: 2,
          retries: 2,
          wait: 10,
        });
      const first = await ship();
      assert.equal(first.failed, 0);
      assert.equal(first.successful, COUNT);
      const again = await ship();
      assert.equal(again.failed, 0, 'an index of a known _id is a success (noop), not a failure');
      const counted = await client(reader.username).search({ index: '*', query: mine, size: 0, track_total_hits: true });
      assert.deepEqual(counted.hits.total, { value: COUNT, relation: 'eq' });
    });

    test('bulk create of a known _id is a per-item 409 conflict; other items are stored', async () => {
      const es = client(writer.username);
      const fresh = uniqueName('fresh').toLowerCase();
      const result = await es.bulk({
        operations: [
          { create: { _index: `app-${marker}`, _id: `${marker}-0` } },
          { '@timestamp': new Date(BASE).toISOString(), message: `duplicate ${marker}` },
          { create: { _index: `app-${marker}`, _id: fresh } },
          { '@timestamp': new Date(BASE).toISOString(), message: `fresh ${fresh}` },
        ],
      });
      assert.equal(result.errors, true);
      assert.equal(result.items[0]!.create!.status, 409);
      assert.equal(result.items[0]!.create!.error!.type, 'version_conflict_engine_exception');
      assert.equal(result.items[1]!.create!.status, 201);
      const search = await client(reader.username).search({ index: '*', q: `"duplicate ${marker}"`, size: 0 });
      assert.deepEqual(search.hits.total, { value: 0, relation: 'eq' });
    });

    for (const { name, Client } of CLIENTS) {
      test(`${name} client: search with bool/range/term(s)/exists, sort, from/size, _index and _source`, async () => {
        const es = client(reader.username, Client);
        const errors = await es.search<Doc>({
          index: `app-${marker}`,
          query: {
            bool: {
              filter: [timeRange, { term: { level: 'error' } }, { terms: { host: ['h0', 'h1'] } }, { exists: { field: 'latency' } }],
            },
          },
          sort: [{ '@timestamp': { order: 'asc' } }],
          size: 5,
          from: 2,
          track_total_hits: true,
        });
        // Every tenth document is an error, and i % 10 == 0 means host h0 (i % 5 == 0): 250 of them.
        assert.deepEqual(errors.hits.total, { value: 250, relation: 'eq' });
        assert.deepEqual(
          errors.hits.hits.map((hit) => hit._source!.message),
          [20, 30, 40, 50, 60].map((i) => `request ${marker} number ${i}`),
        );
        const hit = errors.hits.hits[0]!;
        assert.equal(hit._index, `app-${marker}`);
        assert.equal(hit._id, `${marker}-20`);
        assert.equal(hit._source!['@timestamp'], new Date(BASE + 20_000).toISOString());
        assert.equal(hit._source!.latency, 20);
        assert.equal((hit._source as unknown as Record<string, unknown>)._id, undefined, 'metadata is not part of _source');
        const otherIndex = await es.search({ index: 'nothing-here-*', query: mine, size: 0 });
        assert.deepEqual(otherIndex.hits.total, { value: 0, relation: 'eq' });
      });
    }

    test('query_string ranges and existence; must_not and should; track_total_hits as a bound', async () => {
      const es = client(reader.username);
      const slow = await es.search({
        index: `app-*`,
        query: { bool: { filter: [timeRange, { query_string: { query: `"${marker}" AND latency:>=90 AND status:[500 TO 599]` } }] } },
        size: 0,
        track_total_hits: true,
      });
      // latency = i % 100 >= 90 and i % 10 == 0 means i % 100 == 90: 25 documents.
      assert.deepEqual(slow.hits.total, { value: 25, relation: 'eq' });
      const notH0 = await es.search({
        index: '*',
        query: {
          bool: {
            filter: [mine],
            must_not: [{ term: { host: 'h0' } }],
            should: [{ term: { host: 'h1' } }, { term: { host: 'h2' } }],
            minimum_should_match: 1,
          },
        },
        size: 0,
        track_total_hits: true,
      });
      assert.deepEqual(notH0.hits.total, { value: 1000, relation: 'eq' });
      const bounded = await es.search({ index: '*', query: mine, size: 0, track_total_hits: 100 });
      assert.deepEqual(bounded.hits.total, { value: 100, relation: 'gte' });
    });

    test('search_after pages through every match exactly once', async () => {
      const es = client(reader.username);
      const seen = new Set<string>();
      let after: (string | number)[] | undefined;
      for (let page = 0; page < 10; page += 1) {
        const result = await es.search<Doc>({
          index: '*',
          query: { bool: { filter: [timeRange, { query_string: { query: `"${marker}" AND host:h3` } }] } },
          sort: [{ '@timestamp': 'desc' }],
          size: 200,
          ...(after ? { search_after: after } : {}),
        });
        if (result.hits.hits.length === 0) break;
        for (const hit of result.hits.hits) seen.add(hit._id!);
        after = result.hits.hits.at(-1)!.sort as (string | number)[];
      }
      assert.equal(seen.size, 500);
    });

    test('aggregations: date_histogram with extended bounds, terms with metric sub-aggregations, cardinality, percentiles', async () => {
      const es = client(reader.username);
      const result = await es.search({
        index: '*',
        query: mine,
        size: 0,
        aggs: {
          over_time: {
            date_histogram: {
              field: '@timestamp',
              fixed_interval: '10m',
              min_doc_count: 0,
              extended_bounds: { min: BASE - 1_200_000, max: BASE + 3_600_000 },
              format: 'epoch_millis',
            },
            aggs: { slowest: { max: { field: 'latency' } } },
          },
          hosts: {
            terms: { field: 'host.keyword', size: 2, order: { _key: 'desc' } },
            aggs: {
              mean: { avg: { field: 'latency' } },
              total: { sum: { field: 'status' } },
              p: { percentiles: { field: 'latency', percents: [50, 99] } },
            },
          },
          distinct_hosts: { cardinality: { field: 'host' } },
          fastest: { min: { field: 'latency' } },
        },
      });
      const aggs = result.aggregations as Record<string, any>;
      const buckets = aggs.over_time.buckets as {
        key: number;
        key_as_string: string;
        doc_count: number;
        slowest: { value: number | null };
      }[];
      // From 20 minutes before the first document to an hour after, both bounds included: 9 ten-minute buckets.
      assert.deepEqual(
        buckets.map((bucket) => bucket.key),
        Array.from({ length: 9 }, (_, i) => BASE - 1_200_000 + i * 600_000),
      );
      assert.deepEqual(
        buckets.map((bucket) => bucket.doc_count),
        [0, 0, 600, 600, 600, 600, 100, 0, 0],
      );
      assert.equal(buckets[2]!.key_as_string, String(BASE));
      assert.equal(buckets[2]!.slowest.value, 99);
      assert.equal(buckets[0]!.slowest.value, null);
      assert.deepEqual(
        aggs.hosts.buckets.map((bucket: { key: string; doc_count: number }) => [bucket.key, bucket.doc_count]),
        [
          ['h4', 500],
          ['h3', 500],
        ],
      );
      assert.equal(aggs.hosts.sum_other_doc_count, 1500);
      // Host h4 holds i % 5 == 4: latencies 4, 9, 14, ... 99, each 25 times: mean 51.5, median 51.5.
      const h4 = aggs.hosts.buckets[0];
      assert.equal(h4.mean.value, 51.5);
      assert.equal(h4.total.value, 500 * 200);
      assert.equal(h4.p.values['50.0'], 51.5);
      assert.equal(h4.p.values['99.0'], 99);
      assert.equal(aggs.distinct_hosts.value, 5);
      assert.equal(aggs.fastest.value, 0);
    });

    test('calendar intervals: weeks from Monday, months, quarters and years, in UTC, empty ones filled', async () => {
      const index = `cal-${marker}`;
      const times = [
        '2026-01-15T12:00:00Z',
        '2026-02-01T00:00:00Z',
        '2026-02-28T23:59:59Z',
        '2026-03-01T00:00:00Z',
        '2026-04-02T08:00:00Z',
        '2026-11-22T23:00:00Z', // a Sunday
        '2026-11-23T00:00:00Z', // the Monday after
        '2026-12-31T23:59:59Z',
        '2027-01-01T00:00:00Z',
      ];
      const stored = await client(writer.username).bulk({
        operations: times.flatMap((time) => [
          { index: { _index: index } },
          { '@timestamp': time, message: `calendar ${marker}`, latency: 1 },
        ]),
      });
      assert.equal(stored.errors, false);
      const es = client(reader.username);
      const histogram = async (calendar_interval: 'week' | 'month' | 'quarter' | '1M' | '1y', min_doc_count = 1) => {
        const result = await es.search({
          index,
          size: 0,
          aggs: {
            h: { date_histogram: { field: '@timestamp', calendar_interval, min_doc_count }, aggs: { s: { sum: { field: 'latency' } } } },
          },
        });
        return ((result.aggregations as any).h.buckets as { key_as_string: string; doc_count: number; s: { value: number } }[]).map(
          (bucket) => [bucket.key_as_string.slice(0, 10), bucket.doc_count, bucket.s.value],
        );
      };
      assert.deepEqual(await histogram('1M'), [
        ['2026-01-01', 1, 1],
        ['2026-02-01', 2, 2],
        ['2026-03-01', 1, 1],
        ['2026-04-01', 1, 1],
        ['2026-11-01', 2, 2],
        ['2026-12-01', 1, 1],
        ['2027-01-01', 1, 1],
      ]);
      assert.equal((await histogram('month', 0)).length, 13, 'January 2026 to January 2027, empty months included');
      assert.deepEqual(await histogram('quarter'), [
        ['2026-01-01', 4, 4],
        ['2026-04-01', 1, 1],
        ['2026-10-01', 3, 3],
        ['2027-01-01', 1, 1],
      ]);
      assert.deepEqual(await histogram('1y'), [
        ['2026-01-01', 8, 8],
        ['2027-01-01', 1, 1],
      ]);
      const weeks = await histogram('week');
      assert.deepEqual(weeks.slice(4, 6), [
        ['2026-11-16', 1, 1],
        ['2026-11-23', 1, 1],
      ]);
      assert.equal(weeks[0]![0], '2026-01-12', 'the Monday of the week of 15 January');
    });

    test('msearch: each search answers on its own; one bad search does not fail the others', async () => {
      const es = client(reader.username);
      const result = await es.msearch({
        searches: [
          { index: `app-${marker}` },
          { query: mine, size: 1, aggs: { levels: { terms: { field: 'level' } } } },
          { index: '*' },
          { query: { more_like_this: { like: 'h' } } },
        ],
      });
      const [good, bad] = result.responses as any[];
      assert.equal(good.status, 200);
      assert.deepEqual(
        good.aggregations.levels.buckets.map((bucket: { key: string; doc_count: number }) => [bucket.key, bucket.doc_count]),
        [
          ['info', 2250],
          ['error', 250],
        ],
      );
      assert.equal(bad.status, 400);
      assert.equal(bad.error.type, 'illegal_argument_exception');
      assert.match(bad.error.reason, /more_like_this.*not supported/);
    });

    test('_mapping and _field_caps type the fields seen so far', async () => {
      const es = client(reader.username);
      const mapping = (await es.indices.getMapping({ index: `app-${marker}` })) as Record<
        string,
        { mappings: { properties: Record<string, any> } }
      >;
      const properties = mapping[`app-${marker}`]!.mappings.properties;
      assert.equal(properties['@timestamp'].type, 'date');
      assert.equal(properties.message.type, 'text');
      assert.equal(properties.host.type, 'keyword');
      assert.equal(properties.latency.type, 'double');
      assert.equal(properties._id, undefined);
      const caps = await es.fieldCaps({ index: '*', fields: 'lat*' });
      assert.deepEqual(Object.keys(caps.fields), ['latency']);
      assert.equal(caps.fields.latency!.double!.aggregatable, true);
    });

    test('what is outside the subset, bad credentials and missing permissions are errors in Elasticsearch shape', async () => {
      const es = client(reader.username);
      const refusal = async (promise: Promise<unknown>, status: number, type: string, reason?: RegExp) => {
        await assert.rejects(promise, (error: unknown) => {
          assert.ok(error instanceof errors9.ResponseError, String(error));
          assert.equal(error.meta.statusCode, status);
          assert.equal(error.meta.headers?.['x-elastic-product'], 'Elasticsearch');
          const body = error.meta.body as { error: { type: string; reason: string; root_cause: unknown[] }; status: number };
          assert.equal(body.status, status);
          assert.equal(body.error.type, type);
          assert.equal(body.error.root_cause.length, 1);
          if (reason) assert.match(body.error.reason, reason);
          return true;
        });
      };
      await refusal(
        es.search({ index: '*', aggs: { geo: { geo_bounds: { field: 'x' } } } as never }),
        400,
        'illegal_argument_exception',
        /geo_bounds/,
      );
      await refusal(es.search({ index: '*', query: { query_string: { query: 'status:[500 599]' } } }), 400, 'query_shard_exception', /TO/);
      await refusal(es.search({ index: 'a*b', query: mine }), 400, 'illegal_argument_exception', /index pattern/);
      await refusal(es.search({ index: '*', from: 9_990, size: 20 }), 400, 'illegal_argument_exception', /Result window/);
      await refusal(es.sql.query({ query: 'SELECT 1' }), 400, 'illegal_argument_exception', /POST \/_sql/);
      const wrong = new Client9({ node, auth: { username: reader.username, password: 'Wrong#12345' }, maxRetries: 0 });
      await refusal(wrong.search({ index: '*' }), 401, 'security_exception');
      await refusal(client(writer.username).search({ index: '*' }), 403, 'security_exception');
      await refusal(es.bulk({ operations: [{ index: {} }, { message: 'x' }] }), 403, 'security_exception');
    });
  });
}
