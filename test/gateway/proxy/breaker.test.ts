import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { CircuitBreaker } from '../../../src/gateway/modules/proxy/circuit-breaker.js';
import { TestClock } from '../../helpers/clock.js';
import { DIALECTS } from '../../helpers/databases.js';
import { startTestGateway, type TestGateway } from '../../helpers/gateway.js';
import { listenOnLoopback } from '../../helpers/listen.js';
import { rawRequest, startUpstream, type TestUpstream } from '../../helpers/upstream.js';

describe('circuit breaker transitions (injected clock)', () => {
  const open = (threshold = 2, cooldown = 1_000) => {
    const clock = new TestClock();
    return { clock, breaker: new CircuitBreaker(threshold, cooldown, clock.now) };
  };
  /** Fails `n` calls in a row. */
  const fail = (breaker: CircuitBreaker, n: number) => {
    for (let i = 0; i < n; i += 1) breaker.enter()!.failed();
  };

  test('closed: calls pass; failures below the threshold keep it closed; a success resets the count', () => {
    const { breaker } = open(2);
    fail(breaker, 1);
    assert.equal(breaker.state, 'closed');
    breaker.enter()!.succeeded();
    fail(breaker, 1);
    assert.equal(breaker.state, 'closed', 'the success reset the count');
    assert.ok(breaker.enter());
  });

  test('closed -> open at the threshold; open refuses every call during the cooldown', () => {
    const { breaker, clock } = open(2, 1_000);
    fail(breaker, 2);
    assert.equal(breaker.state, 'open');
    assert.equal(breaker.enter(), undefined);
    clock.advance(999);
    assert.equal(breaker.enter(), undefined, 'still cooling down');
  });

  test('half-open lets exactly one trial through', () => {
    const { breaker, clock } = open(1, 1_000);
    fail(breaker, 1);
    clock.advance(1_000);
    assert.equal(breaker.state, 'half-open');
    const trial = breaker.enter();
    assert.ok(trial);
    assert.equal(breaker.enter(), undefined, 'a second call while the trial is in flight is refused');
    assert.equal(breaker.enter(), undefined);
    trial.succeeded();
  });

  test('a trial that succeeds closes the circuit', () => {
    const { breaker, clock } = open(1, 1_000);
    fail(breaker, 1);
    clock.advance(1_000);
    breaker.enter()!.succeeded();
    assert.equal(breaker.state, 'closed');
    assert.ok(breaker.enter());
    assert.ok(breaker.enter(), 'closed: any number of calls');
  });

  test('a trial that fails opens it again for a full cooldown', () => {
    const { breaker, clock } = open(1, 1_000);
    fail(breaker, 1);
    clock.advance(1_000);
    breaker.enter()!.failed();
    assert.equal(breaker.state, 'open');
    assert.equal(breaker.enter(), undefined);
    clock.advance(999);
    assert.equal(breaker.enter(), undefined);
    clock.advance(1);
    assert.ok(breaker.enter(), 'the next trial after the new cooldown');
  });

  test('an aborted trial (released) lets the next call be the trial; the circuit stays half-open', () => {
    const { breaker, clock } = open(1, 1_000);
    fail(breaker, 1);
    clock.advance(1_000);
    breaker.enter()!.released();
    assert.equal(breaker.state, 'half-open');
    const next = breaker.enter();
    assert.ok(next, 'the next call is the trial');
    assert.equal(breaker.enter(), undefined, 'and only it');
    next.succeeded();
    assert.equal(breaker.state, 'closed');
  });

  test('each call reports once: a release after a verdict changes nothing', () => {
    const { breaker, clock } = open(1, 1_000);
    fail(breaker, 1);
    clock.advance(1_000);
    const trial = breaker.enter()!;
    trial.failed();
    trial.released();
    trial.succeeded();
    assert.equal(breaker.state, 'open', 'the failure stands');
  });

  test('a call let through while closed that ends after the circuit opened does not free the trial slot', () => {
    const { breaker, clock } = open(1, 1_000);
    const early = breaker.enter()!;
    fail(breaker, 1);
    clock.advance(1_000);
    const trial = breaker.enter();
    assert.ok(trial);
    early.released();
    assert.equal(breaker.enter(), undefined, 'still one trial at a time');
  });
});

/** Called when the upstream gets /hang (it never answers), and when that connection closes. */
const hang: { arrived?: () => void; closed?: () => void } = {};

for (const dialect of DIALECTS) {
  describe(`circuit breaker through the proxy: aborted trials [${dialect}]`, { timeout: 60_000 }, () => {
    let gw: TestGateway;
    let upstream: TestUpstream;
    let port: number;
    let token: string;
    let healthy = false;

    before(async () => {
      upstream = await startUpstream((req, res) => {
        if (!healthy) return void req.socket.destroy();
        if (req.url === '/hang') {
          req.socket.once('close', () => hang.closed?.());
          hang.arrived?.();
          return;
        }
        req.resume();
        req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
      });
      gw = await startTestGateway(dialect, {
        SERVER_SERVICE_PERIZINAN: upstream.url,
        SERVER_SERVICE_PERIZINAN_BODY_LIMIT: '1000',
        GATEWAY_PROXY_RETRIES: '0',
        GATEWAY_PROXY_BREAKER_THRESHOLD: '1',
        GATEWAY_PROXY_BREAKER_COOLDOWN: '1s',
      });
      port = await listenOnLoopback(gw.app);
      token = await gw.login();
    });
    after(async () => {
      await gw.close();
      await upstream.close();
    });

    const call = async (path = '/cuti') =>
      (await rawRequest(port, 'GET', `/api/v1/perizinan${path}`, { headers: { authorization: token } })).status;

    /** One failed call opens the circuit; the cooldown passes; the next call is the trial. */
    const openThenCool = async () => {
      healthy = false;
      assert.equal(await call(), 502);
      const seen = upstream.seen.length;
      assert.equal(await call(), 502, 'open: refused at once');
      assert.equal(upstream.seen.length, seen, 'nothing reached the upstream');
      gw.clock.advance(1_001);
      healthy = true;
    };

    test('the client of the half-open trial leaves before the answer: the next call is the trial, and it closes the circuit', async () => {
      await openThenCool();
      const arrived = new Promise<void>((resolve) => (hang.arrived = resolve));
      const closed = new Promise<void>((resolve) => (hang.closed = resolve));
      const client = httpRequest({
        host: '127.0.0.1',
        port,
        path: '/api/v1/perizinan/hang',
        headers: { authorization: token },
        agent: false,
      });
      client.on('error', () => {});
      client.end();
      await arrived; // the trial is at the upstream
      client.destroy();
      await closed; // and the gateway ended it
      const seen = upstream.seen.length;
      assert.equal(await call(), 200, 'the healthy upstream is reached again');
      assert.equal(upstream.seen.length, seen + 1);
      assert.equal(await call(), 200, 'closed');
    });

    test('a half-open trial whose upload breaks off (over the body limit) frees the trial for the next call', async () => {
      await openThenCool();
      let sent = 0;
      const body = new Readable({
        read() {
          if (sent >= 100_000) return void this.push(null);
          sent += 4096;
          this.push(Buffer.alloc(4096, 1));
        },
      });
      const upload = await rawRequest(port, 'POST', '/api/v1/perizinan/cuti', {
        headers: { authorization: token, 'content-type': 'application/octet-stream', 'transfer-encoding': 'chunked' },
        body,
      }).catch(() => ({ status: 413 }));
      assert.equal(upload.status, 413);
      assert.equal(await call(), 200, 'the next call is the trial and closes the circuit');
      assert.equal(await call(), 200);
    });
  });
}
