import assert from 'node:assert/strict';
import { execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client as Client9 } from '@elastic/elasticsearch';
import { Client as Client8 } from 'elasticsearch8';
import { Client as OpenSearch } from '@opensearch-project/opensearch';
import { LOGS_ADMIN, LOGS_ADMIN_PASSWORD } from '../helpers/logs.js';
import { killHard, startLogsProcess } from '../helpers/logs-process.js';
import { closedPort } from '../helpers/upstream.js';

/**
 * The clients a team moving off ELK brings, unchanged, against a real logs process (the CLI, SQLite):
 * the official JavaScript clients 9 and 8, the OpenSearch client and Python's elasticsearch 7.17
 * (Debian's python3-elasticsearch, run by /usr/bin/python3; .ci/run installs it). Each goes through
 * index/get/mget/count/exists, reads 25,000 documents to the end with its scroll helper
 * (`helpers.scrollDocuments`, `helpers.scan`), pages a point in time with a two-key sort, and asks
 * for the dashboards' aggregations; every answer is compared with the one computed here.
 * docs/elasticsearch.md. In SLOW_SUITES (test/e2e/).
 */

const TOTAL = 25_000;
const BASE = Date.UTC(2026, 10, 22, 0, 0, 0);
const PYTHON = '/usr/bin/python3';

interface Doc {
  '@timestamp': string;
  message: string;
  level?: string;
  host: string;
  latency: number;
}

/** Two documents a second (ties for the tiebreaker); every tenth an error, every tenth but one without a level. */
function documentOf(marker: string, i: number): Doc {
  return {
    '@timestamp': new Date(BASE + Math.floor(i / 2) * 1000).toISOString(),
    message: `client ${marker} ${i}`,
    ...(i % 10 === 1 ? {} : { level: i % 10 === 0 ? 'error' : 'info' }),
    host: `h${i % 5}`,
    latency: i % 100,
  };
}

/** The aggregations every client asks for, and the answer they must get. */
const AGGS = {
  lat: { stats: { field: 'latency' } },
  spread: { extended_stats: { field: 'latency' } },
  with_level: { value_count: { field: 'level' } },
  levels: { terms: { field: 'level', missing: 'unknown', min_doc_count: 0 } },
  slow: { filters: { filters: { slow: { range: { latency: { gte: 90 } } } } } },
  bands: { range: { field: 'latency', ranges: [{ to: 50 }, { from: 50 }] } },
  hist: { histogram: { field: 'latency', interval: 25 } },
  first_hour: { date_range: { field: '@timestamp', format: 'epoch_millis', ranges: [{ from: BASE, to: BASE + 3_600_000 }] } },
  hosts: { terms: { field: 'host', size: 1, order: { _key: 'asc' } }, aggs: { latest: { top_hits: { size: 1, _source: ['latency'] } } } },
};

function expectedAggregations() {
  const docs = Array.from({ length: TOTAL }, (_, i) => ({ i, ...documentOf('', i) }));
  const latencies = docs.map((doc) => doc.latency);
  const sum = latencies.reduce((a, b) => a + b, 0);
  const count = (predicate: (doc: (typeof docs)[number]) => boolean) => docs.filter(predicate).length;
  const newestH0 = docs.filter((doc) => doc.host === 'h0').at(-1)!;
  return {
    lat: { count: TOTAL, min: 0, max: 99, avg: sum / TOTAL, sum },
    with_level: count((doc) => doc.level !== undefined),
    levels: [
      ['info', count((doc) => doc.level === 'info')],
      ['error', count((doc) => doc.level === 'error')],
      ['unknown', count((doc) => doc.level === undefined)],
    ],
    slow: count((doc) => doc.latency >= 90),
    bands: [count((doc) => doc.latency < 50), count((doc) => doc.latency >= 50)],
    hist: [0, 25, 50, 75].map((key) => [key, count((doc) => doc.latency >= key && doc.latency < key + 25)]),
    first_hour: count((doc) => Date.parse(doc['@timestamp']) < BASE + 3_600_000),
    hosts: { key: 'h0', doc_count: count((doc) => doc.host === 'h0'), latest: newestH0.latency },
  };
}

/** The parts of an aggregations answer that are compared (the same for every client). */
function comparable(aggs: any) {
  return {
    lat: { ...aggs.lat, avg: Math.round(aggs.lat.avg * 1e6) / 1e6 },
    with_level: aggs.with_level.value,
    levels: aggs.levels.buckets.map((bucket: any) => [bucket.key, bucket.doc_count]),
    slow: aggs.slow.buckets.slow.doc_count,
    bands: aggs.bands.buckets.map((bucket: any) => bucket.doc_count),
    hist: aggs.hist.buckets.map((bucket: any) => [bucket.key, bucket.doc_count]),
    first_hour: aggs.first_hour.buckets[0].doc_count,
    hosts: {
      key: aggs.hosts.buckets[0].key,
      doc_count: aggs.hosts.buckets[0].doc_count,
      latest: aggs.hosts.buckets[0].latest.hits.hits[0]._source.latency,
    },
  };
}

describe('Elasticsearch and OpenSearch clients against a real logs process', () => {
  let child: ChildProcess;
  let dir: string;
  let node: string;
  const marker = `clients${process.pid}`;
  const index = `clients-${marker}`;
  const auth = { username: LOGS_ADMIN, password: LOGS_ADMIN_PASSWORD };
  const query = { query_string: { query: `"${marker}"` } };
  const expected = expectedAggregations();
  expected.lat.avg = Math.round(expected.lat.avg * 1e6) / 1e6;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'elastic-clients-'));
    const port = await closedPort();
    child = await startLogsProcess(`sqlite:${join(dir, 'logs.sqlite')}`, port, {
      LOGS_API_RATE_PER_USER: '1000000',
      LOGS_INGEST_RATE_PER_TENANT: '1000000',
      LOGS_LOGIN_RATE_PER_ADDRESS: '100000',
    });
    node = `http://127.0.0.1:${port}/api/v1/_elastic`;
    // 25,000 documents through _bulk, without _ids (the _ids are generated and must be the ones read back).
    const es = new Client9({ node, auth, maxRetries: 0 });
    for (let first = 0; first < TOTAL; first += 5000) {
      const operations = Array.from({ length: 5000 }, (_, k) => [{ index: { _index: index } }, documentOf(marker, first + k)]).flat();
      const result = await es.bulk({ operations });
      assert.equal(result.errors, false);
    }
  });
  after(async () => {
    if (child) await killHard(child);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const JS_CLIENTS = [
    { name: '@elastic/elasticsearch 9', make: () => new Client9({ node, auth, maxRetries: 0 }) },
    { name: '@elastic/elasticsearch 8', make: () => new Client8({ node, auth, maxRetries: 0 }) as unknown as Client9 },
  ];

  for (const { name, make } of JS_CLIENTS) {
    test(`${name}: documents, scrollDocuments to the end, point in time with two sort keys, aggregations`, async () => {
      const es = make();
      const own = `${name.at(-1)}-${marker}`;
      const ownText = `js${name.at(-1)}${marker}`;
      assert.equal(
        (await es.index({ index, id: own, document: { '@timestamp': 1, message: ownText, n: 1 }, refresh: true })).result,
        'created',
      );
      const generated = await es.index({ index, document: { '@timestamp': 2, message: ownText, n: 2 } });
      assert.equal((await es.get<{ n: number }>({ index, id: generated._id }))._source!.n, 2);
      const byIds = await es.search({ index, query: { ids: { values: [generated._id] } } });
      assert.deepEqual(
        byIds.hits.hits.map((hit) => hit._id),
        [generated._id],
      );
      assert.deepEqual(
        (await es.mget({ index, ids: [own, 'nope'] })).docs.map((doc) => 'found' in doc && doc.found),
        [true, false],
      );
      assert.deepEqual(
        [await es.exists({ index, id: own }), await es.exists({ index, id: 'nope' }), await es.indices.exists({ index })],
        [true, false, true],
      );
      await assert.rejects(es.create({ index, id: own, document: { message: 'again' } }), (error: any) => error.statusCode === 409);
      assert.equal((await es.count({ index, query })).count, TOTAL);

      const ids = new Set<string>();
      let read = 0;
      for await (const hit of es.helpers.scrollSearch({ index, query, size: 1000 })) {
        for (const document of hit.body.hits.hits) {
          ids.add(document._id!);
          read += 1;
        }
      }
      assert.deepEqual([read, ids.size], [TOTAL, TOTAL]);
      let documents = 0;
      for await (const _document of es.helpers.scrollDocuments({ index, query, size: 1000 })) documents += 1;
      assert.equal(documents, TOTAL);

      const pit = await es.openPointInTime({ index, keep_alive: '1m' });
      const seen = new Set<string>();
      let last = -Infinity;
      let ordered = true;
      let searchAfter: unknown[] | undefined;
      for (;;) {
        const page = await es.search({
          pit: { id: pit.id, keep_alive: '1m' },
          query,
          size: 5000,
          sort: [{ '@timestamp': 'desc' }, { _shard_doc: 'desc' }],
          track_total_hits: false,
          ...(searchAfter ? { search_after: searchAfter as never } : {}),
        });
        if (page.hits.hits.length === 0) break;
        for (const hit of page.hits.hits) {
          seen.add(hit._id!);
          const time = hit.sort![0] as number;
          if (last !== -Infinity && time > last) ordered = false;
          last = time;
        }
        searchAfter = page.hits.hits.at(-1)!.sort;
      }
      assert.deepEqual([seen.size, ordered], [TOTAL, true]);
      assert.equal((await es.closePointInTime({ id: pit.id })).succeeded, true);

      const aggs = await es.search({ index, query, size: 0, aggs: AGGS as never });
      assert.deepEqual(comparable(aggs.aggregations), expected);

      const volume = readFileSync(new URL('../fixtures/grafana/logs-volume.ndjson', import.meta.url), 'utf8')
        .replaceAll('$FROM', String(BASE))
        .replaceAll('$TO', String(BASE + 3_600_000 - 1))
        .replace('host:h1', `\\"${marker}\\"`)
        .replace('"index":"app-*"', `"index":"${index}"`);
      const [header, body] = volume
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      const answer = (await es.msearch({ searches: [header, body] })).responses[0] as any;
      assert.deepEqual(
        answer.aggregations['3'].buckets.map((bucket: any) => [bucket.key, bucket.doc_count, bucket['2'].buckets.length]),
        [
          ['info', 5760, 6],
          ['error', 720, 6],
          ['unknown', 720, 6],
        ],
      );
    });
  }

  test('@opensearch-project/opensearch: documents, helpers.scrollDocuments to the end, two-key search_after, its own point in time, aggregations', async () => {
    const os = new OpenSearch({ node, auth, maxRetries: 0 });
    const own = `os-${marker}`;
    const ownText = `os${marker}`;
    assert.equal((await os.index({ index, id: own, body: { '@timestamp': 1, message: ownText }, refresh: true })).body.result, 'created');
    const generated = (await os.index({ index, body: { '@timestamp': 2, message: ownText, n: 2 } })).body._id;
    assert.equal((await os.get({ index, id: generated })).body._source!.n, 2);
    assert.deepEqual(
      (await os.mget({ index, body: { ids: [own, 'nope'] } })).body.docs.map((doc: any) => doc.found),
      [true, false],
    );
    assert.equal((await os.exists({ index, id: own })).body, true);
    assert.equal((await os.exists({ index, id: 'nope' })).body, false);
    assert.equal((await os.indices.exists({ index })).body, true);
    assert.equal((await os.count({ index, body: { query } })).body.count, TOTAL);
    assert.equal((await os.indices.putIndexTemplate({ name: 'os', body: { index_patterns: ['x-*'] } })).body.acknowledged, true);

    let documents = 0;
    const ids = new Set<string>();
    for await (const hit of os.helpers.scrollSearch({ index, body: { query }, size: 1000 })) {
      for (const document of (hit as any).body.hits.hits) ids.add(document._id);
    }
    for await (const _document of os.helpers.scrollDocuments({ index, body: { query }, size: 1000 })) documents += 1;
    assert.deepEqual([documents, ids.size], [TOTAL, TOTAL]);

    const seen = new Set<string>();
    let searchAfter: unknown[] | undefined;
    for (;;) {
      const page = (
        await os.search({
          index,
          body: {
            query,
            size: 5000,
            sort: [{ '@timestamp': 'asc' }, { _doc: 'asc' }],
            ...(searchAfter ? { search_after: searchAfter } : {}),
          } as never,
        })
      ).body as any;
      if (page.hits.hits.length === 0) break;
      for (const hit of page.hits.hits) seen.add(hit._id);
      searchAfter = page.hits.hits.at(-1).sort;
    }
    assert.equal(seen.size, TOTAL);

    // OpenSearch's own point-in-time API, paged to the end with the PIT in the body.
    const pit = (await os.createPit({ index: [index], keep_alive: '1m' })).body as any;
    assert.equal(typeof pit.pit_id, 'string');
    const inPit = new Set<string>();
    let pitAfter: unknown[] | undefined;
    for (;;) {
      const page = (
        await os.search({
          body: {
            pit: { id: pit.pit_id, keep_alive: '1m' },
            query,
            size: 5000,
            sort: [{ '@timestamp': 'desc' }, { _shard_doc: 'desc' }],
            ...(pitAfter ? { search_after: pitAfter } : {}),
          } as never,
        })
      ).body as any;
      if (page.hits.hits.length === 0) break;
      for (const hit of page.hits.hits) inPit.add(hit._id);
      pitAfter = page.hits.hits.at(-1).sort;
    }
    assert.equal(inPit.size, TOTAL);
    assert.deepEqual((await os.deletePit({ body: { pit_id: [pit.pit_id] } })).body, { pits: [{ successful: true, pit_id: pit.pit_id }] });
    assert.deepEqual((await os.getAllPits()).body, { pits: [] });

    const aggs = (await os.search({ index, body: { query, size: 0, aggs: AGGS } as never })).body as any;
    assert.deepEqual(comparable(aggs.aggregations), expected);
  });

  test("Python's elasticsearch 7.17: documents, helpers.scan to the end, point in time with two sort keys, aggregations", async () => {
    const script = new URL('./elastic-python-client.py', import.meta.url).pathname;
    const stdout = await new Promise<string>((resolve, reject) => {
      const run = execFile(
        PYTHON,
        [script, node, auth.username, auth.password, marker],
        { timeout: 300_000, maxBuffer: 16 << 20 },
        (error, out, err) => (error ? reject(new Error(`${error.message}\n${err}`)) : resolve(out)),
      );
      run.stdin!.end(JSON.stringify(AGGS));
    });
    const result = JSON.parse(stdout);
    assert.deepEqual(
      {
        index: result.index,
        create_again: result.create_again,
        get_generated: result.get_generated,
        search_generated: result.search_generated,
        mget: result.mget,
        exists: result.exists,
        get_missing: result.get_missing,
        count: result.count,
        scan: result.scan,
        pit: result.pit,
        pit_closed: result.pit_closed,
      },
      {
        index: 'created',
        create_again: 409,
        get_generated: -2,
        search_generated: true,
        mget: [true, false],
        exists: [true, false, true],
        get_missing: 404,
        count: TOTAL,
        scan: { count: TOTAL, unique: TOTAL },
        pit: { count: TOTAL, unique: TOTAL, ordered: true },
        pit_closed: true,
      },
    );
    assert.deepEqual(comparable(result.aggregations), expected);
  });
});
