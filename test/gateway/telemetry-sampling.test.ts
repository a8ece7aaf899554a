import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startTestGateway } from '../helpers/gateway.js';
import { OtlpReceiver } from '../helpers/otlp-receiver.js';
import { startUpstream } from '../helpers/upstream.js';

const SAMPLED_PARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

/**
 * GATEWAY_TELEMETRY_SAMPLE_RATIO: spans are sampled per trace at its root and a parent's decision is
 * followed, so a shipped trace is whole; access lines are always shipped. Real gateway, real
 * upstream, a real OTLP receiver on loopback.
 */
describe('gateway telemetry: span sampling', () => {
  test('ratio 0: no trace of the gateway\'s own is shipped, access lines are, and the upstream is told "not sampled"; a client\'s sampled trace is still shipped whole', async () => {
    const receiver = new OtlpReceiver();
    const upstream = await startUpstream((_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end('[]'));
    const gw = await startTestGateway('sqlite', {
      GATEWAY_TELEMETRY_URL: await receiver.start(),
      GATEWAY_TELEMETRY_INTERVAL: '20ms',
      GATEWAY_TELEMETRY_SAMPLE_RATIO: '0',
      SERVER_SERVICE_MASTER_DATA: upstream.url,
    });
    try {
      const token = await gw.login();
      assert.equal(
        (await gw.request({ method: 'GET', url: '/api/v1/master-data/unsampled', headers: { authorization: token } })).statusCode,
        200,
      );
      assert.match(String(upstream.seen.at(-1)!.headers.traceparent), /-00$/, 'the upstream is told the trace is not sampled');
      assert.equal(
        (
          await gw.request({
            method: 'GET',
            url: '/api/v1/master-data/sampled',
            headers: { authorization: token, traceparent: SAMPLED_PARENT },
          })
        ).statusCode,
        200,
      );
      assert.match(String(upstream.seen.at(-1)!.headers.traceparent), /^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-01$/);

      await receiver.waitFor(
        () => receiver.logRecords().some((r) => r.body === 'GET /api/v1/master-data/sampled 200') && receiver.spans().length >= 2,
      );
      const unsampled = receiver.logRecords().find((r) => r.body === 'GET /api/v1/master-data/unsampled 200');
      assert.ok(unsampled, 'access lines are not sampled');
      assert.equal(unsampled.flags, undefined, 'the access line of an unsampled trace says so (flags 0)');
      assert.match(String(unsampled.traceId), /^[0-9a-f]{32}$/, 'and names its trace');
      const sampled = receiver.logRecords().find((r) => r.body === 'GET /api/v1/master-data/sampled 200')!;
      assert.equal(sampled.flags, 1);
      assert.equal(sampled.traceId, '4bf92f3577b34da6a3ce929d0e0e4736');
      const spans = receiver.spans();
      assert.ok(
        spans.every((s: any) => s.traceId === '4bf92f3577b34da6a3ce929d0e0e4736'),
        'only the sampled trace',
      );
      assert.deepEqual(spans.map((s: any) => s.kind).sort(), [2, 3], 'whole: the server span and its upstream call');
    } finally {
      await gw.close();
      await upstream.close();
      await receiver.stop();
    }
  });
});
