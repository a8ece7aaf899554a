import assert from 'node:assert/strict';
import { once } from 'node:events';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { DIALECTS } from '../../helpers/databases.js';
import { startTestGateway, type TestGateway } from '../../helpers/gateway.js';
import { listenOnLoopback } from '../../helpers/listen.js';
import { OtlpReceiver } from '../../helpers/otlp-receiver.js';
import { rawRequest, readAll, startUpstream, type TestUpstream } from '../../helpers/upstream.js';

/**
 * Proxied requests with a body, with telemetry ON (the default under `npm start`): undici
 * destroys a sent request body, which nulls the incoming message's socket; the access line and
 * span are written after that. Each case must leave the gateway answering, with the client's
 * address still in the shipped access line.
 */

/** Called when the upstream gets /pending (it never answers), and when that connection closes. */
const pending: { arrived?: () => void; closed?: () => void } = {};

function upstreamBehaviour() {
  return startUpstream(async (req, res, seen) => {
    const path = (req.url ?? '').split('?')[0]!;
    if (path === '/early') {
      // Answers before reading the body.
      res.writeHead(200, { 'content-type': 'application/json', connection: 'close' }).end('{"early":true}');
      return;
    }
    if (path === '/early-reset') return void req.socket.destroy();
    if (path === '/pending') {
      req.socket.once('close', () => pending.closed?.());
      pending.arrived?.();
      return;
    }
    seen.body = await readAll(req);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ method: req.method, length: seen.body.length }));
  });
}

function chunks(size: number): Readable {
  let sent = 0;
  return new Readable({
    read() {
      if (sent >= size) return void this.push(null);
      sent += 4096;
      this.push(Buffer.alloc(4096, 3));
    },
  });
}

for (const dialect of DIALECTS) {
  describe(`proxied bodies with telemetry on [${dialect}]`, { timeout: 60_000 }, () => {
    let gw: TestGateway;
    let upstream: TestUpstream;
    let receiver: OtlpReceiver;
    let port: number;
    let token: string;

    before(async () => {
      upstream = await upstreamBehaviour();
      receiver = new OtlpReceiver();
      gw = await startTestGateway(dialect, {
        GATEWAY_TELEMETRY_URL: await receiver.start(),
        GATEWAY_TELEMETRY_INTERVAL: '20ms',
        SERVER_SERVICE_KEPEGAWAIAN: upstream.url,
        SERVER_SERVICE_PELAPORAN: upstream.url,
        SERVER_SERVICE_PELAPORAN_BODY_LIMIT: '1000',
      });
      port = await listenOnLoopback(gw.app);
      token = await gw.login();
    });
    after(async () => {
      await gw.close();
      await upstream.close();
      await receiver.stop();
    });

    const json = () => ({ authorization: token, 'content-type': 'application/json' });

    /** The gateway still answers, both its own routes and a proxied request with a body. */
    const assertAlive = async () => {
      assert.equal((await rawRequest(port, 'GET', '/healthz')).status, 200);
      const again = await rawRequest(port, 'POST', '/api/v1/kepegawaian/pegawai', { headers: json(), body: '{"nama":"y"}' });
      assert.equal(again.status, 200);
    };

    /** The shipped access line of a path, once it arrives. */
    const accessLine = async (path: string) => {
      const find = () => receiver.logRecords().find((r) => r.attributes['log.type'] === 'access' && r.attributes['url.path'] === path);
      await receiver.waitFor(() => find() !== undefined);
      return find()!;
    };

    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      test(`${method} with a body is relayed, logged with the client's address, and the gateway keeps serving`, async () => {
        const path = `/api/v1/kepegawaian/pegawai/${method.toLowerCase()}`;
        // Node's client sends a DELETE body without framing unless told its length.
        const response = await rawRequest(port, method, path, { headers: { ...json(), 'content-length': '12' }, body: '{"nama":"x"}' });
        assert.equal(response.status, 200);
        assert.deepEqual(JSON.parse(response.body.toString()), { method, length: 12 });
        const line = await accessLine(path);
        assert.equal(line.attributes['http.response.status_code'], 200);
        assert.equal(line.attributes['client.address'], '127.0.0.1');
        await assertAlive();
      });
    }

    test('a chunked upload over the body limit gets 413, and the gateway keeps serving', async () => {
      const response = await rawRequest(port, 'POST', '/api/v1/pelaporan/laporan', {
        headers: { ...json(), 'transfer-encoding': 'chunked' },
        body: chunks(100_000),
      }).catch(() => ({ status: 413 }));
      assert.equal(response.status, 413);
      const line = await accessLine('/api/v1/pelaporan/laporan');
      assert.equal(line.attributes['http.response.status_code'], 413);
      await assertAlive();
    });

    test('an upstream that answers before reading the body: its answer is relayed, the gateway keeps serving', async () => {
      const response = await rawRequest(port, 'POST', '/api/v1/kepegawaian/early', { headers: json(), body: 'x'.repeat(200_000) }).catch(
        () => ({ status: 0 }),
      );
      // The client may see the answer or a closed connection, depending on who writes first; never a dead gateway.
      assert.ok([0, 200, 502].includes(response.status), `status ${response.status}`);
      await accessLine('/api/v1/kepegawaian/early');
      await assertAlive();
    });

    test('an upstream that resets before reading the body: 502, the gateway keeps serving', async () => {
      const response = await rawRequest(port, 'PUT', '/api/v1/kepegawaian/early-reset', {
        headers: json(),
        body: 'x'.repeat(200_000),
      }).catch(() => ({ status: 0 }));
      assert.ok([0, 502].includes(response.status), `status ${response.status}`);
      await accessLine('/api/v1/kepegawaian/early-reset');
      await assertAlive();
    });

    test('two pipelined requests with bodies in one write are both answered, in order', async () => {
      const socket = connect(port, '127.0.0.1');
      await once(socket, 'connect');
      const request = (path: string, body: string) =>
        `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: ${token}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
      socket.write(request('/api/v1/kepegawaian/pipe-1', '{"a":1}') + request('/api/v1/kepegawaian/pipe-2', '{"bb":22}'));
      let received = '';
      socket.setEncoding('latin1');
      socket.on('data', (chunk: string) => (received += chunk));
      await new Promise<void>((resolve) => {
        // Two complete chunked answers.
        const check = () => (received.split('\r\n0\r\n\r\n').length === 3 ? resolve() : undefined);
        socket.on('data', check);
      });
      socket.destroy();
      assert.equal(received.split('HTTP/1.1 200 OK').length, 3);
      assert.match(received, /\{"method":"POST","length":7\}[\s\S]*\{"method":"POST","length":9\}/);
      await accessLine('/api/v1/kepegawaian/pipe-2');
      await assertAlive();
    });

    test('a client that disconnects while a proxied PUT is pending: the upstream call ends, the gateway keeps serving', async () => {
      const arrived = new Promise<void>((resolve) => (pending.arrived = resolve));
      const closed = new Promise<void>((resolve) => (pending.closed = resolve));
      const client = httpRequest({
        host: '127.0.0.1',
        port,
        method: 'PUT',
        path: '/api/v1/kepegawaian/pending',
        headers: json(),
        agent: false,
      });
      client.on('error', () => {});
      client.end('{"nama":"z"}');
      await arrived;
      client.destroy();
      await closed;
      const line = await accessLine('/api/v1/kepegawaian/pending');
      assert.equal(line.attributes['http.response.status_code'], 499);
      assert.equal(line.attributes['client.address'], '127.0.0.1');
      await assertAlive();
    });
  });
}
