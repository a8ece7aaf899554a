import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { DIALECTS } from '../../helpers/databases.js';
import { BASE, COUNT, documents } from '../../helpers/elastic-documents.js';
import { listenOnLoopback } from '../../helpers/listen.js';
import { PASSWORD, startTestLogs, uniqueName, type TestLogs } from '../../helpers/logs.js';

/**
 * Grafana's Elasticsearch data source, replayed: the requests it sends (test/fixtures/grafana,
 * recorded from its request golden files) get answers of the shape and content its response
 * parser reads. Grafana itself cannot run here.
 */

const FROM = BASE;
const TO = BASE + COUNT * 1000 - 1;

function fixture(name: string): string {
  return readFileSync(new URL(`../../fixtures/grafana/${name}`, import.meta.url), 'utf8')
    .replaceAll('$FROM', String(FROM))
    .replaceAll('$TO', String(TO));
}

type Bucket = { key: number | string; doc_count: number; [name: string]: any };

for (const dialect of DIALECTS) {
  describe(`Grafana's Elasticsearch data source [${dialect}]`, () => {
    let logs: TestLogs;
    let base: string;
    let authorization: string;

    /** What Grafana's backend sends: basic auth, NDJSON, its query parameter. */
    async function msearch(name: string): Promise<any[]> {
      const response = await fetch(`${base}/_msearch?max_concurrent_shard_requests=5`, {
        method: 'POST',
        headers: { authorization, 'content-type': 'application/x-ndjson' },
        body: fixture(name),
      });
      assert.equal(response.status, 200, await response.clone().text());
      assert.equal(response.headers.get('x-elastic-product'), 'Elasticsearch');
      const { responses } = (await response.json()) as { responses: any[] };
      for (const answer of responses) assert.equal(answer.status, 200, JSON.stringify(answer).slice(0, 300));
      return responses;
    }

    before(async () => {
      logs = await startTestLogs(dialect);
      base = `http://127.0.0.1:${await listenOnLoopback(logs.app)}/api/v1/_elastic`;
      const writer = await logs.userWith(['logs:write']);
      const viewer = await logs.userWith(['logs:read']);
      authorization = `Basic ${Buffer.from(`${viewer.username}:${PASSWORD}`).toString('base64')}`;
      const marker = uniqueName('grafana').toLowerCase();
      const body = documents(marker)
        .map(({ id, ...doc }) => `${JSON.stringify({ index: { _index: 'app-2026.11.24', _id: id } })}\n${JSON.stringify(doc)}\n`)
        .join('');
      const stored = await logs.request({
        method: 'POST',
        url: '/api/v1/_elastic/_bulk',
        headers: { ...writer.headers, 'content-type': 'application/x-ndjson' },
        payload: body,
      });
      assert.equal(stored.statusCode, 200);
      assert.equal(stored.json().errors, false);
    });
    after(async () => logs.close());

    test('save & test: cluster health, version and the field mapping', async () => {
      const health = await fetch(`${base}/_cluster/health?wait_for_status=yellow`, { headers: { authorization } });
      assert.equal(health.status, 200);
      assert.equal(((await health.json()) as { status: string }).status, 'green');
      const info = (await (await fetch(`${base}/`, { headers: { authorization } })).json()) as {
        version: { number: string; build_flavor: string };
      };
      assert.match(info.version.number, /^8\./);
      const mapping = (await (await fetch(`${base}/app-*/_mapping`, { headers: { authorization } })).json()) as Record<string, any>;
      assert.equal(mapping['app-*'].mappings.properties['@timestamp'].type, 'date');
      assert.equal(mapping['app-*'].mappings.properties.latency.type, 'double');
    });

    test('time series: count and max per minute of a query, every minute present', async () => {
      const [answer] = await msearch('time-series.ndjson');
      const buckets = answer.aggregations['2'].buckets as Bucket[];
      // 2,500 seconds from a minute boundary: 42 one-minute buckets, 6 errors in each full minute, 4 in the last.
      assert.equal(buckets.length, 42);
      assert.deepEqual(buckets[0]!.key, FROM);
      assert.equal(buckets[0]!.key_as_string, String(FROM));
      assert.deepEqual(
        buckets.map((bucket) => bucket.doc_count),
        [...Array(41).fill(6), 4],
      );
      const maxErrorLatency = (minute: number) =>
        Math.max(
          ...Array.from({ length: 60 }, (_, s) => minute * 60 + s)
            .filter((i) => i < COUNT && i % 10 === 0)
            .map((i) => i % 100),
        );
      assert.deepEqual(
        buckets.map((bucket) => bucket['1'].value),
        buckets.map((_, minute) => maxErrorLatency(minute)),
      );
      assert.deepEqual(answer.hits.total, { value: 250, relation: 'eq' });
    });

    test('terms then date histogram with average and percentiles, as a grouped graph asks', async () => {
      const [answer] = await msearch('terms-then-histogram.ndjson');
      const hosts = answer.aggregations['4'].buckets as Bucket[];
      assert.deepEqual(
        hosts.map((host) => [host.key, host.doc_count]),
        ['h4', 'h3', 'h2', 'h1', 'h0'].map((host) => [host, 500]),
      );
      const h0 = hosts.at(-1)!['2'].buckets as Bucket[];
      assert.deepEqual(
        h0.map((bucket) => bucket.doc_count),
        [120, 120, 120, 120, 20],
      );
      // Host h0 holds multiples of 5: latencies 0, 5, ..., 95, evenly: mean 47.5.
      assert.equal(h0[0]!['1'].value, 47.5);
      assert.deepEqual(Object.keys(h0[0]!['3'].values), ['50.0', '95.0']);
      assert.equal(h0[0]!['3'].values['50.0'], 47.5);
    });

    test('logs: newest first, with the time field in fields, and the log volume histogram', async () => {
      const [answer] = await msearch('logs.ndjson');
      // host h1 never has status 500 (i % 10 == 0 means i % 5 == 0); the fixture's query still runs.
      assert.deepEqual(answer.hits.total, { value: 0, relation: 'eq' });
      const volume = answer.aggregations['2'].buckets as Bucket[];
      assert.equal(volume.length, 5);
      assert.ok(volume.every((bucket) => bucket.doc_count === 0));
      const all = await fetch(`${base}/_msearch`, {
        method: 'POST',
        headers: { authorization, 'content-type': 'application/x-ndjson' },
        body: fixture('logs.ndjson').replace('host:h1', 'host:h0'),
      });
      const [logsAnswer] = ((await all.json()) as { responses: any[] }).responses;
      assert.equal(logsAnswer.hits.hits.length, 250);
      const first = logsAnswer.hits.hits[0];
      assert.equal(first._index, 'app-2026.11.24');
      assert.equal(first._source.host, 'h0');
      assert.equal(first._source.status, 500);
      assert.deepEqual(first.fields['@timestamp'], [new Date(BASE + 2490 * 1000).toISOString()]);
      assert.equal(first._source['@timestamp'], first.fields['@timestamp'][0]);
      assert.equal(
        (logsAnswer.aggregations['2'].buckets as Bucket[]).reduce((sum, bucket) => sum + bucket.doc_count, 0),
        250,
      );
    });

    test('logs volume by level: terms with min_doc_count 0 and missing, then a date histogram', async () => {
      const [answer] = await msearch('logs-volume.ndjson');
      const levels = answer.aggregations['3'].buckets as Bucket[];
      // Host h1 (i % 5 == 1) has no errors: the level is listed with 0, as Grafana expects from min_doc_count 0.
      assert.deepEqual(
        levels.map((level) => [level.key, level.doc_count]),
        [
          ['info', 500],
          ['error', 0],
        ],
      );
      assert.deepEqual(
        (levels[0]!['2'].buckets as Bucket[]).map((bucket) => bucket.doc_count),
        [120, 120, 120, 120, 20],
      );
      assert.deepEqual(
        (levels[1]!['2'].buckets as Bucket[]).map((bucket) => [bucket.key, bucket.doc_count]),
        [0, 1, 2, 3, 4].map((i) => [FROM + i * 600_000, 0]),
      );
      // Documents without a level are the `missing` bucket.
      const unlevelled = await logs.request({
        method: 'POST',
        url: '/api/v1/_elastic/_bulk',
        headers: { ...(await logs.userWith(['logs:write'])).headers, 'content-type': 'application/x-ndjson' },
        payload: `{"index":{"_index":"app-2026.11.24"}}\n${JSON.stringify({ '@timestamp': FROM + 5, message: 'no level', host: 'h1' })}\n`,
      });
      assert.equal(unlevelled.statusCode, 200);
      const [again] = await msearch('logs-volume.ndjson');
      assert.deepEqual(
        (again.aggregations['3'].buckets as Bucket[]).map((level) => [level.key, level.doc_count]),
        [
          ['info', 500],
          ['unknown', 1],
          ['error', 0],
        ],
      );
    });

    test('template variables: values of a field, and terms with a cardinality metric', async () => {
      const [hosts, levels] = await msearch('variable-values.ndjson');
      assert.deepEqual(
        (hosts.aggregations['1'].buckets as Bucket[]).map((bucket) => bucket.key),
        ['h0', 'h1', 'h2', 'h3', 'h4'],
      );
      assert.deepEqual(
        (levels.aggregations['3'].buckets as Bucket[]).map((bucket) => [bucket.key, bucket.doc_count, bucket['1'].value]),
        [
          ['info', 2250, 5],
          ['error', 250, 1],
        ],
      );
    });
  });
}
