import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { lastJsonBody, rawExchange, requestHead } from '../helpers/raw-http.js';
import { startGatewayUnderFault, type GatewayUnderFault } from './gateway-fixture.js';

/**
 * Fault suite, gateway: upstream faults and HTTP abuse against a real gateway process with
 * telemetry on. No database is involved past the start (the token check is cached), so one dialect.
 * Every case: the documented status or a closed connection, never a crash, and the process's
 * descriptors and memory come back down.
 */

/** The envelope of a gateway error. */
function envelope(body: Buffer | string) {
  const parsed = JSON.parse(body.toString()) as { code: number; status: boolean; message: string };
  assert.equal(parsed.status, false);
  return parsed;
}

describe('gateway faults: upstreams [sqlite]', { timeout: 120_000 }, () => {
  let gw: GatewayUnderFault;
  before(async () => {
    gw = await startGatewayUnderFault('sqlite');
  });
  after(async () => gw?.close());
  const get = (path: string) => gw.call('GET', path, { headers: { authorization: gw.token, 'accept-language': 'en' } });

  test('connection refused: 502 in the envelope', { timeout: 30_000 }, async () => {
    const baseline = gw.baseline();
    const response = await get('/api/v1/perizinan/cuti');
    assert.equal(response.status, 502);
    assert.equal(envelope(response.body).code, 502);
    await gw.stillServes(baseline);
  });

  test('DNS failure (a name under .invalid): 502, counted as dns', { timeout: 30_000 }, async () => {
    const baseline = gw.baseline();
    const response = await get('/api/v1/pelaporan/laporan');
    assert.equal(response.status, 502);
    assert.match(envelope(response.body).message, /Pelaporan service cannot be reached/);
    const metrics = (await gw.call('GET', '/metrics')).body.toString();
    assert.match(metrics, /gateway_proxy_upstream_errors_total\{service="pelaporan",kind="dns"\} [1-9]/);
    await gw.stillServes(baseline);
  });

  test('reset before the headers: 502', { timeout: 30_000 }, async () => {
    const baseline = gw.baseline();
    const response = await get('/api/v1/master-data/reset-before-headers');
    assert.equal(response.status, 502);
    await gw.stillServes(baseline);
  });

  test("reset mid-body: the client's connection is closed before the declared length", { timeout: 30_000 }, async () => {
    const baseline = gw.baseline();
    const response = await get('/api/v1/master-data/reset-mid-body');
    assert.equal(response.status, 200);
    assert.equal(response.aborted, true);
    assert.ok(response.body.length < 1_000_000);
    await gw.stillServes(baseline);
  });

  test('never answers: 504 after the service timeout (1 s)', { timeout: 30_000 }, async () => {
    const baseline = gw.baseline();
    const closed = once(gw.events, 'closed:/slow');
    const response = await get('/api/v1/keuangan/slow');
    assert.equal(response.status, 504);
    assert.match(envelope(response.body).message, /did not answer in time/);
    await closed; // the gateway closed its upstream connection
    await gw.stillServes(baseline);
  });

  test('one byte a second: bounded by the service timeout (504), the upstream connection closed', { timeout: 30_000 }, async () => {
    const baseline = gw.baseline();
    const closed = once(gw.events, 'closed:/drip');
    const response = await get('/api/v1/keuangan/drip');
    assert.equal(response.status, 504);
    await closed;
    await gw.stillServes(baseline);
  });

  test('an answer larger than the client reads (it reads nothing and closes): no leak', { timeout: 30_000 }, async () => {
    const baseline = gw.baseline();
    const wrote = once(gw.events, 'wrote:/big');
    const closed = once(gw.events, 'closed:/big');
    const socket = connect(gw.port, '127.0.0.1');
    socket.on('error', () => {});
    await once(socket, 'connect');
    socket.pause(); // reads nothing
    socket.write(requestHead('GET', '/api/v1/file/big', { authorization: gw.token }));
    await wrote; // the answer is flowing and backing up
    socket.destroy();
    await closed;
    await gw.stillServes(baseline);
  });
});

describe('gateway faults: HTTP abuse [sqlite]', { timeout: 120_000 }, () => {
  let gw: GatewayUnderFault;
  before(async () => {
    gw = await startGatewayUnderFault('sqlite');
  });
  after(async () => gw?.close());

  /** Requests the upstream saw for this marker path: never a second (smuggled) one. */
  const seenFor = (marker: string) => gw.upstream.seen.filter((seen) => seen.url.includes(marker));

  /**
   * A refusal: 400/431 (first status) in the gateway's envelope, or a closed connection; the
   * smuggled path never reached the upstream.
   */
  const assertRefused = async (parts: string[], statuses: number[], marker: string, what: string) => {
    const baseline = gw.baseline();
    const exchange = await rawExchange(gw.port, parts, { expectResponses: 2 });
    if (exchange.statuses.length > 0) {
      assert.ok(statuses.includes(exchange.statuses[0]!), `${what}: ${exchange.statuses[0]}\n${exchange.text.slice(0, 400)}`);
      assert.equal(envelope(JSON.stringify(lastJsonBody(exchange.text))).code, exchange.statuses[0], `${what}: not in the envelope`);
    } else assert.ok(exchange.closedByServer, `${what}: neither an answer nor a close`);
    assert.ok(!exchange.statuses.slice(1).some((status) => status < 400), `${what}: a second answer came back`);
    assert.deepEqual(seenFor(`smuggled-${marker}`), [], `${what}: a smuggled request reached the upstream`);
    await gw.stillServes(baseline);
  };

  const auth = () => `Authorization: ${gw.token}\r\n`;
  const smuggled = (marker: string) => `GET /api/v1/tramtibum/smuggled-${marker} HTTP/1.1\r\nHost: x\r\n${auth()}\r\n`;

  test('Content-Length with Transfer-Encoding: refused, nothing smuggled', { timeout: 30_000 }, async () => {
    const inner = smuggled('clte');
    const body = `0\r\n\r\n${inner}`;
    await assertRefused(
      [
        `POST /api/v1/tramtibum/front HTTP/1.1\r\nHost: x\r\n${auth()}Content-Length: ${body.length}\r\nTransfer-Encoding: chunked\r\n\r\n${body}`,
      ],
      [400],
      'clte',
      'CL+TE',
    );
  });

  test('two different Content-Lengths: refused, nothing smuggled', { timeout: 30_000 }, async () => {
    const inner = smuggled('clcl');
    await assertRefused(
      [`POST /api/v1/tramtibum/front HTTP/1.1\r\nHost: x\r\n${auth()}Content-Length: 0\r\nContent-Length: ${inner.length}\r\n\r\n${inner}`],
      [400],
      'clcl',
      'CL+CL',
    );
  });

  test('an obs-folded header: refused', { timeout: 30_000 }, async () => {
    await assertRefused(
      [`GET /api/v1/tramtibum/fold HTTP/1.1\r\nHost: x\r\n${auth()}X-Folded: a\r\n b\r\n\r\n`],
      [400],
      'fold',
      'obs-fold',
    );
  });

  test('an oversized header (32 KiB): 431 or 400', { timeout: 30_000 }, async () => {
    await assertRefused(
      [`GET /api/v1/tramtibum/big-header HTTP/1.1\r\nHost: x\r\n${auth()}X-Big: ${'a'.repeat(32 * 1024)}\r\n\r\n`],
      [431, 400],
      'bighead',
      'oversized header',
    );
  });

  test('too many headers (3,000): 431 or 400', { timeout: 30_000 }, async () => {
    const many = Array.from({ length: 3_000 }, (_, i) => `X-H${i}: v\r\n`).join('');
    await assertRefused([`GET /api/v1/tramtibum/many HTTP/1.1\r\nHost: x\r\n${auth()}${many}\r\n`], [431, 400], 'many', 'too many headers');
  });

  test(
    'pipelining: two requests in one write are both answered, in order; the upstream sees exactly those two',
    { timeout: 30_000 },
    async () => {
      const baseline = gw.baseline();
      const one = `GET /api/v1/tramtibum/pipe-a HTTP/1.1\r\nHost: x\r\n${auth()}\r\n`;
      const two = `POST /api/v1/tramtibum/pipe-b HTTP/1.1\r\nHost: x\r\n${auth()}Content-Type: application/json\r\nContent-Length: 7\r\n\r\n{"b":2}`;
      const exchange = await rawExchange(gw.port, [one + two], { expectResponses: 2 });
      assert.deepEqual(exchange.statuses, [200, 200]);
      assert.match(exchange.text, /"url":"\/pipe-a"[\s\S]*"url":"\/pipe-b","length":7/);
      assert.deepEqual(
        gw.upstream.seen.filter((seen) => seen.url.startsWith('/pipe-')).map((seen) => `${seen.method} ${seen.url}`),
        ['GET /pipe-a', 'POST /pipe-b'],
      );
      await gw.stillServes(baseline);
    },
  );

  test(
    'slowloris: headers one byte at a time are cut off within the request timeout; nothing reaches the upstream',
    { timeout: 30_000 },
    async () => {
      const baseline = gw.baseline();
      const socket = connect(gw.port, '127.0.0.1');
      socket.on('error', () => {});
      await once(socket, 'connect');
      const head = `GET /api/v1/tramtibum/smuggled-slowloris HTTP/1.1\r\nHost: x\r\n${auth()}X-Slow: `;
      let at = 0;
      let received = '';
      socket.on('data', (chunk) => (received += chunk.toString('latin1')));
      // A byte every 50 ms (the slow client under test, not a wait): it never finishes its headers.
      const drip = setInterval(() => socket.write(at < head.length ? head[at++]! : 'a'), 50);
      await once(socket, 'close'); // the server closed it
      clearInterval(drip);
      assert.ok(received === '' || /^HTTP\/1\.1 408/.test(received), received.slice(0, 200));
      if (received !== '') assert.equal(envelope(JSON.stringify(lastJsonBody(received))).code, 408);
      assert.deepEqual(seenFor('smuggled-slowloris'), []);
      await gw.stillServes(baseline);
    },
  );

  test(
    'a proxied upload that stalls after its headers is cut off within the request timeout; the upstream call is abandoned',
    { timeout: 30_000 },
    async () => {
      const baseline = gw.baseline();
      const socket = connect(gw.port, '127.0.0.1');
      socket.on('error', () => {});
      await once(socket, 'connect');
      // 16 bytes of a declared 100,000, then nothing: only the server can end this exchange.
      socket.write(
        `POST /api/v1/tramtibum/stalled-upload HTTP/1.1\r\nHost: x\r\n${auth()}Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"data":"xxxxxx`,
      );
      await once(socket, 'close');
      await gw.stillServes(baseline);
    },
  );
});
