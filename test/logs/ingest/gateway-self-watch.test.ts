import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DIALECTS } from '../../helpers/databases.js';
import { eventually } from '../../helpers/eventually.js';
import { startTestGateway, type TestGateway } from '../../helpers/gateway.js';
import { listenOnLoopback } from '../../helpers/listen.js';
import { startTestLogs, type TestLogs } from '../../helpers/logs.js';
import { startUpstream, type TestUpstream } from '../../helpers/upstream.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';
const UNSAMPLED_TRACE = 'f0f7651916cd43dd8448eb211c80319c';

/**
 * The gateway's own records, as OTLP/protobuf, arrive at a real logs service with what they say:
 * the access line's attributes, message, level, trace and span id and time; the server and client
 * spans with their parent links, continuing a client's `traceparent`; the upstream told the client
 * span as its parent; an unsampled trace's access line names its trace but ships no span; the
 * audit records. Real gateway, real upstream, real logs service on loopback, both dialects.
 */
for (const dialect of DIALECTS) {
  describe(`the gateway's own telemetry in the logs service [${dialect}]`, () => {
    let logs: TestLogs;
    let gateway: TestGateway;
    let upstream: TestUpstream;
    before(async () => {
      logs = await startTestLogs(dialect, { LOGS_SELF_METRICS_INTERVAL: '0' });
      const logsPort = await listenOnLoopback(logs.app);
      const shipper = await logs.provisionIngestAccount('gateway-shipper');
      upstream = await startUpstream((_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end('[]'));
      gateway = await startTestGateway('sqlite', {
        GATEWAY_TELEMETRY_URL: `http://127.0.0.1:${logsPort}`,
        GATEWAY_TELEMETRY_USERNAME: shipper.username,
        GATEWAY_TELEMETRY_PASSWORD: shipper.password,
        GATEWAY_TELEMETRY_INTERVAL: '20ms',
        GATEWAY_TELEMETRY_SAMPLE_RATIO: '1',
        SERVER_SERVICE_MASTER_DATA: upstream.url,
      });
    });
    after(async () => {
      await gateway.close();
      await upstream.close();
      await logs.close();
    });

    test('access lines, spans and audit records arrive with the same attributes, ids and times', async () => {
      const token = await gateway.login();
      const before = Date.now();
      const proxied = await gateway.request({
        method: 'GET',
        url: '/api/v1/master-data/provinsi?kode=31',
        headers: { authorization: token, traceparent: `00-${TRACE}-${CLIENT_SPAN}-01`, tracestate: 'vendor=a' },
      });
      assert.equal(proxied.statusCode, 200);
      const unsampled = await gateway.request({
        method: 'GET',
        url: '/api/v1/master-data/kota',
        headers: { authorization: token, traceparent: `00-${UNSAMPLED_TRACE}-${CLIENT_SPAN}-00` },
      });
      assert.equal(unsampled.statusCode, 200);
      const seen = upstream.seen.find((r) => r.url.startsWith('/provinsi'))!;
      const [, upstreamTrace, clientSpanId, flags] =
        /^00-([0-9a-f]{32})-([0-9a-f]{16})-(0[01])$/.exec(String(seen.headers.traceparent)) ?? [];
      assert.equal(upstreamTrace, TRACE, "the upstream continues the client's trace");
      assert.equal(flags, '01');
      assert.equal(seen.headers.tracestate, 'vendor=a');

      const headers = await logs.admin();
      // The logs service's clock is frozen at its start; the gateway stamps records with real time.
      const timeRange = { from: new Date(before - 3_600_000).toISOString(), to: new Date(before + 3_600_000).toISOString() };
      const search = async (filters: { field: string; value: string }[]) => {
        const response = await logs.request({
          method: 'POST',
          url: '/api/v1/logs/list/paginate',
          headers,
          payload: { timeRange, filters, limit: 10 },
        });
        assert.equal(response.statusCode, 200, response.body);
        return response.json().data as any[];
      };
      const access = await eventually(async () => {
        const [entry] = await search([{ field: 'url.path', value: '/api/v1/master-data/provinsi' }]);
        assert.ok(entry, 'the access line arrived');
        return entry;
      });
      assert.equal(access.message, 'GET /api/v1/master-data/provinsi 200', 'no query values');
      assert.equal(access.level, 'info');
      assert.equal(access.service, 'gerbang-gateway');
      assert.equal(access.trace_id, TRACE);
      const { duration_ms: duration, 'user.id': userId, ...attributes } = access.attributes;
      assert.deepEqual(attributes, {
        'service.namespace': 'gerbang',
        'otel.scope.name': 'gerbang-gateway',
        'log.type': 'access',
        'http.request.method': 'GET',
        'url.path': '/api/v1/master-data/provinsi',
        'http.route': '/api/v1/master-data/*',
        'http.response.status_code': 200,
        request_id: proxied.headers['x-request-id'],
        'client.address': '127.0.0.1',
        'gerbang.service': 'master-data',
      });
      assert.equal(typeof duration, 'number');
      assert.ok(duration > 0 && duration < 10_000, `duration_ms ${duration}`);
      assert.match(String(userId), /^[0-9a-f-]{36}$/, 'the user id of the token');

      const trace = await eventually(async () => {
        const response = await logs.request({ method: 'GET', url: `/api/v1/apm/traces/${TRACE}`, headers });
        assert.equal(response.statusCode, 200, response.body);
        const body = response.json();
        assert.equal(body.spans.length, 2);
        return body;
      });
      const server = trace.spans.find((s: any) => s.kind === 'server');
      const client = trace.spans.find((s: any) => s.kind === 'client');
      assert.equal(server.parentSpanId, CLIENT_SPAN, "the server span's parent is the client's span");
      assert.equal(server.name, 'GET /api/v1/master-data/*');
      assert.equal(server.service, 'gerbang-gateway');
      assert.equal(server.attributes['http.response.status_code'], 200);
      assert.equal(server.attributes['url.path'], '/api/v1/master-data/provinsi');
      assert.equal(access.span_id, server.spanId, "the access line names the request's span");
      assert.equal(client.parentSpanId, server.spanId);
      assert.equal(client.spanId, clientSpanId, 'the upstream was told the client span');
      assert.equal(client.name, 'GET master-data');
      assert.equal(client.peerService, 'master-data');
      assert.deepEqual(client.status, { code: 'unset', message: null });
      assert.ok(client.startTimeUs >= server.startTimeUs, 'the call starts within the request');
      // The access line's time is the server span's end (the store keeps milliseconds).
      const serverEndUs = server.startTimeUs + Math.round(server.durationMs * 1000);
      assert.equal(Date.parse(access['@timestamp']), Math.floor(serverEndUs / 1000));
      assert.ok(server.startTimeUs >= before * 1000 - 1000 && serverEndUs <= Date.now() * 1000 + 1000, 'real time');

      const [unsampledLine] = await eventually(async () => {
        const found = await search([{ field: 'url.path', value: '/api/v1/master-data/kota' }]);
        assert.equal(found.length, 1);
        return found;
      });
      assert.equal(unsampledLine.trace_id, UNSAMPLED_TRACE, 'an unsampled request still names its trace');
      assert.match(String(unsampledLine.span_id), /^[0-9a-f]{16}$/);
      assert.equal(
        (await logs.request({ method: 'GET', url: `/api/v1/apm/traces/${UNSAMPLED_TRACE}`, headers })).statusCode,
        404,
        'no span of an unsampled trace is shipped',
      );

      const [audit] = await eventually(async () => {
        const found = await search([
          { field: 'log.type', value: 'audit' },
          { field: 'event.action', value: 'auth.login' },
        ]);
        assert.equal(found.length, 1);
        return found;
      });
      assert.equal(audit.message, 'auth.login success');
      assert.equal(audit.level, 'info');
      assert.equal(audit.service, 'gerbang-gateway');
      assert.equal(audit.attributes['event.outcome'], 'success');
      assert.equal(audit.attributes['audit.actor'], 'admin');
      assert.equal(audit.attributes['client.address'], '127.0.0.1');
      assert.equal(typeof audit.attributes.request_id, 'string');
      assert.ok(Date.parse(audit['@timestamp']) <= before, "the audit row's own time (the login came first)");
    });
  });
}
