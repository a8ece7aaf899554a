import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DIALECTS } from '../../helpers/databases.js';
import { startTestLogs, uniqueName, type TestLogs } from '../../helpers/logs.js';
import { assertPrototypesUntouched, HOSTILE_NAMES } from '../../helpers/prototypes.js';
import { root } from '../../../src/logs/modules/ingest/otlp-proto.js';

/**
 * Names a client chose are data (docs/logs-api.md "Field names"): `__proto__`, `constructor`,
 * `prototype` and Object.prototype's other members are ordinary field names in every position a
 * shipper or a searcher can put them — stored, searchable, listed — and never reach a prototype.
 * After every request: Object.prototype, Array.prototype and Function.prototype are untouched and
 * the service still answers.
 */

const HOUR = 3_600_000;
const ndjson = (lines: unknown[]) => `${lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n')}\n`;

/** A document with every hostile name at the top, one level down and two levels down, as raw JSON text (JSON.stringify would drop `__proto__`). */
function hostileDocument(marker: string): string {
  const fields = HOSTILE_NAMES.map(
    (name) => `${JSON.stringify(name)}:{${JSON.stringify(name)}:{"x":${JSON.stringify(`${name}-deep`)}},"v":1}`,
  );
  return `{"message":"hostile ${marker}","level":"constructor","service":"toString",${fields.join(',')},"nest":{"__proto__":"flat-${marker}"}}`;
}

for (const dialect of DIALECTS) {
  describe(`names a client chose are data [${dialect}]`, () => {
    let logs: TestLogs;
    let admin: Record<string, string>;
    const marker = uniqueName('hostile').toLowerCase();

    async function send(method: 'GET' | 'POST', url: string, payload?: unknown) {
      const response = await logs.request({
        method,
        url,
        headers: { ...admin, ...(typeof payload === 'string' ? { 'content-type': 'application/json' } : {}) },
        ...(payload === undefined ? {} : { payload: payload as string }),
      });
      assertPrototypesUntouched(`${method} ${url}`);
      assert.ok(response.statusCode < 500, `${method} ${url}: ${response.statusCode} ${response.body.slice(0, 300)}`);
      const health = await logs.request({ method: 'GET', url: '/healthz' });
      assert.equal(health.statusCode, 200, 'the service still answers');
      return response;
    }

    before(async () => {
      logs = await startTestLogs(dialect);
      admin = await logs.admin();
      const bulk = await logs.request({
        method: 'POST',
        url: '/api/v1/_elastic/_bulk',
        headers: { ...admin, 'content-type': 'application/x-ndjson' },
        payload: ndjson([
          { index: {} },
          hostileDocument(marker),
          '{"index":{"_index":"__proto__"}}',
          `{"message":"index named ${marker}"}`,
        ]),
      });
      assert.equal(bulk.statusCode, 200, bulk.body);
      assert.equal(bulk.json().errors, false, bulk.body);
      assertPrototypesUntouched('_bulk');

      const attribute = (key: string) => ({ key, value: { stringValue: `${key}-otlp` } });
      const kvlist = { key: 'nested', value: { kvlistValue: { values: HOSTILE_NAMES.map(attribute) } } };
      const resource = { attributes: [attribute('service.name'), ...HOSTILE_NAMES.map(attribute)] };
      const now = `${Date.now()}000000`;
      const otlp = await send('POST', '/v1/logs', {
        resourceLogs: [
          {
            resource,
            scopeLogs: [
              {
                scope: { name: '__proto__', attributes: HOSTILE_NAMES.map(attribute) },
                logRecords: [
                  { timeUnixNano: now, body: { stringValue: `otlp ${marker}` }, severityText: 'constructor', attributes: [kvlist] },
                ],
              },
            ],
          },
        ],
      });
      assert.equal(otlp.statusCode, 200, otlp.body);
      // The same names as a record's attributes over protobuf, read straight off the wire (otlp-logs-decode.ts PlainRecord).
      const LogsRequest = root.lookupType('otlp.ExportLogsServiceRequest');
      const records = LogsRequest.fromObject({
        resourceLogs: [
          {
            resource: { attributes: [attribute('service.name')] },
            scopeLogs: [
              {
                logRecords: [{ timeUnixNano: now, body: { stringValue: `protobuf ${marker}` }, attributes: HOSTILE_NAMES.map(attribute) }],
              },
            ],
          },
        ],
      });
      const protobuf = await logs.request({
        method: 'POST',
        url: '/v1/logs',
        headers: { ...admin, 'content-type': 'application/x-protobuf' },
        payload: Buffer.from(LogsRequest.encode(records).finish()),
      });
      assertPrototypesUntouched('OTLP protobuf');
      assert.equal(protobuf.statusCode, 200, protobuf.body);
      const span = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', name: '__proto__', kind: 2 };
      const traces = await send('POST', '/v1/traces', {
        resourceSpans: [
          {
            resource,
            scopeSpans: [
              { spans: [{ ...span, startTimeUnixNano: now, endTimeUnixNano: now, attributes: [kvlist, ...HOSTILE_NAMES.map(attribute)] }] },
            ],
          },
        ],
      });
      assert.equal(traces.statusCode, 200, traces.body);
      const metrics = await send('POST', '/v1/metrics', {
        resourceMetrics: [
          {
            resource: { attributes: [attribute('host.name'), ...HOSTILE_NAMES.map(attribute)] },
            scopeMetrics: [
              {
                metrics: [
                  {
                    name: 'system.cpu.load_average.1m',
                    gauge: { dataPoints: [{ timeUnixNano: now, asDouble: 0.5, attributes: HOSTILE_NAMES.map(attribute) }] },
                  },
                ],
              },
            ],
          },
        ],
      });
      assert.equal(metrics.statusCode, 200, metrics.body);
    });
    after(async () => logs?.close());

    test('stored and returned whole: every hostile name at every depth, in _search and in our search API', async () => {
      const found = await send(
        'POST',
        '/api/v1/_elastic/_search',
        JSON.stringify({ query: { match_phrase: { message: `hostile ${marker}` } } }),
      );
      assert.equal(found.statusCode, 200, found.body);
      // JSON.parse makes `__proto__` an own property, so the answer is read as a client reads it.
      const source = found.json().hits.hits[0]._source as Record<string, unknown>;
      for (const name of HOSTILE_NAMES) {
        assert.ok(Object.hasOwn(source, `${name}.${name}.x`), `${name}.${name}.x is stored: ${JSON.stringify(Object.keys(source))}`);
        assert.equal(source[`${name}.${name}.x`], `${name}-deep`);
        assert.equal(source[`${name}.v`], 1);
      }
      assert.equal(source['nest.__proto__'], `flat-${marker}`);

      const fromProtobuf = await send(
        'POST',
        '/api/v1/_elastic/_search',
        JSON.stringify({ query: { match_phrase: { message: `protobuf ${marker}` } } }),
      );
      assert.equal(fromProtobuf.json().hits.total.value, 1, fromProtobuf.body);
      const record = fromProtobuf.json().hits.hits[0]._source as Record<string, unknown>;
      for (const name of HOSTILE_NAMES) {
        assert.ok(Object.hasOwn(record, name), `${name} is stored from protobuf: ${JSON.stringify(Object.keys(record))}`);
        assert.equal(record[name], `${name}-otlp`);
      }

      const now = Date.now();
      const timeRange = { from: new Date(now - HOUR).toISOString(), to: new Date(now + HOUR).toISOString() };
      const ours = await send(
        'POST',
        '/api/v1/logs/list/paginate',
        JSON.stringify({ query: `hostile ${marker}`, timeRange, filters: [{ field: '__proto__.__proto__.x', value: '__proto__-deep' }] }),
      );
      assert.equal(ours.statusCode, 200, ours.body);
      assert.equal(ours.json().total, 1, 'an exact filter on a field named __proto__ finds the entry');
      assert.equal(ours.json().data[0].attributes['constructor.constructor.x'], 'constructor-deep');
      for (const query of ['constructor.v:1', '"__proto__.__proto__.x":"__proto__-deep"', 'prototype.prototype.x:prototype-deep']) {
        const byQuery = await send('POST', '/api/v1/logs/list/paginate', JSON.stringify({ query: `${marker} ${query}`, timeRange }));
        assert.ok(byQuery.statusCode === 200 || byQuery.statusCode === 400, byQuery.body);
      }
      const byField = await send('POST', '/api/v1/logs/list/paginate', JSON.stringify({ query: `constructor.v:1 AND hostile`, timeRange }));
      assert.equal(byField.statusCode, 200, byField.body);
      assert.ok(byField.json().total >= 1, 'a query on a field named constructor finds the entry');
    });

    test('listed: _mapping, _field_caps and the fields API name every hostile field, and no prototype got a property', async () => {
      const mapping = await send('GET', '/api/v1/_elastic/_mapping');
      assert.equal(mapping.statusCode, 200, mapping.body);
      const properties = mapping.json().logs.mappings.properties as Record<string, { properties?: Record<string, unknown> }>;
      for (const name of HOSTILE_NAMES) {
        assert.ok(Object.hasOwn(properties, name), `${name} in _mapping`);
        assert.ok(Object.hasOwn(properties[name]!.properties!, name), `${name}.${name} in _mapping`);
      }
      const caps = await send('GET', '/api/v1/_elastic/_field_caps?fields=*');
      assert.equal(caps.statusCode, 200, caps.body);
      assert.ok(Object.hasOwn(caps.json().fields, '__proto__.__proto__.x'), '_field_caps lists __proto__.__proto__.x');
      const fields = await send('GET', '/api/v1/logs/fields');
      const names = (fields.json().fields as { name: string }[]).map((field) => field.name);
      for (const name of HOSTILE_NAMES) assert.ok(names.includes(`${name}.${name}.x`), `${name}.${name}.x in /fields`);
      for (const name of HOSTILE_NAMES) await send('GET', `/api/v1/logs/fields/${encodeURIComponent(name)}/distinct`);
      await send('GET', `/api/v1/logs/fields/${encodeURIComponent('__proto__.__proto__.x')}/distinct`);
    });

    test('aggregations named, grouped and filtered by hostile names answer in the right shape', async () => {
      const aggs: Record<string, unknown> = {};
      for (const name of HOSTILE_NAMES)
        Object.defineProperty(aggs, name, { value: { terms: { field: `${name}.${name}.x` } }, enumerable: true });
      const body = JSON.stringify({
        size: 0,
        query: { bool: { filter: [{ term: { '__proto__.v': 1 } }, { exists: { field: 'constructor.v' } }] } },
        aggs: {
          ...aggs,
          per_level: { terms: { field: 'level' }, aggs: { __proto__: { max: { field: 'prototype.v' } } } },
          hist: { date_histogram: { field: '@timestamp', calendar_interval: 'constructor' } },
          pct: { percentiles: { field: 'constructor.v', percents: [50] } },
        },
      }).replace('"per_level"', '"__proto__":{"terms":{"field":"__proto__.__proto__.x"}},"per_level"');
      const answer = await send('POST', '/api/v1/_elastic/_search', body);
      // A calendar interval named `constructor` is a client error, everything else is answered.
      assert.equal(answer.statusCode, 400, answer.body);
      const valid = await send(
        'POST',
        '/api/v1/_elastic/_search',
        body.replace('"calendar_interval":"constructor"', '"calendar_interval":"1h"'),
      );
      assert.equal(valid.statusCode, 200, valid.body);
      const aggregations = valid.json().aggregations as Record<string, { buckets?: { key: unknown; doc_count: number }[] }>;
      for (const name of HOSTILE_NAMES) {
        assert.ok(Object.hasOwn(aggregations, name), `aggregation ${name} answered`);
        assert.deepEqual(
          aggregations[name]!.buckets!.map((bucket) => bucket.key),
          [`${name}-deep`],
        );
      }
      const withFields = await send(
        'POST',
        '/api/v1/_elastic/_search',
        JSON.stringify({
          query: { match_phrase: { message: `hostile ${marker}` } },
          fields: HOSTILE_NAMES,
          _source: ['__proto__*', 'constructor'],
        }),
      );
      assert.equal(withFields.statusCode, 200, withFields.body);
      const hit = withFields.json().hits.hits[0];
      assert.deepEqual(hit.fields, {}, 'no field is exactly named after a member of Object.prototype: none is returned, nothing inherited');
      assert.ok(Object.hasOwn(hit._source, '__proto__.v'), '_source patterns select the hostile field');
    });

    test('the views and dashboards over hostile names, levels and services, and hostile query strings', async () => {
      const from = new Date(Date.now() - HOUR).toISOString();
      const histogram = await send(
        'POST',
        '/api/v1/logs/histogram',
        JSON.stringify({ groupBy: 'service', timeRange: { from, to: new Date(Date.now() + HOUR).toISOString() } }),
      );
      assert.equal(histogram.statusCode, 200, histogram.body);
      const groups = histogram.json().buckets.map((bucket: { groups: Record<string, number> }) => bucket.groups);
      assert.ok(
        groups.some((group: Record<string, number>) => Object.hasOwn(group, 'toString') && group['toString'] === 1),
        'a service named toString is counted as a group of its own',
      );
      for (const url of [
        '/api/v1/dashboard/overview',
        '/api/v1/dashboard/pipeline/status',
        '/api/v1/dashboard/throughput',
        '/api/v1/apm/services',
        '/api/v1/apm/traces',
        '/api/v1/apm/service-map',
        '/api/v1/infra/hosts',
        '/api/v1/infra/metrics',
        '/api/v1/_elastic/__proto__/_search?q=constructor',
        '/api/v1/_elastic/_search?__proto__[x]=1&constructor[prototype][y]=2&toString=1',
        '/api/v1/logs/fields?__proto__=1&constructor=2',
      ]) {
        await send('GET', url);
      }
    });
  });
}
