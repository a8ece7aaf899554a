import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { OTLPTraceExporter as OtlpHttpTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { DIALECTS } from '../../helpers/databases.js';
import { startTestLogs, type TestLogs } from '../../helpers/logs.js';
import { listenOnLoopback } from '../../helpers/listen.js';
import { adjustedCountOf } from '../../../src/logs/modules/ingest/otlp-traces.js';

const HOUR = 3_600_000;

for (const dialect of DIALECTS) {
  describe(`APM: traces and service map [${dialect}]`, () => {
    let logs: TestLogs;
    let baseUrl: string;
    let writer: { headers: Record<string, string> };
    let viewer: { headers: Record<string, string> };
    /** Real time of the exported spans: the SDK stamps real clock times. */
    const base = Date.now() - 10 * 60_000;
    const range = `from=${new Date(base - HOUR).toISOString()}&to=${new Date(base + HOUR).toISOString()}`;
    const traceIds: string[] = [];
    const apiServerSpans: { spanId: string; parent: string }[] = [];

    before(async () => {
      logs = await startTestLogs(dialect, { LOGS_SELF_METRICS_INTERVAL: '0', LOGS_INGEST_BODY_LIMIT: '65536' });
      baseUrl = `http://127.0.0.1:${await listenOnLoopback(logs.app)}`;
      writer = await logs.userWith(['logs:write']);
      viewer = await logs.userWith(['dashboard:read']);

      // The gateway ships protobuf, the api JSON: both official exporters, over real HTTP.
      const gateway = new BasicTracerProvider({
        resource: resourceFromAttributes({ 'service.name': 'gateway' }),
        spanProcessors: [new SimpleSpanProcessor(new OtlpProtoTraceExporter({ url: `${baseUrl}/v1/traces`, headers: writer.headers }))],
      });
      const api = new BasicTracerProvider({
        resource: resourceFromAttributes({ 'service.name': 'api' }),
        spanProcessors: [new SimpleSpanProcessor(new OtlpHttpTraceExporter({ url: `${baseUrl}/v1/traces`, headers: writer.headers }))],
      });
      const gw = gateway.getTracer('gerbang-gateway');
      const apiTracer = api.getTracer('api-server');
      const at = (ms: number) => new Date(ms);
      const child = (parent: Span) => trace.setSpan(ROOT_CONTEXT, parent);
      // Three requests: gateway -> api -> db (db uninstrumented, named by the api's CLIENT span) and
      // gateway -> master-data (uninstrumented upstream, named by the gateway's CLIENT span). The third
      // is slow and fails in the api.
      for (let i = 0; i < 3; i += 1) {
        const t = base + i * 1000;
        const slow = i === 2;
        const root = gw.startSpan('GET /api/orders', {
          kind: SpanKind.SERVER,
          startTime: at(t),
          attributes: { 'http.request.method': 'GET' },
        });
        const proxy = gw.startSpan(
          'proxy api',
          { kind: SpanKind.CLIENT, startTime: at(t + 5), attributes: { 'peer.service': 'api' } },
          child(root),
        );
        const server = apiTracer.startSpan('GET /orders', { kind: SpanKind.SERVER, startTime: at(t + 10) }, child(proxy));
        const db = apiTracer.startSpan(
          'SELECT orders',
          { kind: SpanKind.CLIENT, startTime: at(t + 15), attributes: { 'peer.service': 'db', 'db.system': 'postgresql' } },
          child(server),
        );
        db.end(at(t + 35));
        if (slow) {
          server.setStatus({ code: SpanStatusCode.ERROR, message: 'upstream timeout' });
          server.addEvent('exception', { 'exception.message': 'upstream timeout' }, at(t + 200));
        }
        server.end(at(t + (slow ? 210 : 80)));
        proxy.end(at(t + (slow ? 215 : 85)));
        const md = gw.startSpan(
          'proxy master-data',
          { kind: SpanKind.CLIENT, startTime: at(t + 90), attributes: { 'peer.service': 'master-data' } },
          child(root),
        );
        md.end(at(t + 100));
        root.end(at(t + (slow ? 250 : 100)));
        traceIds.push(root.spanContext().traceId);
        apiServerSpans.push({ spanId: server.spanContext().spanId, parent: proxy.spanContext().spanId });
      }
      await gateway.forceFlush();
      await api.forceFlush();
      await gateway.shutdown();
      await api.shutdown();
    });
    after(async () => logs.close());

    const get = async (url: string, headers: Record<string, string> = viewer.headers) => logs.request({ method: 'GET', url, headers });

    test('the service map shows calls across services and to uninstrumented peers, with rates and latency', async () => {
      const response = await get(`/api/v1/apm/service-map?${range}`);
      assert.equal(response.statusCode, 200, response.body);
      const map = response.json();
      const seconds = (2 * HOUR) / 1000;
      assert.deepEqual(
        map.nodes.map((n: { name: string; instrumented: boolean }) => [n.name, n.instrumented]),
        [
          ['api', true],
          ['db', false],
          ['gateway', true],
          ['master-data', false],
        ],
      );
      assert.deepEqual(
        map.edges.map((e: { source: string; target: string }) => `${e.source}->${e.target}`),
        ['api->db', 'gateway->api', 'gateway->master-data'],
      );
      const edge = (source: string, target: string) =>
        map.edges.find((e: { source: string; target: string }) => e.source === source && e.target === target);
      const gatewayApi = edge('gateway', 'api');
      assert.equal(gatewayApi.requests, 3);
      assert.equal(gatewayApi.errors, 1);
      assert.ok(Math.abs(gatewayApi.errorRate - 1 / 3) < 1e-9);
      assert.ok(Math.abs(gatewayApi.requestRate - 3 / seconds) < 1e-12);
      assert.equal(gatewayApi.p50Ms, 70);
      assert.equal(gatewayApi.p95Ms, 200);
      assert.equal(edge('api', 'db').p50Ms, 20);
      assert.equal(edge('api', 'db').errorRate, 0);
      assert.equal(edge('gateway', 'master-data').requests, 3);
      const node = (name: string) => map.nodes.find((n: { name: string }) => n.name === name);
      assert.equal(node('gateway').requests, 3);
      assert.equal(node('gateway').p95Ms, 250);
      assert.equal(node('api').errors, 1);
      assert.equal(node('master-data').p50Ms, 10);
      assert.equal(map.truncated, false);

      // Nothing in a range without spans.
      const empty = await get(
        `/api/v1/apm/service-map?from=${new Date(base - 3 * HOUR).toISOString()}&to=${new Date(base - 2 * HOUR).toISOString()}`,
      );
      assert.deepEqual({ nodes: empty.json().nodes, edges: empty.json().edges }, { nodes: [], edges: [] });
    });

    test('sampled spans count as the spans they stand for (OpenTelemetry ot=th): rates, errors and percentiles', async () => {
      // Four hours before the other spans: a service of its own. One span sampled at 0.5 (th:8) stands
      // for two requests of 10 ms; one of 30 ms and a failed one of 100 ms were recorded whatever the
      // sampling (no threshold) and count once. Unweighted this would read 3 requests, an error rate
      // of 1/3 and a median of 30 ms.
      const start = BigInt(base - 4 * HOUR) * 1_000_000n;
      const span = (i: number, ms: number, extra: Record<string, unknown>) => ({
        traceId: `${i}`.repeat(32),
        spanId: `${i}`.repeat(16),
        name: 'GET /weighted',
        kind: 2,
        startTimeUnixNano: String(start + BigInt(i) * 1_000_000_000n),
        endTimeUnixNano: String(start + BigInt(i) * 1_000_000_000n + BigInt(ms) * 1_000_000n),
        ...extra,
      });
      const response = await logs.request({
        method: 'POST',
        url: '/v1/traces',
        headers: { ...writer.headers, 'content-type': 'application/json' },
        payload: {
          resourceSpans: [
            {
              resource: { attributes: [{ key: 'service.name', value: { stringValue: 'sampled-svc' } }] },
              scopeSpans: [
                {
                  spans: [span(1, 10, { traceState: 'vendor=x,ot=rv:0123;th:8' }), span(2, 30, {}), span(3, 100, { status: { code: 2 } })],
                },
              ],
            },
          ],
        },
      });
      assert.equal(response.statusCode, 200, response.body);
      const map = (
        await get(`/api/v1/apm/service-map?from=${new Date(base - 5 * HOUR).toISOString()}&to=${new Date(base - 3 * HOUR).toISOString()}`)
      ).json();
      const node = map.nodes.find((n: { name: string }) => n.name === 'sampled-svc');
      assert.equal(node.requests, 4);
      assert.equal(node.errors, 1);
      assert.equal(node.errorRate, 0.25);
      assert.ok(Math.abs(node.requestRate - 4 / ((2 * HOUR) / 1000)) < 1e-12);
      assert.equal(node.p50Ms, 10, 'the sampled span holds half of the requests');
      assert.equal(node.p95Ms, 100);
    });

    test('an adjusted count is read from a valid threshold only', () => {
      assert.equal(adjustedCountOf('ot=th:8'), 2);
      assert.equal(adjustedCountOf('ot=th:c'), 4);
      assert.ok(Math.abs(adjustedCountOf('ot=th:e666') - 10) < 0.001);
      assert.equal(adjustedCountOf('ot=th:0'), 1);
      assert.equal(adjustedCountOf('a=1, ot=rv:abcdef;th:8'), 2, 'among other members and fields');
      for (const invalid of [
        undefined,
        7,
        '',
        'th:8',
        'ot=th:',
        'ot=th:xyz',
        'ot=th:8G',
        `ot=th:${'8'.repeat(15)}`,
        'other=th:8',
        'ot=p:8',
      ])
        assert.equal(adjustedCountOf(invalid), 1, String(invalid));
      assert.equal(adjustedCountOf('ot=th:ffffffffffffff'), 2 ** 56, 'the largest, never infinite');
    });

    test('traces list: one row per trace with root, services, span count; filters and pages', async () => {
      const all = await get(`/api/v1/apm/traces?${range}`);
      assert.equal(all.statusCode, 200, all.body);
      const body = all.json();
      assert.equal(body.total, 3);
      assert.deepEqual(
        body.data.map((t: { traceId: string }) => t.traceId),
        [...traceIds].reverse(),
      );
      const slow = body.data[0];
      assert.equal(slow.spanCount, 5);
      assert.equal(slow.error, true);
      assert.equal(slow.durationMs, 250);
      assert.deepEqual(slow.root, { service: 'gateway', name: 'GET /api/orders', kind: 'server', durationMs: 250, status: 'unset' });
      assert.deepEqual(slow.services, [
        { service: 'api', spans: 2 },
        { service: 'gateway', spans: 3 },
      ]);

      const ids = async (query: string) =>
        (await get(`/api/v1/apm/traces?${range}&${query}`)).json().data.map((t: { traceId: string }) => t.traceId);
      assert.deepEqual(await ids('errorsOnly=true'), [traceIds[2]]);
      assert.deepEqual(await ids('minDurationMs=150'), [traceIds[2]]);
      assert.deepEqual(await ids('service=api&operation=SELECT%20orders'), [...traceIds].reverse());
      assert.deepEqual(await ids('service=db'), []);
      assert.deepEqual(await ids('operation=nothing'), []);
      const page2 = (await get(`/api/v1/apm/traces?${range}&limit=2&page=2`)).json();
      assert.deepEqual(
        { total: page2.total, pages: page2.pages, ids: page2.data.map((t: { traceId: string }) => t.traceId) },
        { total: 3, pages: 2, ids: [traceIds[0]] },
      );
    });

    test('one trace by id with every span and its parent ids', async () => {
      const response = await get(`/api/v1/apm/traces/${traceIds[2]!.toUpperCase()}`);
      assert.equal(response.statusCode, 200, response.body);
      const body = response.json();
      assert.equal(body.traceId, traceIds[2]);
      assert.deepEqual(body.services, ['api', 'gateway']);
      assert.equal(body.spans.length, 5);
      const server = body.spans.find((s: { name: string }) => s.name === 'GET /orders');
      assert.equal(server.parentSpanId, apiServerSpans[2]!.parent);
      assert.equal(server.spanId, apiServerSpans[2]!.spanId);
      assert.deepEqual(server.status, { code: 'error', message: 'upstream timeout' });
      assert.equal(server.kind, 'server');
      assert.equal(server.events[0].name, 'exception');
      assert.equal(server.events[0].attributes['exception.message'], 'upstream timeout');
      const dbSpan = body.spans.find((s: { name: string }) => s.name === 'SELECT orders');
      assert.equal(dbSpan.peerService, 'db');
      assert.equal(dbSpan.attributes['db.system'], 'postgresql');
      assert.equal(dbSpan.parentSpanId, server.spanId);
      assert.equal(body.spans.filter((s: { parentSpanId: string | null }) => s.parentSpanId === null).length, 1);

      assert.equal((await get(`/api/v1/apm/traces/${'ab'.repeat(16)}`)).statusCode, 404);
      assert.equal((await get('/api/v1/apm/traces/not-a-trace-id')).statusCode, 400);
    });

    test('pipeline counters count trace batches under otlp-traces', () => {
      const counters = logs.stats.snapshot()['otlp-traces'];
      assert.ok(counters);
      assert.ok(counters.stored >= 15, JSON.stringify(counters));
    });

    test('401 without a token and 403 without dashboard:read on every view; ingestion needs logs:write', async () => {
      const reader = await logs.userWith(['logs:read']);
      for (const url of [
        '/api/v1/apm/traces',
        `/api/v1/apm/traces/${traceIds[0]}`,
        '/api/v1/apm/service-map',
        '/api/v1/infra/metrics',
        '/api/v1/infra/containers',
      ]) {
        const anonymous = await logs.request({ method: 'GET', url });
        assert.equal(anonymous.statusCode, 401, url);
        assert.deepEqual(anonymous.json(), { error: 'missing bearer token' });
        const denied = await get(url, reader.headers);
        assert.equal(denied.statusCode, 403, url);
        assert.deepEqual(denied.json(), { error: 'permission denied' });
      }
      for (const url of ['/v1/traces', '/v1/metrics']) {
        assert.equal((await logs.request({ method: 'POST', url, payload: {} })).statusCode, 401, url);
        assert.equal((await logs.request({ method: 'POST', url, headers: viewer.headers, payload: {} })).statusCode, 403, url);
      }
    });

    test('bad parameters are 400 with the reason', async () => {
      for (const query of [
        `from=${new Date(base).toISOString()}&to=${new Date(base - 1000).toISOString()}`,
        'from=yesterday',
        'minDurationMs=-1',
        'limit=0',
        'limit=5000',
        'errorsOnly=maybe',
      ]) {
        const response = await get(`/api/v1/apm/traces?${query}`);
        assert.equal(response.statusCode, 400, query);
        assert.equal(response.json().error, 'invalid json body');
      }
      const map = await get(`/api/v1/apm/service-map?from=${new Date(base).toISOString()}&to=${new Date(base).toISOString()}`);
      assert.equal(map.statusCode, 400);
      assert.equal(map.json().detail, 'from must be before to');
    });

    test('malformed OTLP is 400 and stores nothing; bad spans are rejected one by one', async () => {
      const before = logs.stats.snapshot()['otlp-traces']!.stored;
      const garbage = await logs.request({
        method: 'POST',
        url: '/v1/traces',
        headers: { ...writer.headers, 'content-type': 'application/x-protobuf' },
        payload: Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f, 0x01]),
      });
      assert.equal(garbage.statusCode, 400);
      const notAnObject = await logs.request({ method: 'POST', url: '/v1/traces', headers: writer.headers, payload: [1, 2] });
      assert.equal(notAnObject.statusCode, 400);
      const badJson = await logs.request({
        method: 'POST',
        url: '/v1/traces',
        headers: { ...writer.headers, 'content-type': 'application/json' },
        payload: '{"resourceSpans": [',
      });
      assert.equal(badJson.statusCode, 400);
      assert.equal(logs.stats.snapshot()['otlp-traces']!.stored, before);

      const now = BigInt(base) * 1_000_000n;
      const goodTrace = 'c'.repeat(32);
      const partial = await logs.request({
        method: 'POST',
        url: '/v1/traces',
        headers: writer.headers,
        payload: {
          resourceSpans: [
            {
              resource: { attributes: [{ key: 'service.name', value: { stringValue: 'json-svc' } }] },
              scopeSpans: [
                {
                  spans: [
                    {
                      traceId: goodTrace,
                      spanId: '1'.repeat(16),
                      name: 'ok',
                      kind: 2,
                      startTimeUnixNano: `${now}`,
                      endTimeUnixNano: `${now + 5_000_000n}`,
                      status: { code: 1 },
                    },
                    { traceId: 'xyz', spanId: '2'.repeat(16), name: 'bad id', startTimeUnixNano: `${now}`, endTimeUnixNano: `${now}` },
                    {
                      traceId: goodTrace,
                      spanId: '3'.repeat(16),
                      name: 'ends before it starts',
                      startTimeUnixNano: `${now}`,
                      endTimeUnixNano: `${now - 1n}`,
                    },
                  ],
                },
              ],
            },
          ],
        },
      });
      assert.equal(partial.statusCode, 200, partial.body);
      assert.equal(partial.json().partialSuccess.rejectedSpans, 2);
      const stored = (await get(`/api/v1/apm/traces/${goodTrace}`)).json();
      assert.deepEqual(
        stored.spans.map((s: { name: string; durationMs: number; status: { code: string } }) => [s.name, s.durationMs, s.status.code]),
        [['ok', 5, 'ok']],
      );
    });

    test('gzip bodies are accepted; other encodings are 415; the body limit (after decompression) is 413', async () => {
      const now = BigInt(base) * 1_000_000n;
      const traceId = 'f'.repeat(32);
      const body = {
        resourceSpans: [
          {
            resource: { attributes: [{ key: 'service.name', value: { stringValue: 'gz' } }] },
            scopeSpans: [
              {
                spans: [
                  { traceId, spanId: '5'.repeat(16), name: 'zipped', startTimeUnixNano: `${now}`, endTimeUnixNano: `${now + 1_000_000n}` },
                ],
              },
            ],
          },
        ],
      };
      const gz = await logs.request({
        method: 'POST',
        url: '/v1/traces',
        headers: { ...writer.headers, 'content-type': 'application/json', 'content-encoding': 'gzip' },
        payload: gzipSync(JSON.stringify(body)),
      });
      assert.equal(gz.statusCode, 200, gz.body);
      assert.equal((await get(`/api/v1/apm/traces/${traceId}`)).json().spans[0].name, 'zipped');
      const br = await logs.request({
        method: 'POST',
        url: '/v1/traces',
        headers: { ...writer.headers, 'content-type': 'application/json', 'content-encoding': 'br' },
        payload: 'x',
      });
      assert.equal(br.statusCode, 415);
      const big = JSON.stringify({ ...body, padding: 'x'.repeat(70_000) });
      for (const url of ['/v1/traces', '/v1/metrics']) {
        const plain = await logs.request({
          method: 'POST',
          url,
          headers: { ...writer.headers, 'content-type': 'application/json' },
          payload: big,
        });
        assert.equal(plain.statusCode, 413, url);
        const bomb = await logs.request({
          method: 'POST',
          url,
          headers: { ...writer.headers, 'content-type': 'application/json', 'content-encoding': 'gzip' },
          payload: gzipSync(big),
        });
        assert.equal(bomb.statusCode, 413, url);
      }
    });

    test('tenant isolation: spans of one tenant never show in another', async () => {
      const created = await logs.request({
        method: 'POST',
        url: '/api/tenants',
        headers: await logs.admin(),
        payload: { name: `apm-${dialect}-${process.pid}` },
      });
      assert.equal(created.statusCode, 201, created.body);
      const tenantId = created.json().id as string;
      const otherWriter = await logs.userWith(['logs:write', 'dashboard:read'], { tenantId });
      const otherTrace = 'd'.repeat(32);
      const now = BigInt(base) * 1_000_000n;
      const sent = await logs.request({
        method: 'POST',
        url: '/v1/traces',
        headers: otherWriter.headers,
        payload: {
          resourceSpans: [
            {
              resource: { attributes: [{ key: 'service.name', value: { stringValue: 'other-svc' } }] },
              scopeSpans: [
                {
                  spans: [
                    {
                      traceId: otherTrace,
                      spanId: '4'.repeat(16),
                      name: 'x',
                      startTimeUnixNano: `${now}`,
                      endTimeUnixNano: `${now + 1_000_000n}`,
                    },
                  ],
                },
              ],
            },
          ],
        },
      });
      assert.equal(sent.statusCode, 200, sent.body);
      assert.equal((await get(`/api/v1/apm/traces/${otherTrace}`)).statusCode, 404);
      assert.equal((await get(`/api/v1/apm/traces/${traceIds[0]}`, otherWriter.headers)).statusCode, 404);
      const theirs = (await get(`/api/v1/apm/service-map?${range}`, otherWriter.headers)).json();
      assert.deepEqual(
        theirs.nodes.map((n: { name: string }) => n.name),
        ['other-svc'],
      );
      const ours = (await get(`/api/v1/apm/service-map?${range}`)).json();
      assert.ok(!ours.nodes.some((n: { name: string }) => n.name === 'other-svc'));
      assert.equal((await get(`/api/v1/apm/traces?${range}`, otherWriter.headers)).json().total, 1);
    });

    test('the OpenAPI description lists the APM, infrastructure and OTLP routes', async () => {
      const paths = Object.keys((await logs.request({ method: 'GET', url: '/openapi.json' })).json().paths);
      for (const path of [
        '/v1/traces',
        '/v1/metrics',
        '/api/v1/apm/traces',
        '/api/v1/apm/traces/{traceId}',
        '/api/v1/apm/service-map',
        '/api/v1/infra/metrics',
        '/api/v1/infra/containers',
      ]) {
        assert.ok(paths.includes(path), path);
      }
    });

    test('retention removes spans older than the cutoff', async () => {
      const removed = await logs.spans.removeOlderThan('default', base + 1500);
      assert.ok(removed >= 10);
      assert.equal((await get(`/api/v1/apm/traces/${traceIds[0]}`)).statusCode, 404);
      assert.equal((await get(`/api/v1/apm/traces/${traceIds[2]}`)).statusCode, 200);
    });
  });
}
