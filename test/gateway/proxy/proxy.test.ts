import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { PassThrough, Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { DIALECTS } from '../../helpers/databases.js';
import { startTestGateway, type TestGateway } from '../../helpers/gateway.js';
import { closedPort, digestStream, rawRequest, readAll, startUpstream, type TestUpstream } from '../../helpers/upstream.js';
import { listenOnLoopback } from '../../helpers/listen.js';

const BINARY = randomBytes(256 * 1024);
const MIB = 1_048_576;

/** 50 MiB of deterministic bytes, produced piece by piece (never held whole). */
function bigStream(size: number): Readable {
  let sent = 0;
  const piece = Buffer.alloc(64 * 1024, 7);
  return new Readable({
    read() {
      if (sent >= size) return void this.push(null);
      const chunk = piece.subarray(0, Math.min(piece.length, size - sent));
      sent += chunk.length;
      this.push(chunk);
    },
  });
}

const bigDigest = async (size: number) => digestStream(bigStream(size));

/** Called when the upstream gets /hang, and when that request's connection closes. */
const hang: { arrived?: () => void; closed?: () => void } = {};

/** Hand-offs between client and upstream that prove bodies stream rather than being buffered whole. */
const probe: { upstreamGotData?: () => void; clientGotData?: Promise<void> } = {};

/** The upstream of these tests: each path is one behaviour. */
function upstreamBehaviour() {
  return startUpstream(async (req, res, seen) => {
    const path = (req.url ?? '').replace(/^\/prefix/, '').split('?')[0]!;
    if (path === '/upload-digest') {
      const { length, sha256 } = await digestStream(req);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ length, sha256 }));
      return;
    }
    if (path === '/probe-up') {
      let length = 0;
      req.on('data', (chunk: Buffer) => {
        if (length === 0) probe.upstreamGotData?.();
        length += chunk.length;
      });
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ length })));
      return;
    }
    if (path === '/probe-down') {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.write(Buffer.alloc(65_536, 1));
      await probe.clientGotData; // the rest only once the client has the first part
      res.end(Buffer.alloc(65_536, 2));
      return;
    }
    if (path === '/big-download') {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(50 * MIB) });
      bigStream(50 * MIB).pipe(res);
      return;
    }
    if (path === '/reset-before-headers') return void req.socket.destroy();
    if (path === '/reset-mid-body') {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': '1000000' });
      res.write(Buffer.alloc(1000, 1), () => setImmediate(() => req.socket.destroy()));
      return;
    }
    if (path === '/hang') {
      // never answers: the gateway's timeout must
      req.socket.once('close', () => hang.closed?.());
      hang.arrived?.();
      return;
    }
    if (path === '/stall-body') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('partial');
      return; // never ends
    }
    if (path === '/slow-body') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      for (let i = 0; i < 5; i += 1) {
        res.write(`chunk${i};`);
        await new Promise((resolve) => setTimeout(resolve, 30));
      }
      res.end();
      return;
    }
    seen.body = await readAll(req);
    if (path === '/binary') {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(BINARY.length) }).end(BINARY);
      return;
    }
    if (path === '/echo-body') {
      res.writeHead(201, { 'content-type': req.headers['content-type'] ?? 'application/octet-stream' }).end(seen.body);
      return;
    }
    if (path === '/headers') {
      res.setHeader('connection', 'x-hop-named, keep-alive');
      res.setHeader('x-hop-named', 'must not pass');
      res.setHeader('keep-alive', 'timeout=5');
      res.setHeader('proxy-authenticate', 'Basic');
      res.setHeader('set-cookie', ['a=1; Path=/', 'b=2; Path=/']);
      res.setHeader('x-upstream', 'yes');
      res.setHeader('cache-control', 'max-age=60');
      res.statusCode = 418;
      res.end('teapot');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ method: req.method, url: req.url }));
  });
}

for (const dialect of DIALECTS) {
  describe(`proxy [${dialect}]`, () => {
    let gw: TestGateway;
    let upstream: TestUpstream;
    let port: number;
    let token: string;

    before(async () => {
      upstream = await upstreamBehaviour();
      const refused = await closedPort();
      gw = await startTestGateway(dialect, {
        SERVER_SERVICE_MASTER_DATA: `${upstream.url}/prefix`,
        SERVER_SERVICE_FILE: upstream.url,
        SERVER_SERVICE_KEUANGAN: upstream.url,
        SERVER_SERVICE_KEUANGAN_TIMEOUT: '300ms',
        SERVER_SERVICE_PELAPORAN: upstream.url,
        SERVER_SERVICE_PELAPORAN_BODY_LIMIT: '1000',
        SERVER_SERVICE_KEPEGAWAIAN: `http://127.0.0.1:${refused}`,
        // SERVER_SERVICE_TRAMTIBUM unset: 503
      });
      port = await listenOnLoopback(gw.app);
      token = await gw.login();
    });
    after(async () => {
      await gw.close();
      await upstream.close();
    });

    const auth = () => ({ authorization: token });

    test(
      'an upload with a Content-Length streams too: the upstream reads it before the client has sent it all',
      { timeout: 20_000 },
      async () => {
        // A small body that came with its headers goes upstream whole; one still arriving must not be waited for.
        const upstreamGotData = new Promise<void>((resolve) => (probe.upstreamGotData = resolve));
        const upload = new PassThrough();
        const sent = rawRequest(port, 'POST', '/api/v1/file/probe-up', {
          headers: { ...auth(), 'content-type': 'application/octet-stream', 'content-length': '131072' },
          body: upload,
        });
        upload.write(Buffer.alloc(65_536, 1));
        await upstreamGotData;
        upload.end(Buffer.alloc(65_536, 2));
        const up = await sent;
        assert.equal(up.status, 200);
        assert.deepEqual(JSON.parse(up.body.toString()), { length: 131_072 });
      },
    );

    test('forwards method, the path below the base path, the raw query and JSON body; answers unchanged', async () => {
      const before = upstream.seen.length;
      const body = JSON.stringify({ nama: 'Jakarta', kode: 31 });
      const response = await rawRequest(port, 'POST', '/api/v1/master-data/echo-body?tahun=2024&q=a%20b&q=c', {
        headers: { ...auth(), 'content-type': 'application/json' },
        body,
      });
      assert.equal(response.status, 201);
      assert.equal(response.headers['content-type'], 'application/json');
      assert.equal(response.body.toString(), body);
      const seen = upstream.seen[before]!;
      assert.equal(seen.method, 'POST');
      assert.equal(seen.url, '/prefix/echo-body?tahun=2024&q=a%20b&q=c');
      assert.equal(seen.body.toString(), body);
    });

    test('adds Authorization (Bearer bare JWT), X-Request-Id, X-User-Id, X-Forwarded-*; strips Host and hop-by-hop', async () => {
      const before = upstream.seen.length;
      const response = await rawRequest(port, 'GET', '/api/v1/master-data/provinsi', {
        headers: {
          ...auth(),
          host: 'gerbang.example.go.id',
          connection: 'keep-alive, x-client-hop',
          'x-client-hop': 'secret',
          'keep-alive': 'timeout=5',
          te: 'trailers',
          'proxy-authorization': 'Basic Zm9vOmJhcg==',
          'x-user-id': 'forged',
          'x-forwarded-for': '6.6.6.6',
          'x-forwarded-host': 'evil.example',
          'x-request-id': 'client-req-1',
          'x-custom': 'kept',
          'accept-language': 'id',
          cookie: `theme=dark; access_token=${token}; lang=id`,
        },
      });
      assert.equal(response.status, 200);
      const seen = upstream.seen[before]!;
      const jwt = token.slice(3, -5);
      assert.equal(seen.headers.authorization, `Bearer ${jwt}`);
      assert.equal(seen.headers['x-custom'], 'kept');
      assert.equal(seen.headers['accept-language'], 'id');
      assert.equal(seen.headers.cookie, 'theme=dark; lang=id', "the gateway's session cookie stays at the gateway");
      assert.equal(seen.headers['x-request-id'], 'client-req-1');
      assert.equal(response.headers['x-request-id'], 'client-req-1');
      assert.match(seen.headers['x-user-id'] as string, /^[0-9a-f-]{36}$/);
      assert.equal(seen.headers['x-forwarded-for'], '127.0.0.1');
      assert.equal(seen.headers['x-forwarded-proto'], 'http');
      assert.equal(seen.headers['x-forwarded-host'], 'gerbang.example.go.id');
      // Host is the upstream's own, not the client's
      assert.equal(seen.headers.host, `127.0.0.1:${upstream.port}`);
      for (const name of ['x-client-hop', 'keep-alive', 'te', 'proxy-authorization']) assert.equal(seen.headers[name], undefined, name);
    });

    test('returns the upstream status and headers unchanged, less hop-by-hop ones, without adding security headers', async () => {
      const response = await rawRequest(port, 'GET', '/api/v1/master-data/headers', { headers: auth() });
      assert.equal(response.status, 418);
      assert.equal(response.body.toString(), 'teapot');
      assert.equal(response.headers['x-upstream'], 'yes');
      assert.equal(response.headers['cache-control'], 'max-age=60');
      assert.deepEqual(response.headers['set-cookie'], ['a=1; Path=/', 'b=2; Path=/']);
      assert.equal(response.headers['x-hop-named'], undefined);
      assert.equal(response.headers['proxy-authenticate'], undefined);
      assert.equal(response.headers['content-security-policy'], undefined);
      assert.equal(response.headers['x-frame-options'], undefined);
    });

    test('binary bodies pass byte-identical both ways', async () => {
      const up = await rawRequest(port, 'PUT', '/api/v1/file/echo-body', {
        headers: { ...auth(), 'content-type': 'application/octet-stream' },
        body: BINARY,
      });
      assert.equal(up.status, 201);
      assert.ok(up.body.equals(BINARY));
      const down = await rawRequest(port, 'GET', '/api/v1/file/binary', { headers: auth() });
      assert.equal(down.status, 200);
      assert.equal(down.headers['content-length'], String(BINARY.length));
      assert.ok(down.body.equals(BINARY));
    });

    test('multipart uploads arrive byte-identical with their boundary', async () => {
      const boundary = '----gerbang' + randomBytes(8).toString('hex');
      const multipart = Buffer.concat([
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="folder"\r\n\r\ndokumen\r\n`),
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
        ),
        BINARY,
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ]);
      const before = upstream.seen.length;
      const response = await rawRequest(port, 'POST', '/api/v1/file/echo-body', {
        headers: { ...auth(), 'content-type': `multipart/form-data; boundary=${boundary}` },
        body: multipart,
      });
      assert.equal(response.status, 201);
      assert.equal(upstream.seen[before]!.headers['content-type'], `multipart/form-data; boundary=${boundary}`);
      assert.ok(upstream.seen[before]!.body.equals(multipart));
    });

    test('a 50 MiB upload (chunked) and a 50 MiB download stream through intact', async () => {
      const expected = await bigDigest(50 * MIB);
      const up = await rawRequest(port, 'POST', '/api/v1/file/upload-digest', {
        headers: { ...auth(), 'content-type': 'application/octet-stream', 'transfer-encoding': 'chunked' },
        body: bigStream(50 * MIB),
      });
      assert.equal(up.status, 200);
      assert.deepEqual(JSON.parse(up.body.toString()), expected);
      let digest: { length: number; sha256: string } | undefined;
      const down = await rawRequest(port, 'GET', '/api/v1/file/big-download', {
        headers: auth(),
        consume: async (res) => {
          digest = await digestStream(res);
          return Buffer.alloc(0);
        },
      });
      assert.equal(down.status, 200);
      assert.deepEqual(digest, expected);
    });

    test(
      'bodies stream: the upstream reads the upload before it is complete, the client reads the download before it is complete',
      { timeout: 20_000 },
      async () => {
        // Would deadlock (and time out) if the gateway waited for a whole body before passing it on.
        const upstreamGotData = new Promise<void>((resolve) => (probe.upstreamGotData = resolve));
        const upload = new PassThrough();
        const sent = rawRequest(port, 'POST', '/api/v1/file/probe-up', {
          headers: { ...auth(), 'content-type': 'application/octet-stream', 'transfer-encoding': 'chunked' },
          body: upload,
        });
        upload.write(Buffer.alloc(65_536, 1));
        await upstreamGotData;
        upload.end(Buffer.alloc(65_536, 2));
        const up = await sent;
        assert.equal(up.status, 200);
        assert.deepEqual(JSON.parse(up.body.toString()), { length: 131_072 });

        let clientGotData!: () => void;
        probe.clientGotData = new Promise<void>((resolve) => (clientGotData = resolve));
        const down = await rawRequest(port, 'GET', '/api/v1/file/probe-down', {
          headers: auth(),
          consume: async (res) => {
            const chunks: Buffer[] = [];
            for await (const chunk of res) {
              chunks.push(chunk as Buffer);
              clientGotData();
            }
            return Buffer.concat(chunks);
          },
        });
        assert.equal(down.status, 200);
        assert.equal(down.body.length, 131_072);
      },
    );

    test('a body over the service limit is refused with 413, by length or while streaming', async () => {
      const before = upstream.seen.length;
      const byLength = await rawRequest(port, 'POST', '/api/v1/pelaporan/echo-body', {
        headers: { ...auth(), 'content-type': 'application/json' },
        body: 'x'.repeat(1001),
      });
      assert.equal(byLength.status, 413);
      assert.equal(JSON.parse(byLength.body.toString()).status, false);
      assert.equal(upstream.seen.length, before, 'nothing went upstream');
      const chunked = await rawRequest(port, 'POST', '/api/v1/pelaporan/upload-digest', {
        headers: { ...auth(), 'content-type': 'application/octet-stream', 'transfer-encoding': 'chunked' },
        body: bigStream(100_000),
      }).catch(() => ({ status: 413, aborted: true }));
      assert.equal(chunked.status, 413);
      const within = await rawRequest(port, 'POST', '/api/v1/pelaporan/echo-body', {
        headers: { ...auth(), 'content-type': 'application/json' },
        body: '"ok"',
      });
      assert.equal(within.status, 201);
    });

    test('401 without a valid token, and nothing reaches the upstream', async () => {
      const before = upstream.seen.length;
      const missing = await rawRequest(port, 'POST', '/api/v1/master-data/echo-body', {
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      assert.equal(missing.status, 401);
      assert.equal(JSON.parse(missing.body.toString()).code, 401);
      // One signature character changed (in the middle: the last one may carry only padding bits)
      const at = token.length - 30;
      const tampered = token.slice(0, at) + (token[at] === 'A' ? 'B' : 'A') + token.slice(at + 1);
      const wrong = await rawRequest(port, 'GET', '/api/v1/master-data/provinsi', { headers: { authorization: tampered } });
      assert.equal(wrong.status, 401);
      const bare = await rawRequest(port, 'GET', '/api/v1/file/binary', { headers: { authorization: 'Bearer nonsense' } });
      assert.equal(bare.status, 401);
      assert.equal(upstream.seen.length, before);
    });

    test('a logged-out token is refused at once', async () => {
      const own = await gw.login();
      assert.equal((await rawRequest(port, 'GET', '/api/v1/master-data/provinsi', { headers: { authorization: own } })).status, 200);
      const logout = await gw.request({ method: 'POST', url: '/api/v1/auth/logout', headers: { authorization: own } });
      assert.equal(logout.statusCode, 200);
      const before = upstream.seen.length;
      assert.equal((await rawRequest(port, 'GET', '/api/v1/master-data/provinsi', { headers: { authorization: own } })).status, 401);
      assert.equal(upstream.seen.length, before);
    });

    test('an unconfigured service answers 503 in the envelope, naming the service', async () => {
      const response = await rawRequest(port, 'GET', '/api/v1/tramtibum/kegiatan', { headers: { ...auth(), 'accept-language': 'en' } });
      assert.equal(response.status, 503);
      const body = JSON.parse(response.body.toString());
      assert.deepEqual(body, { code: 503, status: false, message: 'The Tramtibum service is not configured' });
      assert.equal(response.headers['x-content-type-options'], 'nosniff', "the gateway's own answers keep the security headers");
    });

    test('connection refused: 502 naming the service, no internal address', async () => {
      const response = await rawRequest(port, 'GET', '/api/v1/kepegawaian/pegawai', { headers: { ...auth(), 'accept-language': 'en' } });
      assert.equal(response.status, 502);
      const body = JSON.parse(response.body.toString());
      assert.equal(body.message, 'The Kepegawaian service cannot be reached');
      assert.doesNotMatch(response.body.toString(), /127\.0\.0\.1|ECONNREFUSED/);
    });

    test('reset before the response headers: 502', async () => {
      const response = await rawRequest(port, 'GET', '/api/v1/master-data/reset-before-headers', { headers: auth() });
      assert.equal(response.status, 502);
      assert.equal(JSON.parse(response.body.toString()).code, 502);
    });

    test('no answer within the service timeout: 504', async () => {
      const response = await rawRequest(port, 'GET', '/api/v1/keuangan/hang', { headers: { ...auth(), 'accept-language': 'en' } });
      assert.equal(response.status, 504);
      assert.equal(JSON.parse(response.body.toString()).message, 'The Keuangan service did not answer in time');
    });

    test('a client that leaves before the answer ends the upstream call', async () => {
      const errorLines = async () =>
        (await rawRequest(port, 'GET', '/metrics')).body
          .toString()
          .split('\n')
          .filter((line) => line.startsWith('gateway_proxy_upstream_errors_total{service="master-data"'));
      const errorsBefore = await errorLines();
      const arrived = new Promise<void>((resolve) => (hang.arrived = resolve));
      const closed = new Promise<void>((resolve) => (hang.closed = resolve));
      const client = httpRequest({ host: '127.0.0.1', port, path: '/api/v1/master-data/hang', headers: auth(), agent: false });
      client.on('error', () => {});
      client.end();
      await arrived;
      client.destroy();
      await closed; // the gateway's timeout here is 30 s: only the client's leaving closes it now
      const metrics = (await rawRequest(port, 'GET', '/metrics')).body.toString();
      assert.match(metrics, /gateway_proxy_requests_total\{service="master-data",method="GET",status="499"\} 1/);
      assert.deepEqual(await errorLines(), errorsBefore, 'not counted as an upstream failure');
    });

    test('upstream dying mid-body closes the client connection', async () => {
      const response = await rawRequest(port, 'GET', '/api/v1/master-data/reset-mid-body', { headers: auth() });
      assert.equal(response.status, 200);
      assert.equal(response.aborted, true);
      assert.ok(response.body.length < 1_000_000);
    });

    test('a body that stalls past the timeout closes the client connection; a slow but moving one arrives whole', async () => {
      const stalled = await rawRequest(port, 'GET', '/api/v1/keuangan/stall-body', { headers: auth() });
      assert.equal(stalled.status, 200);
      assert.equal(stalled.aborted, true);
      const slow = await rawRequest(port, 'GET', '/api/v1/keuangan/slow-body', { headers: auth() });
      assert.equal(slow.status, 200);
      assert.equal(slow.aborted, false);
      assert.equal(slow.body.toString(), 'chunk0;chunk1;chunk2;chunk3;chunk4;');
    });

    test('traversal and encoded separators never leave the base path', async () => {
      const attempts = [
        '/api/v1/master-data/../kepegawaian/pegawai',
        '/api/v1/master-data/a/../../pengguna',
        '/api/v1/master-data/%2e%2e/kepegawaian',
        '/api/v1/master-data/%2E%2E%2Fkepegawaian',
        '/api/v1/master-data/.%2e/x',
        '/api/v1/master-data/..%2fx',
        '/api/v1/master-data/..%5cx',
        '/api/v1/master-data/..\\x',
        '/api/v1/master-data/a\\b',
        '/api/v1/master-data//etc/passwd',
        '/api/v1/master-data/a//b',
        '/api/v1/master-data/%252e%252e/x',
        '/api/v1/master-data/./provinsi',
        '/api/v1/master-data/%00',
      ];
      const before = upstream.seen.length;
      for (const path of attempts) {
        const response = await rawRequest(port, 'GET', path, { headers: auth() });
        assert.ok([400, 404].includes(response.status), `${path} -> ${response.status}`);
        assert.equal(JSON.parse(response.body.toString()).status, false, path);
      }
      // A malformed escape is refused by the router itself (Fastify's own 400 body).
      assert.equal((await rawRequest(port, 'GET', '/api/v1/master-data/%zz', { headers: auth() })).status, 400);
      assert.equal(upstream.seen.length, before, 'nothing went upstream');
      // Dots inside names and a single encoded slash within a segment stay below the base path.
      const fine = await rawRequest(port, 'GET', '/api/v1/master-data/files/laporan.v2..pdf', { headers: auth() });
      assert.equal(fine.status, 200);
      assert.equal(upstream.seen.at(-1)!.url, '/prefix/files/laporan.v2..pdf');
    });

    test('the base path itself and its trailing slash reach the upstream root', async () => {
      const bare = await rawRequest(port, 'GET', '/api/v1/file?status=unread', { headers: auth() });
      assert.equal(bare.status, 200);
      assert.equal(upstream.seen.at(-1)!.url, '/?status=unread');
      const slash = await rawRequest(port, 'GET', '/api/v1/master-data/', { headers: auth() });
      assert.equal(slash.status, 200);
      assert.equal(upstream.seen.at(-1)!.url, '/prefix/');
    });

    test('GET /metrics counts proxied requests and upstream errors per service', async () => {
      const response = await rawRequest(port, 'GET', '/metrics');
      assert.equal(response.status, 200);
      const text = response.body.toString();
      assert.match(text, /gateway_proxy_requests_total\{service="master-data",method="GET",status="200"\} \d+/);
      assert.match(text, /gateway_proxy_upstream_errors_total\{service="kepegawaian",kind="refused"\} [1-9]/);
      assert.match(text, /gateway_proxy_upstream_errors_total\{service="keuangan",kind="timeout"\} [1-9]/);
      assert.match(text, /gateway_proxy_request_duration_seconds_bucket\{le="0.005",service="file"\} \d+/);
    });

    test('HEAD passes through without a body', async () => {
      const response = await rawRequest(port, 'HEAD', '/api/v1/file/binary', { headers: auth() });
      assert.equal(response.status, 200);
      assert.equal(response.headers['content-length'], String(BINARY.length));
      assert.equal(response.body.length, 0);
    });
  });
}
