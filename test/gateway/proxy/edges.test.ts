import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { DIALECTS } from '../../helpers/databases.js';
import { startTestGateway, type TestGateway } from '../../helpers/gateway.js';
import { listenOnLoopback } from '../../helpers/listen.js';
import { rawRequest } from '../../helpers/upstream.js';

/**
 * An upstream on a raw socket, so it can answer what an HTTP library would not let it: each
 * request line's path picks a canned answer. Records every request line it saw.
 */
async function rawUpstream(answers: Record<string, string>): Promise<{ port: number; lines: string[]; close(): Promise<void> }> {
  const lines: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    let buffered = '';
    socket.on('data', (chunk) => {
      buffered += chunk.toString('latin1');
      let end: number;
      while ((end = buffered.indexOf('\r\n\r\n')) !== -1) {
        const line = buffered.slice(0, buffered.indexOf('\r\n'));
        buffered = buffered.slice(end + 4);
        lines.push(line);
        socket.write(answers[line.split(' ')[1]!] ?? 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
      }
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    lines,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Sends `text` on one connection and collects what comes back until `done` says it is all there. */
async function exchange(port: number, text: string, done: (received: string) => boolean): Promise<{ received: string; open: boolean }> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  let received = '';
  let closed = false;
  socket.setEncoding('latin1');
  socket.on('close', () => (closed = true));
  await new Promise<void>((resolve) => {
    socket.on('data', (chunk: string) => {
      received += chunk;
      if (done(received)) resolve();
    });
    socket.on('close', () => resolve());
    socket.write(text);
  });
  const open = !closed;
  socket.destroy();
  return { received, open };
}

for (const dialect of DIALECTS) {
  describe(`gateway edges [${dialect}]`, { timeout: 60_000 }, () => {
    let gw: TestGateway;
    let upstream: Awaited<ReturnType<typeof rawUpstream>>;
    let port: number;
    let token: string;

    before(async () => {
      upstream = await rawUpstream({
        '/204-with-body': 'HTTP/1.1 204 No Content\r\nContent-Length: 5\r\nX-Upstream: yes\r\n\r\nhello',
        '/304-with-body': 'HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\nETag: "v1"\r\n\r\nhello',
      });
      gw = await startTestGateway(dialect, { SERVER_SERVICE_FILE: `http://127.0.0.1:${upstream.port}`, GATEWAY_PROXY_RETRIES: '0' });
      port = await listenOnLoopback(gw.app);
      token = await gw.login();
    });
    after(async () => {
      await gw.close();
      await upstream.close();
    });

    for (const [path, why] of [
      ['/api/v1/pengguna/%', 'a lone %'],
      ['/api/v1/pengguna/%F0%9F', 'a cut UTF-8 sequence'],
      [`/api/v1/pengguna/${'a'.repeat(600)}`, 'a 600-character id'],
    ] as const) {
      test(`${why} in a path is refused in the documented envelope (400), with the gateway's headers`, async () => {
        const response = await rawRequest(port, 'GET', path, { headers: { authorization: token, 'accept-language': 'en' } });
        assert.equal(response.status, 400);
        const body = JSON.parse(response.body.toString());
        assert.deepEqual(Object.keys(body).sort(), ['code', 'message', 'status']);
        assert.equal(body.code, 400);
        assert.equal(body.status, false);
        assert.match(body.message, /^Invalid input: /);
        assert.doesNotMatch(response.body.toString(), /FST_ERR|statusCode/);
        assert.ok(response.headers['x-request-id']);
        assert.equal(response.headers['x-content-type-options'], 'nosniff');
        const indonesian = await rawRequest(port, 'GET', path, { headers: { authorization: token } });
        assert.match(JSON.parse(indonesian.body.toString()).message, /^Data tidak valid: /);
      });
    }

    test('an upstream 204 that carries a body: the client gets the 204 without a body, and its connection stays usable', async () => {
      const request = (path: string) => `GET /api/v1/file${path} HTTP/1.1\r\nHost: x\r\nAuthorization: ${token}\r\n\r\n`;
      const { received, open } = await exchange(port, request('/204-with-body') + request('/after'), (text) => text.endsWith('\r\n\r\nok'));
      const [first, second] = received.split(/(?=HTTP\/1\.1 )/);
      assert.match(first!, /^HTTP\/1\.1 204 No Content\r\n/);
      assert.match(first!, /X-Upstream: yes/i, "the upstream's headers are relayed");
      assert.doesNotMatch(first!, /content-length/i, 'a 204 carries no Content-Length');
      assert.doesNotMatch(first!, /hello/, 'nor a body');
      assert.match(second!, /^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\nok$/, 'the next request on the same connection is answered');
      assert.ok(open, 'the connection was not closed');
      assert.ok(!upstream.lines.some((line) => line.startsWith('hello')), 'the stray body never became a request');
    });

    test('an upstream 304 that carries a body: relayed as a 304 with no body, connection kept', async () => {
      const request = (path: string) =>
        `GET /api/v1/file${path} HTTP/1.1\r\nHost: x\r\nAuthorization: ${token}\r\nIf-None-Match: "v1"\r\n\r\n`;
      const { received, open } = await exchange(port, request('/304-with-body') + request('/after'), (text) => text.endsWith('\r\n\r\nok'));
      const [first, second] = received.split(/(?=HTTP\/1\.1 )/);
      assert.match(first!, /^HTTP\/1\.1 304 Not Modified\r\n/);
      assert.match(first!, /ETag: "v1"/i);
      assert.doesNotMatch(first!, /hello/);
      assert.match(second!, /^HTTP\/1\.1 200 OK\r\n/);
      assert.ok(open);
    });
  });
}
