import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startTestGateway, type TestGateway } from '../../helpers/gateway.js';
import { OtlpReceiver } from '../../helpers/otlp-receiver.js';
import { closedPort, startUpstream, type TestUpstream } from '../../helpers/upstream.js';

const SAMPLED_PARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

/**
 * A gateway shipping to a real OTLP receiver, with `ratio` and an upstream for master-data answering
 * `status(url)` (and keuangan unreachable); everything is stopped after `run`.
 */
async function withGateway(
  ratio: string,
  status: (url: string) => number,
  run: (gw: TestGateway, receiver: OtlpReceiver, upstream: TestUpstream) => Promise<void>,
): Promise<void> {
  const receiver = new OtlpReceiver();
  const upstream = await startUpstream(
    (req, res) => void res.writeHead(status(req.url!), { 'content-type': 'application/json' }).end('[]'),
  );
  const gw = await startTestGateway('sqlite', {
    GATEWAY_TELEMETRY_URL: await receiver.start(),
    GATEWAY_TELEMETRY_INTERVAL: '20ms',
    GATEWAY_TELEMETRY_SAMPLE_RATIO: ratio,
    SERVER_SERVICE_MASTER_DATA: upstream.url,
    SERVER_SERVICE_KEUANGAN: `http://127.0.0.1:${await closedPort()}`,
  });
  try {
    await run(gw, receiver, upstream);
  } finally {
    await gw.close();
    await upstream.close();
    await receiver.stop();
  }
}

/**
 * GATEWAY_TELEMETRY_SAMPLE_RATIO: spans are sampled per trace at its root and a parent's decision is
 * followed, so a shipped trace is whole; the spans of a failed request are shipped whatever the
 * decision; access lines are always shipped. Real gateway, real upstream, a real OTLP receiver on
 * loopback.
 */
describe('gateway telemetry: span sampling', () => {
  test('ratio 0: no trace of the gateway\'s own is shipped, access lines are, and the upstream is told "not sampled"; a client\'s sampled trace is still shipped whole', async () => {
    await withGateway(
      '0',
      () => 200,
      async (gw, receiver, upstream) => {
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
      },
    );
  });

  test('ratio 0: a failed request (an upstream 5xx, an upstream that cannot be reached) still ships its server span and upstream call, a 4xx does not', async () => {
    await withGateway(
      '0',
      (url) => (url.includes('broken') ? 503 : 404),
      async (gw, receiver) => {
        const token = await gw.login();
        const get = async (url: string) => (await gw.request({ method: 'GET', url, headers: { authorization: token } })).statusCode;
        assert.equal(await get('/api/v1/master-data/missing'), 404);
        assert.equal(await get('/api/v1/master-data/broken'), 503);
        assert.equal(await get('/api/v1/keuangan/gaji'), 502);

        const bodies = ['GET /api/v1/master-data/missing 404', 'GET /api/v1/master-data/broken 503', 'GET /api/v1/keuangan/gaji 502'];
        // Spans leave in the order their requests ended: once the last two requests' spans are here, a
        // span of the first would be too.
        await receiver.waitFor(() => bodies.every((b) => receiver.logRecords().some((r) => r.body === b)) && receiver.spans().length >= 4);
        const [missing, broken, unreachable] = bodies.map((b) => receiver.logRecords().find((r) => r.body === b)!);
        const spans = receiver.spans();
        const kindsOf = (traceId: string | undefined) =>
          spans
            .filter((span: any) => span.traceId === traceId)
            .map((span: any) => span.kind)
            .sort();
        assert.deepEqual(kindsOf(missing!.traceId), [], 'a 4xx is not a failure of the gateway: nothing recorded');
        assert.equal(missing!.flags, undefined);
        for (const failed of [broken!, unreachable!]) {
          assert.deepEqual(kindsOf(failed.traceId), [2, 3], `${failed.body}: the server span and its upstream call`);
          assert.equal(failed.flags, 1, `${failed.body}: the access line says its trace was recorded`);
        }
        assert.equal(spans.length, 4);
        const call = spans.find((span: any) => span.traceId === unreachable!.traceId && span.kind === 3);
        assert.equal(call.status.code, 2, 'the unreachable upstream call is marked failed');
      },
    );
  });

  test("ratio 0.5: a trace is recorded when its id's randomness reaches the threshold, and its spans say ot=th:8; a client's threshold is kept, a failure counts once", async () => {
    await withGateway(
      '0.5',
      (url) => (url.includes('broken') ? 503 : 200),
      async (gw, receiver, upstream) => {
        const token = await gw.login();
        const get = async (url: string, headers: Record<string, string> = {}) =>
          (await gw.request({ method: 'GET', url, headers: { authorization: token, ...headers } })).statusCode;
        for (let i = 0; i < 16; i++) assert.equal(await get(`/api/v1/master-data/own-${i}`), 200);
        // A client that sampled at 0.25 itself (th:c): the gateway follows it and keeps its threshold.
        const client = (id: string) => ({ traceparent: `00-${id.repeat(32)}-${'1'.repeat(16)}-01`, tracestate: 'ot=th:c' });
        assert.equal(await get('/api/v1/master-data/client', client('a')), 200);
        assert.equal(upstream.seen.at(-1)!.headers.tracestate, 'ot=th:c', 'passed on upstream');
        assert.equal(await get('/api/v1/master-data/broken', client('b')), 503);

        const own = Array.from({ length: 16 }, (_, i) => `GET /api/v1/master-data/own-${i} 200`);
        const lines = () => own.map((body) => receiver.logRecords().find((r) => r.body === body));
        // Randomness: the last 56 bits of the id; its top 16 (hex digits 18-21) against 0x8000.
        const recorded = (traceId: string) => parseInt(traceId.slice(18, 22), 16) >= 0x8000;
        await receiver.waitFor(() => {
          const seen = lines();
          if (seen.some((line) => line === undefined)) return false;
          const expected = 4 + 2 * seen.filter((line) => recorded(line!.traceId!)).length;
          return receiver.spans().length >= expected;
        });
        const spans = receiver.spans();
        for (const line of lines()) {
          const ofTrace = spans.filter((span: any) => span.traceId === line!.traceId);
          if (recorded(line!.traceId!)) {
            assert.deepEqual(
              ofTrace.map((span: any) => span.traceState),
              ['ot=th:8', 'ot=th:8'],
              `${line!.traceId}: recorded, with its threshold`,
            );
            assert.equal(line!.flags, 1);
          } else {
            assert.deepEqual(ofTrace, [], `${line!.traceId}: not recorded`);
            assert.equal(line!.flags, undefined);
          }
        }
        const statesOf = (id: string) => spans.filter((span: any) => span.traceId === id.repeat(32)).map((span: any) => span.traceState);
        assert.deepEqual(statesOf('a'), ['ot=th:c', 'ot=th:c'], "the client's threshold: each span stands for four");
        assert.deepEqual(statesOf('b'), [undefined, undefined], 'a failed request is always recorded, so it counts once');
      },
    );
  });
});
