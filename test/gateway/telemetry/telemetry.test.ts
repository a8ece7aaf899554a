import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ADMIN_PASSWORD, startTestGateway } from '../../helpers/gateway.js';
import { OtlpReceiver } from '../../helpers/otlp-receiver.js';
import { closedPort, startUpstream } from '../../helpers/upstream.js';

describe('gateway telemetry shipping', () => {
  test('access logs, audit events and traces reach the logs service over OTLP, without secrets', async () => {
    const receiver = new OtlpReceiver();
    const url = await receiver.start();
    const gw = await startTestGateway('sqlite', {
      GATEWAY_TELEMETRY_URL: url,
      GATEWAY_TELEMETRY_USERNAME: 'gateway-shipper',
      GATEWAY_TELEMETRY_PASSWORD: 'Ship#Secret1',
      GATEWAY_TELEMETRY_INTERVAL: '20ms',
      GATEWAY_TELEMETRY_SAMPLE_RATIO: '1',
    });
    const token = await gw.login();
    await gw.request({
      method: 'GET',
      url: '/api/v1/auth/profile',
      headers: { authorization: token, traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
    });
    await gw.request({ method: 'GET', url: '/healthz' });
    await receiver.waitFor(
      () =>
        receiver.logRecords().some((r) => r.body === 'GET /api/v1/auth/profile 200') &&
        receiver.spans().some((s: any) => s.name === 'GET /api/v1/auth/profile'),
    );
    await receiver.waitFor(() => receiver.logRecords().some((r) => r.attributes['event.action'] === 'auth.login'));

    const records = receiver.logRecords();
    const access = records.find((r) => r.body === 'GET /api/v1/auth/profile 200')!;
    const { duration_ms: duration, request_id: requestId, 'user.id': userId, ...attributes } = access.attributes;
    assert.deepEqual(attributes, {
      'log.type': 'access',
      'http.request.method': 'GET',
      'url.path': '/api/v1/auth/profile',
      'http.route': '/api/v1/auth/profile',
      'http.response.status_code': 200,
      'client.address': '127.0.0.1',
    });
    assert.equal(typeof duration, 'number');
    assert.equal(typeof requestId, 'string');
    assert.equal(typeof userId, 'string');
    assert.equal(access.severity, 'INFO');
    assert.equal(access.scope, 'gerbang-gateway');
    assert.equal(access.service, 'gerbang-gateway');
    assert.equal(access.traceId, '0af7651916cd43dd8448eb211c80319c', "continues the client's trace");
    const audit = records.find((r) => r.attributes['event.action'] === 'auth.login')!;
    assert.equal(audit.attributes['log.type'], 'audit');
    assert.equal(audit.attributes['event.outcome'], 'success');
    assert.equal(audit.attributes['audit.actor'], 'admin');
    assert.ok(!records.some((r) => r.attributes['url.path'] === '/healthz'), 'probes are not shipped');
    const span = receiver.spans().find((s: any) => s.name === 'GET /api/v1/auth/profile');
    assert.equal(span.traceId, '0af7651916cd43dd8448eb211c80319c');
    assert.equal(span.parentSpanId, 'b7ad6b7169203331', "the client's span is the parent");
    assert.equal(span.kind, 2);
    assert.equal(access.spanId, span.spanId, "the access line names the request's span");
    assert.equal(access.flags, 1, 'sampled');
    assert.equal(access.timeUnixNano, span.endTimeUnixNano, "the access line's time is the span's end: one clock reading");
    assert.equal(access.observedTimeUnixNano, access.timeUnixNano);
    assert.ok(BigInt(span.startTimeUnixNano) < BigInt(span.endTimeUnixNano));
    assert.deepEqual(
      span.attributes.map((a: any) => [a.key, Object.values(a.value)[0]]),
      [
        ['http.request.method', 'GET'],
        ['http.route', '/api/v1/auth/profile'],
        ['url.path', '/api/v1/auth/profile'],
        ['http.response.status_code', '200'],
      ],
    );
    const expectedAuth = `Basic ${Buffer.from('gateway-shipper:Ship#Secret1').toString('base64')}`;
    assert.ok(receiver.received.every((r) => r.headers.authorization === expectedAuth));
    assert.ok(
      receiver.received.every((r) => r.headers['content-type'] === 'application/x-protobuf'),
      'OTLP/protobuf',
    );
    const shipped = Buffer.concat(receiver.received.map((r) => r.raw)).toString('latin1');
    assert.ok(!shipped.includes(ADMIN_PASSWORD) && !shipped.includes(token.slice(3, -5)), 'no password or token shipped');
    await gw.close();
    await receiver.stop();
  });

  test('a proxied request is traced into the upstream call: client span with peer.service, traceparent upstream', async () => {
    const receiver = new OtlpReceiver();
    const upstream = await startUpstream((_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end('[]'));
    const gw = await startTestGateway('sqlite', {
      GATEWAY_TELEMETRY_URL: await receiver.start(),
      GATEWAY_TELEMETRY_INTERVAL: '20ms',
      GATEWAY_TELEMETRY_SAMPLE_RATIO: '1',
      SERVER_SERVICE_MASTER_DATA: upstream.url,
      SERVER_SERVICE_KEUANGAN: `http://127.0.0.1:${await closedPort()}`,
    });
    const token = await gw.login();
    assert.equal(
      (await gw.request({ method: 'GET', url: '/api/v1/master-data/provinsi?kode=31', headers: { authorization: token } })).statusCode,
      200,
    );
    assert.equal((await gw.request({ method: 'GET', url: '/api/v1/keuangan/gaji', headers: { authorization: token } })).statusCode, 502);
    await receiver.waitFor(
      () =>
        receiver.spans().filter((s: any) => s.kind === 3).length >= 2 &&
        receiver.logRecords().some((r) => r.attributes['gerbang.service'] === 'keuangan'),
    );

    const traceparent = String(upstream.seen[0]!.headers.traceparent);
    const [, traceId, parentSpanId] = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/.exec(traceparent) ?? [];
    const spans = receiver.spans();
    const client = spans.find((s: any) => s.spanId === parentSpanId);
    assert.ok(client, "the upstream saw the gateway's client span as its parent");
    assert.equal(client.traceId, traceId);
    assert.equal(client.kind, 3, 'SPAN_KIND_CLIENT');
    assert.ok(client.attributes.some((a: any) => a.key === 'peer.service' && a.value.stringValue === 'master-data'));
    const server = spans.find((s: any) => s.spanId === client.parentSpanId);
    assert.equal(server.kind, 2, "its parent is the gateway's server span");
    const failed = spans.find((s: any) => s.kind === 3 && s.attributes.some((a: any) => a.value.stringValue === 'keuangan'));
    assert.equal(failed.status.code, 2, 'an unreachable upstream is an error span');
    const access = receiver.logRecords().find((r) => r.attributes['gerbang.service'] === 'master-data')!;
    assert.equal(access.body, 'GET /api/v1/master-data/provinsi 200', 'no query values in the access log');
    await gw.close();
    await upstream.close();
    await receiver.stop();
  });

  test('a down logs service never fails a request; the bounded buffer drops and counts', async () => {
    const gw = await startTestGateway('sqlite', {
      GATEWAY_TELEMETRY_URL: `http://127.0.0.1:${await closedPort()}`,
      GATEWAY_TELEMETRY_BUFFER: '5',
      GATEWAY_TELEMETRY_INTERVAL: '1h',
    });
    for (let i = 0; i < 20; i++) assert.equal((await gw.request({ method: 'GET', url: '/api/v1/nothing' })).statusCode, 404);
    const stats = gw.telemetry.stats();
    assert.equal(stats.logs.queued, 5);
    assert.ok(stats.logs.dropped >= 15, `dropped ${stats.logs.dropped}`);
    const metrics = (await gw.request({ method: 'GET', url: '/metrics' })).body;
    assert.match(
      metrics,
      new RegExp(`gateway_telemetry_items_total\\{kind="logs",outcome="dropped"\\} ${stats.logs.dropped}\n`),
      'drops are reported on /metrics',
    );
    assert.match(metrics, /^# TYPE gateway_telemetry_items_total counter$/m, 'a counter: it only grows');
    assert.match(metrics, /^gateway_telemetry_queued_items\{kind="logs"\} 5$/m);
    await gw.telemetry.close();
    assert.equal(gw.telemetry.stats().logs.failedBatches > 0, true, 'the final send failed and was counted');
    await gw.close();
  });

  test('a hung logs service does not hold requests up', async () => {
    const receiver = new OtlpReceiver();
    receiver.hold = true;
    const gw = await startTestGateway('sqlite', { GATEWAY_TELEMETRY_URL: await receiver.start(), GATEWAY_TELEMETRY_INTERVAL: '10ms' });
    await gw.request({ method: 'GET', url: '/api/v1/nothing' });
    await receiver.waitFor(() => receiver.received.length > 0);
    // The receiver now holds an export open; requests keep being answered.
    for (let i = 0; i < 5; i++) assert.equal((await gw.request({ method: 'GET', url: '/api/v1/nothing' })).statusCode, 404);
    await receiver.stop();
    await gw.close();
  });
});
