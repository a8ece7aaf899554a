import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Drain, patternQuery, tokensOf, WILDCARD } from '../../../src/logs/modules/patterns/drain.js';
import { quotas } from '../../../src/logs/modules/patterns/patterns.service.js';
import { DIALECTS } from '../../helpers/databases.js';
import { startTestLogs, uniqueName, type TestLogs } from '../../helpers/logs.js';

const MINUTE = 60_000;
const T0 = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 3 * 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();
const HOUR_RANGE = { from: iso(T0), to: iso(T0 + 60 * MINUTE) };
const uuid = (i: number) => `${i.toString(16).padStart(8, '0')}-1b2c-4d5e-8f90-${(i * 7919).toString(16).padStart(12, '0')}`;
const ndjson = (docs: object[]) => `${docs.map((doc) => `{"index":{}}\n${JSON.stringify(doc)}`).join('\n')}\n`;

describe('Drain: masking, grouping, the search of a pattern', () => {
  test('numbers, IP addresses, UUIDs and hex ids are masked before grouping', () => {
    assert.deepEqual(tokensOf(`GET /orders/42 from 10.1.2.3:8080 took 12.5ms id=${uuid(3)} sha 9f86d081884c7d65 at 0x7ffe`), [
      'GET',
      `/orders/${WILDCARD}`,
      'from',
      WILDCARD,
      'took',
      WILDCARD,
      `id=${WILDCARD}`,
      'sha',
      WILDCARD,
      'at',
      WILDCARD,
    ]);
    // A number after a dash is masked (order-42, web-1); a word with a digit in it is not (v2, sha256).
    assert.deepEqual(tokensOf('host web-1 runs v2 sha256'), ['host', `web-${WILDCARD}`, 'runs', 'v2', 'sha256']);
  });

  test('messages differing in their variable parts share a pattern; others do not', () => {
    const drain = new Drain();
    const messages = [
      'user alice logged in from 10.0.0.1',
      'user bob logged in from 10.0.0.2',
      'user carol logged in from 10.0.0.3',
      'disk full on /var',
      'disk full on /tmp',
      'connection reset by peer',
    ];
    messages.forEach((message, i) => drain.add(message, i));
    const found = drain.clusters.map((c) => [c.template.join(' '), c.count, c.example]);
    assert.deepEqual(found, [
      [`user ${WILDCARD} logged in from ${WILDCARD}`, 3, 0],
      [`disk full on ${WILDCARD}`, 2, 3],
      ['connection reset by peer', 1, 5],
    ]);
    // Under the similarity threshold: a message of the same length and lead starts its own group.
    const strict = new Drain({ depth: 4, similarity: 0.9, maxChildren: 100, maxClusters: 100 });
    strict.add('disk full on /var', 0);
    strict.add('disk full on /tmp', 1);
    assert.equal(strict.clusters.length, 2);
  });

  test("a pattern's search: its constant parts as phrases within the query", () => {
    assert.equal(patternQuery(['user', WILDCARD, 'logged', 'in', 'from', WILDCARD], 'level:info'), '(level:info) "user" "logged in from"');
    assert.equal(patternQuery([`id=${WILDCARD}`, 'say', '"hi"'], ''), '"id=" "say \\"hi\\""');
    assert.equal(patternQuery([WILDCARD, WILDCARD], 'x'), '(x)');
  });

  test('the sample is shared out in proportion to each slice', () => {
    assert.deepEqual(quotas([10, 20, 0], 100), [10, 20, 0], 'everything when it fits');
    const shares = quotas([900, 100, 0, 1], 100);
    assert.equal(
      shares.reduce((a, b) => a + b, 0),
      100,
    );
    assert.deepEqual(shares.slice(0, 2), [90, 10]);
  });
});

for (const dialect of DIALECTS) {
  describe(`logs patterns API [${dialect}]`, () => {
    let logs: TestLogs;
    let headers: Record<string, string>;
    let otherTenant: string;
    before(async () => {
      logs = await startTestLogs(dialect);
      headers = await logs.admin();
      // 300 entries over the hour, three patterns of 150, 100 and 50.
      const docs = Array.from({ length: 300 }, (_, i) => {
        const kind = i % 6 < 3 ? 0 : i % 6 < 5 ? 1 : 2;
        return {
          '@timestamp': iso(T0 + i * 11_000 + 1000),
          message: [
            `user u${i % 7}x logged in from 10.0.${i % 250}.${i % 200}`,
            `payment ${uuid(i)} failed after ${i * 3}ms`,
            `cache miss for key order-${i}`,
          ][kind],
          level: kind === 1 ? 'error' : 'info',
          service: 'shop',
        };
      });
      const stored = await logs.request({ method: 'POST', url: '/api/v1/_elastic/_bulk', headers, payload: ndjson(docs) });
      assert.equal(stored.json().errors, false);
      otherTenant = (await logs.request({ method: 'POST', url: '/api/tenants', headers, payload: { name: uniqueName('other') } })).json()
        .id;
      const secret = await logs.request({
        method: 'POST',
        url: '/api/v1/_elastic/_bulk',
        headers: { ...headers, 'x-tenant-id': otherTenant },
        payload: ndjson([{ '@timestamp': iso(T0 + 5 * MINUTE), message: 'secret of the other tenant 1', service: 'shop' }]),
      });
      assert.equal(secret.json().errors, false);
    });
    after(async () => logs.close());

    const patterns = (payload: object, extra: Record<string, string> = headers) =>
      logs.request({ method: 'POST', url: '/api/v1/logs/patterns', headers: extra, payload });

    test('the entries of a search grouped into patterns, with counts, an example and a search for each', async () => {
      const response = await patterns({ timeRange: HOUR_RANGE });
      assert.equal(response.statusCode, 200, response.body);
      const body = response.json();
      assert.equal(body.total, 300);
      assert.equal(body.sampled, false);
      assert.equal(body.sample_size, 300);
      assert.equal(body.method, 'drain');
      assert.deepEqual(
        body.patterns.map((p: { pattern: string; count: number; estimated_count: number }) => [p.pattern, p.count, p.estimated_count]),
        [
          [`user ${WILDCARD} logged in from ${WILDCARD}`, 150, 150],
          [`payment ${WILDCARD} failed after ${WILDCARD}`, 100, 100],
          [`cache miss for key order-${WILDCARD}`, 50, 50],
        ],
      );
      assert.equal(body.patterns[0].share, 0.5);
      assert.match(body.patterns[1].example.message, /^payment [0-9a-f-]{36} failed after \d+ms$/);
      // Each pattern's search finds exactly its entries.
      for (const pattern of body.patterns) {
        const found = await logs.request({
          method: 'POST',
          url: '/api/v1/logs/list/paginate',
          headers,
          payload: { query: pattern.query, timeRange: HOUR_RANGE, limit: 1 },
        });
        assert.equal(found.statusCode, 200, found.body);
        assert.equal(found.json().total, pattern.count, pattern.query);
      }
    });

    test('the query narrows the patterns; a limit cuts the list', async () => {
      const errors = (await patterns({ timeRange: HOUR_RANGE, query: 'level:error' })).json();
      assert.deepEqual(
        errors.patterns.map((p: { pattern: string }) => p.pattern),
        [`payment ${WILDCARD} failed after ${WILDCARD}`],
      );
      assert.equal(errors.patterns[0].query, '(level:error) "payment" "failed after"');
      const top = (await patterns({ timeRange: HOUR_RANGE, limit: 1 })).json();
      assert.equal(top.patterns.length, 1);
      assert.equal(top.clusters, 3);
    });

    test('a large range is sampled, and the answer says so', async () => {
      const body = (await patterns({ timeRange: HOUR_RANGE, sample: 100 })).json();
      assert.equal(body.sampled, true);
      assert.equal(body.sample_size, 100);
      assert.equal(body.total, 300);
      const sampled = body.patterns.reduce((sum: number, p: { count: number }) => sum + p.count, 0);
      assert.equal(sampled, 100);
      const estimated = body.patterns.reduce((sum: number, p: { estimated_count: number }) => sum + p.estimated_count, 0);
      assert.ok(Math.abs(estimated - 300) <= body.patterns.length, `estimates add up to the total: ${estimated}`);
      // Spread over the range in proportion: every pattern is seen in about its share.
      const first = body.patterns.find((p: { pattern: string }) => p.pattern.startsWith('user'));
      assert.ok(first.count >= 40 && first.count <= 60, `user pattern sampled ${first.count} of 100`);
    });

    test('tenant-scoped and needs logs:read; bad input is a 400 in the documented shape', async () => {
      const other = (await patterns({ timeRange: HOUR_RANGE }, { ...headers, 'x-tenant-id': otherTenant })).json();
      assert.deepEqual(
        other.patterns.map((p: { pattern: string }) => p.pattern),
        [`secret of the other tenant ${WILDCARD}`],
      );
      const mine = (await patterns({ timeRange: HOUR_RANGE })).json();
      assert.ok(!JSON.stringify(mine).includes('secret'), "another tenant's entries never show");

      const reader = await logs.userWith(['logs:read']);
      assert.equal((await patterns({ timeRange: HOUR_RANGE }, reader.headers)).statusCode, 200);
      const nobody = await logs.userWith(['alerts:read']);
      const refused = await patterns({ timeRange: HOUR_RANGE }, nobody.headers);
      assert.equal(refused.statusCode, 403);
      assert.equal(typeof refused.json().error, 'string');
      assert.equal((await patterns({ timeRange: HOUR_RANGE }, {})).statusCode, 401);

      const syntax = await patterns({ timeRange: HOUR_RANGE, query: 'level:(' });
      assert.equal(syntax.statusCode, 400);
      assert.equal(syntax.json().error, 'invalid json body');
      assert.equal(typeof syntax.json().position, 'number');
      for (const bad of [{ sample: 5 }, { limit: 0 }, { timeRange: { from: HOUR_RANGE.to, to: HOUR_RANGE.from } }]) {
        const answer = await patterns(bad);
        assert.equal(answer.statusCode, 400, JSON.stringify(bad));
        assert.equal(answer.json().error, 'invalid json body');
      }
      const spec = (await logs.request({ method: 'GET', url: '/openapi.json' })).json();
      assert.ok(spec.paths['/api/v1/logs/patterns']?.post, 'in OpenAPI (and so in the route fuzzer)');
    });
  });
}
