import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@elastic/elasticsearch';
import { DIALECTS } from '../../helpers/databases.js';
import { listenOnLoopback } from '../../helpers/listen.js';
import { PASSWORD, startTestLogs, uniqueName, type TestLogs } from '../../helpers/logs.js';

/**
 * The aggregations dashboards are built from (docs/elasticsearch.md): stats, extended_stats,
 * value_count, filters, histogram, range, date_range, top_hits, and terms with `missing` and
 * `min_doc_count: 0`; each compared with the answer computed here from the documents sent.
 */

const BASE = Date.UTC(2026, 10, 21, 6, 0, 0);
const COUNT = 600;

interface Doc {
  '@timestamp': string;
  message: string;
  level?: string;
  host: string;
  latency?: number;
}

/** One a second; every third without a level; latency 0..59 (none on every seventh); hosts a, b, c. */
function documents(marker: string): Doc[] {
  return Array.from({ length: COUNT }, (_, i) => ({
    '@timestamp': new Date(BASE + i * 1000).toISOString(),
    message: `agg ${marker} ${i}`,
    ...(i % 3 === 0 ? {} : { level: i % 2 === 0 ? 'error' : 'info' }),
    host: ['a', 'b', 'c'][i % 3]!,
    ...(i % 7 === 0 ? {} : { latency: i % 60 }),
  }));
}

function stats(values: number[]) {
  const sum = values.reduce((a, b) => a + b, 0);
  const avg = sum / values.length;
  const squares = values.reduce((a, b) => a + b * b, 0);
  const variance = squares / values.length - avg * avg;
  return { count: values.length, min: Math.min(...values), max: Math.max(...values), avg, sum, squares, variance };
}

const close = (actual: number, expected: number, what: string) =>
  assert.ok(Math.abs(actual - expected) < 1e-6, `${what}: ${actual} != ${expected}`);

for (const dialect of DIALECTS) {
  describe(`Elasticsearch aggregations [${dialect}]`, () => {
    let logs: TestLogs;
    let es: Client;
    const marker = uniqueName('esagg').toLowerCase();
    const docs = documents(marker);
    const latencies = docs.flatMap((doc) => (doc.latency === undefined ? [] : [doc.latency]));
    const query = {
      bool: { filter: [{ range: { '@timestamp': { gte: BASE, lt: BASE + COUNT * 1000 } } }, { query_string: { query: `"${marker}"` } }] },
    };
    const search = async (aggs: Record<string, unknown>) =>
      (await es.search({ index: `agg-${marker}`, query, size: 0, aggs: aggs as never })).aggregations as Record<string, any>;

    before(async () => {
      logs = await startTestLogs(dialect);
      const node = `http://127.0.0.1:${await listenOnLoopback(logs.app)}/api/v1/_elastic`;
      const user = await logs.userWith(['logs:read', 'logs:write']);
      es = new Client({ node, auth: { username: user.username, password: PASSWORD }, maxRetries: 0 });
      const result = await es.bulk({ operations: docs.flatMap((doc) => [{ index: { _index: `agg-${marker}` } }, doc]) });
      assert.equal(result.errors, false);
    });
    after(async () => logs.close());

    test('stats, extended_stats and value_count', async () => {
      const aggs = await search({
        s: { stats: { field: 'latency' } },
        x: { extended_stats: { field: 'latency' } },
        n: { value_count: { field: 'latency' } },
        levels: { value_count: { field: 'level' } },
      });
      const expected = stats(latencies);
      assert.deepEqual(aggs.s, { count: expected.count, min: expected.min, max: expected.max, avg: aggs.s.avg, sum: expected.sum });
      close(aggs.s.avg, expected.avg, 'avg');
      close(aggs.x.sum_of_squares, expected.squares, 'sum_of_squares');
      close(aggs.x.variance, expected.variance, 'variance');
      close(aggs.x.std_deviation, Math.sqrt(expected.variance), 'std_deviation');
      close(aggs.x.std_deviation_bounds.upper, expected.avg + 2 * Math.sqrt(expected.variance), 'upper bound');
      close(aggs.x.variance_sampling, (expected.squares - expected.count * expected.avg ** 2) / (expected.count - 1), 'variance_sampling');
      assert.equal(aggs.n.value, latencies.length);
      assert.equal(aggs.levels.value, docs.filter((doc) => doc.level !== undefined).length);
    });

    test('filters, range, date_range and histogram, with sub-aggregations', async () => {
      const aggs = await search({
        f: {
          filters: { filters: { slow: { range: { latency: { gte: 50 } } }, errors: { term: { level: 'error' } } } },
          aggs: { m: { max: { field: 'latency' } } },
        },
        anon: { filters: { filters: [{ term: { host: 'a' } }] } },
        r: {
          range: { field: 'latency', ranges: [{ to: 10 }, { from: 10, to: 30 }, { from: 30, key: 'high' }] },
          aggs: { hosts: { terms: { field: 'host' } } },
        },
        d: {
          date_range: {
            field: '@timestamp',
            format: 'epoch_millis',
            ranges: [{ to: BASE + 60_000 }, { from: BASE + 60_000, to: BASE + 120_000 }],
          },
        },
        h: {
          histogram: { field: 'latency', interval: 20, extended_bounds: { min: 0, max: 80 } },
          aggs: { s: { sum: { field: 'latency' } } },
        },
      });
      const count = (predicate: (doc: Doc) => boolean) => docs.filter(predicate).length;
      assert.deepEqual(Object.keys(aggs.f.buckets), ['errors', 'slow']);
      assert.equal(
        aggs.f.buckets.slow.doc_count,
        count((doc) => (doc.latency ?? -1) >= 50),
      );
      assert.equal(aggs.f.buckets.slow.m.value, 59);
      assert.equal(
        aggs.f.buckets.errors.doc_count,
        count((doc) => doc.level === 'error'),
      );
      assert.deepEqual(aggs.anon.buckets, [{ doc_count: count((doc) => doc.host === 'a') }]);
      assert.deepEqual(
        aggs.r.buckets.map((bucket: any) => [bucket.key, bucket.from, bucket.to, bucket.doc_count]),
        [
          ['*-10.0', undefined, 10, count((doc) => doc.latency !== undefined && doc.latency < 10)],
          ['10.0-30.0', 10, 30, count((doc) => doc.latency !== undefined && doc.latency >= 10 && doc.latency < 30)],
          ['high', 30, undefined, count((doc) => doc.latency !== undefined && doc.latency >= 30)],
        ],
      );
      assert.equal(
        aggs.r.buckets[0].hosts.buckets.reduce((sum: number, bucket: any) => sum + bucket.doc_count, 0),
        aggs.r.buckets[0].doc_count,
      );
      assert.deepEqual(
        aggs.d.buckets.map((bucket: any) => [bucket.key, bucket.doc_count]),
        [
          [`*-${BASE + 60_000}`, 60],
          [`${BASE + 60_000}-${BASE + 120_000}`, 60],
        ],
      );
      const histogram = [0, 20, 40, 60, 80].map((key) => {
        const inside = latencies.filter((value) => value >= key && value < key + 20);
        return [key, inside.length, inside.reduce((a, b) => a + b, 0)];
      });
      assert.deepEqual(
        aggs.h.buckets.map((bucket: any) => [bucket.key, bucket.doc_count, bucket.s.value ?? 0]),
        histogram,
      );
    });

    test('terms alone on level and host (counted as field statistics are), entries without the field in missing', async () => {
      const aggs = await search({
        levels: { terms: { field: 'level', missing: 'none' } },
        plain: { terms: { field: 'level' } },
        hosts: { terms: { field: 'host', size: 2 } },
      });
      const count = (predicate: (doc: Doc) => boolean) => docs.filter(predicate).length;
      const byCount = (rows: [string, number][]) => rows.sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
      const levelRows = byCount([
        ['none', count((doc) => doc.level === undefined)],
        ['error', count((doc) => doc.level === 'error')],
        ['info', count((doc) => doc.level === 'info')],
      ]);
      assert.deepEqual(
        aggs.levels.buckets.map((bucket: any) => [bucket.key, bucket.doc_count]),
        levelRows,
      );
      // Without `missing`, entries without a level are in no bucket (nor in sum_other_doc_count).
      assert.deepEqual(
        aggs.plain.buckets.map((bucket: any) => [bucket.key, bucket.doc_count]),
        levelRows.filter(([key]) => key !== 'none'),
      );
      assert.equal(aggs.plain.sum_other_doc_count, 0);
      const hostRows = byCount(['a', 'b', 'c'].map((host) => [host, count((doc) => doc.host === host)] as [string, number]));
      assert.deepEqual(
        aggs.hosts.buckets.map((bucket: any) => [bucket.key, bucket.doc_count]),
        hostRows.slice(0, 2),
      );
      assert.equal(aggs.hosts.sum_other_doc_count, hostRows[2]![1]);
    });

    test('terms with missing and min_doc_count 0; top_hits per bucket', async () => {
      const aggs = await search({
        levels: {
          terms: { field: 'level', size: 10, min_doc_count: 0, missing: 'unknown' },
          aggs: { latest: { top_hits: { size: 2, sort: [{ '@timestamp': { order: 'desc' } }], _source: ['host'] } } },
        },
      });
      const withoutLevel = docs.filter((doc) => doc.level === undefined).length;
      assert.deepEqual(
        aggs.levels.buckets.map((bucket: any) => [bucket.key, bucket.doc_count]),
        [
          ['unknown', withoutLevel],
          ['error', docs.filter((doc) => doc.level === 'error').length],
          ['info', docs.filter((doc) => doc.level === 'info').length],
        ].sort((a, b) => Number(b[1]) - Number(a[1]) || String(a[0]).localeCompare(String(b[0]))),
      );
      const unknown = aggs.levels.buckets.find((bucket: any) => bucket.key === 'unknown');
      // The newest documents without a level: i = 597 and 594 (every third).
      assert.deepEqual(
        unknown.latest.hits.hits.map((hit: any) => [hit._source, hit.sort[0]]),
        [
          [{ host: 'a' }, BASE + 597_000],
          [{ host: 'a' }, BASE + 594_000],
        ],
      );
      // min_doc_count 0: a value that exists in the range but not among the matches is a bucket of 0.
      const errorsOnly = (
        await es.search({
          index: `agg-${marker}`,
          query: { bool: { filter: [query, { term: { level: 'error' } }] } },
          size: 0,
          aggs: { levels: { terms: { field: 'level', min_doc_count: 0 } } },
        })
      ).aggregations as Record<string, any>;
      assert.deepEqual(
        errorsOnly.levels.buckets.map((bucket: any) => [bucket.key, bucket.doc_count]),
        [
          ['error', docs.filter((doc) => doc.level === 'error').length],
          ['info', 0],
        ],
      );
    });

    test('missing on metrics, keyed histograms, ranges and percentiles, other_bucket on filters', async () => {
      const aggs = await search({
        avg: { avg: { field: 'latency', missing: 100 } },
        sum: { sum: { field: 'latency', missing: '1' } },
        min: { min: { field: 'latency', missing: -5 } },
        max: { max: { field: 'latency', missing: 100 } },
        st: { stats: { field: 'latency', missing: 0 } },
        p: { percentiles: { field: 'latency', percents: [50, 100], keyed: false } },
        pm: { percentiles: { field: 'latency', percents: [100], missing: 1000 } },
        h: { histogram: { field: 'latency', interval: 30, keyed: true } },
        dh: { date_histogram: { field: '@timestamp', fixed_interval: '5m', keyed: true, format: 'epoch_millis' } },
        r: { range: { field: 'latency', ranges: [{ to: 10 }, { from: 10, key: 'rest' }], keyed: true } },
        f: {
          filters: {
            filters: JSON.parse('{"errors":{"term":{"level":"error"}},"__proto__":{"term":{"host":"a"}}}'),
            other_bucket_key: 'others',
          },
          aggs: { n: { value_count: { field: 'host' } } },
        },
        anon: { filters: { filters: [{ term: { host: 'a' } }, { term: { host: 'b' } }], other_bucket: true } },
        off: { filters: { filters: { a: { term: { host: 'a' } } }, other_bucket: false, other_bucket_key: 'x' } },
      });
      const absent = docs.filter((doc) => doc.latency === undefined).length;
      const count = (predicate: (doc: Doc) => boolean) => docs.filter(predicate).length;
      const all = stats(latencies);
      close(aggs.avg.value, (all.sum + 100 * absent) / COUNT, 'avg with missing');
      assert.equal(aggs.sum.value, all.sum + absent);
      assert.deepEqual([aggs.min.value, aggs.max.value], [-5, 100]);
      assert.deepEqual([aggs.st.count, aggs.st.min, aggs.st.sum], [COUNT, 0, all.sum]);
      assert.deepEqual(aggs.p.values, [
        { key: 50, value: aggs.p.values[0].value },
        { key: 100, value: 59 },
      ]);
      assert.deepEqual(aggs.pm.values, { '100.0': 1000 });
      assert.deepEqual(Object.keys(aggs.h.buckets), ['0.0', '30.0']);
      assert.deepEqual(aggs.h.buckets['30.0'], { key: 30, doc_count: latencies.filter((value) => value >= 30).length });
      assert.equal(Object.keys(aggs.dh.buckets).length, 2);
      assert.deepEqual(aggs.dh.buckets[String(BASE)], { key_as_string: String(BASE), key: BASE, doc_count: 300 });
      assert.deepEqual(Object.keys(aggs.r.buckets), ['*-10.0', 'rest']);
      assert.equal(aggs.r.buckets.rest.doc_count, latencies.filter((value) => value >= 10).length);
      assert.deepEqual(Object.keys(aggs.f.buckets), ['__proto__', 'errors', 'others']);
      assert.equal(
        aggs.f.buckets.__proto__.doc_count,
        count((doc) => doc.host === 'a'),
      );
      const others = count((doc) => doc.host !== 'a' && doc.level !== 'error');
      assert.deepEqual(aggs.f.buckets.others, { doc_count: others, n: { value: others } });
      assert.deepEqual(
        aggs.anon.buckets.map((bucket: any) => bucket.doc_count),
        [count((doc) => doc.host === 'a'), count((doc) => doc.host === 'b'), count((doc) => doc.host === 'c')],
      );
      assert.deepEqual(Object.keys(aggs.off.buckets), ['a']);
    });

    test('missing on value_count and cardinality: documents without the field have that value', async () => {
      const aggs = await search({
        vc: { value_count: { field: 'level' } },
        vcm: { value_count: { field: 'level', missing: 'none' } },
        c: { cardinality: { field: 'level' } },
        cm: { cardinality: { field: 'level', missing: 'none' } },
        // A value some documents have: not one more.
        same: { cardinality: { field: 'level', missing: 'error' } },
        zero: { cardinality: { field: 'latency', missing: 0 } },
        far: { cardinality: { field: 'latency', missing: '1000' } },
        everywhere: { cardinality: { field: 'host', missing: 'z' } },
        hosts: {
          terms: { field: 'host' },
          aggs: {
            c: { cardinality: { field: 'level', missing: 'none' } },
            v: { value_count: { field: 'latency', missing: 5 } },
            plain: { value_count: { field: 'latency' } },
          },
        },
      });
      /** Elasticsearch's answer: each document without the field counted with the missing value. */
      const distinct = (of: Doc[], field: keyof Doc, missing: string | number) =>
        new Set(of.map((doc) => String(doc[field] ?? missing))).size;
      const withLevel = docs.filter((doc) => doc.level !== undefined).length;
      assert.deepEqual(
        [aggs.vc.value, aggs.vcm.value, aggs.c.value, aggs.cm.value, aggs.same.value],
        [withLevel, COUNT, 2, distinct(docs, 'level', 'none'), distinct(docs, 'level', 'error')],
      );
      assert.deepEqual([aggs.cm.value, aggs.same.value], [3, 2]);
      assert.deepEqual(
        [aggs.zero.value, aggs.far.value, aggs.everywhere.value],
        [distinct(docs, 'latency', 0), distinct(docs, 'latency', 1000), 3],
      );
      assert.deepEqual([aggs.zero.value, aggs.far.value], [60, 61]);
      for (const host of ['a', 'b', 'c']) {
        const ofHost = docs.filter((doc) => doc.host === host);
        const bucket = aggs.hosts.buckets.find((b: any) => b.key === host);
        assert.deepEqual(
          [bucket.c.value, bucket.v.value, bucket.plain.value],
          [distinct(ofHost, 'level', 'none'), ofHost.length, ofHost.filter((doc) => doc.latency !== undefined).length],
          `host ${host}`,
        );
      }
      // Host a's documents have no level at all: the missing value is their only one.
      assert.equal(aggs.hosts.buckets.find((b: any) => b.key === 'a').c.value, 1);
    });

    test("hits.total taken from the aggregations' counts is every match, those without the grouped field included", async () => {
      for (const aggs of [
        { levels: { terms: { field: 'level', size: 1 } } },
        { latency: { terms: { field: 'latency', size: 1 } } },
        { over: { date_histogram: { field: '@timestamp', fixed_interval: '1m' } } },
        { levels: { terms: { field: 'level' }, aggs: { over: { date_histogram: { field: '@timestamp', fixed_interval: '1m' } } } } },
      ]) {
        const answer = await es.search({ index: `agg-${marker}`, query, size: 2, aggs: aggs as never, track_total_hits: true });
        assert.deepEqual([answer.hits.total, answer.hits.hits.length], [{ value: COUNT, relation: 'eq' }, 2], JSON.stringify(aggs));
      }
      const levels = await es.search({ index: `agg-${marker}`, query, size: 0, aggs: { l: { terms: { field: 'level' } } } });
      assert.equal((levels.aggregations!.l as any).sum_other_doc_count, 0);
    });

    test('bad aggregation input is a 400', async () => {
      for (const aggs of [
        { x: { stats: { field: 'latency', missing: 'many' } } },
        { x: { cardinality: { field: 'latency', missing: {} } } },
        { x: { value_count: { field: 'latency', missing: [1] } } },
        { x: { histogram: { field: 'latency', interval: 10, keyed: 'yes' } } },
        { x: { filters: { filters: [{ term: { host: 'a' } }], other_bucket_key: 3 } } },
        { x: { range: { field: 'latency', ranges: [{ from: 'a' }] } } },
        { x: { range: { field: 'latency' } } },
        { x: { histogram: { field: 'latency', interval: 0 } } },
        { x: { histogram: { field: 'latency', interval: 0.0001 } } },
        { x: { date_range: { field: 'host', ranges: [{ to: 'now' }] } } },
        { x: { filters: { filters: 3 } } },
        { x: { top_hits: { size: 1000 } } },
        { x: { terms: { field: 'level', min_doc_count: -1 } } },
        { x: { terms: { field: 'level', missing: {} } } },
        { x: { extended_stats: { field: 'latency', sigma: 3 } } },
      ]) {
        await assert.rejects(
          es.search({ index: `agg-${marker}`, size: 0, aggs: aggs as never }),
          (error: any) => error.statusCode === 400 && typeof error.body?.error?.type === 'string',
          JSON.stringify(aggs),
        );
      }
    });
  });
}
