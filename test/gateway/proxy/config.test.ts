import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Agent, get as httpGet, type IncomingMessage } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { buildGateway, type Gateway } from '../../../src/gateway/app.js';
import { loadGatewayConfig } from '../../../src/gateway/config.js';
import { isSafePath } from '../../../src/gateway/modules/proxy/path-guard.js';
import { ProxyMetrics } from '../../../src/gateway/modules/proxy/proxy.metrics.js';
import { classifyUpstreamError } from '../../../src/gateway/modules/proxy/upstream.js';
import { ConfigError } from '../../../src/shared/config/env.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/databases.js';
import { eventually } from '../../helpers/eventually.js';
import { ADMIN_PASSWORD, startTestGateway, type TestGateway } from '../../helpers/gateway.js';
import { rawRequest, startUpstream, type TestUpstream } from '../../helpers/upstream.js';
import { listenOnLoopback } from '../../helpers/listen.js';

describe('proxy configuration', () => {
  test('service addresses: prefix kept, per-service timeout and limit, documented defaults', () => {
    const config = loadGatewayConfig({
      SERVER_SERVICE_MASTER_DATA: 'http://md.internal:8000/v2/',
      SERVER_SERVICE_MASTER_DATA_TIMEOUT: '5s',
      SERVER_SERVICE_FILE: 'https://files.internal',
    });
    assert.deepEqual(config.proxy.upstreams['master-data'], {
      origin: 'http://md.internal:8000',
      pathPrefix: '/v2',
      timeoutMs: 5_000,
      bodyLimit: 10_485_760,
      docsPath: '/docs.json',
    });
    assert.equal(config.proxy.upstreams.file?.bodyLimit, 1_073_741_824);
    assert.equal(config.proxy.upstreams.file?.timeoutMs, 30_000);
    assert.equal(config.proxy.upstreams.keuangan, undefined);
    assert.equal(config.proxy.authorization, 'bearer');
    assert.equal(config.sessionCacheMs, 2_000);
  });

  test('a bad setting stops the start with the variable named', () => {
    const bad: [Record<string, string>, RegExp][] = [
      [{ SERVER_SERVICE_KEUANGAN: 'not a url' }, /SERVER_SERVICE_KEUANGAN must be a URL/],
      [{ SERVER_SERVICE_KEUANGAN: 'ftp://x' }, /SERVER_SERVICE_KEUANGAN/],
      [{ SERVER_SERVICE_KEUANGAN: 'http://user:secret@x' }, /SERVER_SERVICE_KEUANGAN must not carry credentials/],
      [{ SERVER_SERVICE_KEUANGAN: 'http://x', SERVER_SERVICE_KEUANGAN_TIMEOUT: 'soon' }, /SERVER_SERVICE_KEUANGAN_TIMEOUT/],
      [
        { SERVER_SERVICE_KEUANGAN: 'http://x', SERVER_SERVICE_KEUANGAN_DOCS_PATH: 'docs.json' },
        /SERVER_SERVICE_KEUANGAN_DOCS_PATH must start with \//,
      ],
      [{ GATEWAY_PROXY_AUTHORIZATION: 'basic' }, /GATEWAY_PROXY_AUTHORIZATION/],
      [{ GATEWAY_PROXY_CA_FILE: '/nonexistent/ca.pem' }, /GATEWAY_PROXY_CA_FILE cannot be read/],
      [{ GATEWAY_PROXY_CA_FILE: fileURLToPath(import.meta.url) }, /GATEWAY_PROXY_CA_FILE holds no PEM certificate/],
    ];
    for (const [env, message] of bad) {
      assert.throws(
        () => loadGatewayConfig(env),
        (error: unknown) => error instanceof ConfigError && message.test(error.message),
      );
    }
  });

  test('path guard: raw and encoded traversal refused, ordinary paths kept', () => {
    for (const path of [
      '/..',
      '/../x',
      '/a/..',
      '/.',
      '/%2e%2e/x',
      '/%2E./x',
      '/..%2F',
      '/x%5c..',
      '/a\\b',
      '//x',
      '/%252e%252e/',
      '/%25252e%25252e/',
      '/%00',
      '/%zz',
    ]) {
      assert.equal(isSafePath(path), false, path);
    }
    for (const path of ['', '/', '/provinsi', '/pegawai/123', '/a.b/c..d', '/...', '/a%20b', '/a%2fb', '/%E2%9C%93']) {
      assert.equal(isSafePath(path), true, path);
    }
  });

  test('metrics: counters by service, method and status; cumulative histogram buckets with +Inf, sum and count', async () => {
    const metrics = new ProxyMetrics();
    metrics.observe('file', 'GET', 200, 0.003, 0.002);
    metrics.observe('file', 'GET', 200, 0.005, undefined);
    metrics.observe('file', 'POST', 502, 40, undefined);
    const text = await metrics.registry.metrics();
    assert.match(text, /^gateway_proxy_requests_total\{service="file",method="GET",status="200"\} 2$/m);
    assert.match(text, /^gateway_proxy_requests_total\{service="file",method="POST",status="502"\} 1$/m);
    assert.match(text, /^gateway_proxy_request_duration_seconds_bucket\{le="0.0025",service="file"\} 0$/m);
    assert.match(text, /^gateway_proxy_request_duration_seconds_bucket\{le="0.005",service="file"\} 2$/m, 'a bound is inclusive');
    assert.match(text, /^gateway_proxy_request_duration_seconds_bucket\{le="30",service="file"\} 2$/m);
    assert.match(text, /^gateway_proxy_request_duration_seconds_bucket\{le="\+Inf",service="file"\} 3$/m);
    assert.match(text, /^gateway_proxy_request_duration_seconds_sum\{service="file"\} 40.008$/m);
    assert.match(text, /^gateway_proxy_request_duration_seconds_count\{service="file"\} 3$/m);
    assert.match(text, /^gateway_proxy_upstream_duration_seconds_count\{service="file"\} 1$/m);
    assert.match(text, /^# TYPE gateway_proxy_request_duration_seconds histogram$/m);
  });

  test('upstream failures are classified for 502 and 504', () => {
    const kind = (code: string) => classifyUpstreamError(Object.assign(new Error(code), { code }));
    assert.equal(kind('ECONNREFUSED'), 'refused');
    assert.equal(kind('ENOTFOUND'), 'dns');
    assert.equal(kind('EAI_AGAIN'), 'dns');
    assert.equal(kind('UND_ERR_SOCKET'), 'reset');
    assert.equal(kind('ECONNRESET'), 'reset');
    assert.equal(kind('UND_ERR_HEADERS_TIMEOUT'), 'timeout');
    assert.equal(kind('UND_ERR_CONNECT_TIMEOUT'), 'timeout');
    assert.equal(kind('SELF_SIGNED_CERT_IN_CHAIN'), 'tls');
    assert.equal(kind('UNABLE_TO_VERIFY_LEAF_SIGNATURE'), 'tls');
    assert.equal(kind('ERR_TLS_CERT_ALTNAME_INVALID'), 'tls');
  });
});

describe('proxy options: wrapped Authorization, protected metrics', () => {
  let gw: TestGateway;
  let upstream: TestUpstream;
  let port: number;

  before(async () => {
    upstream = await startUpstream((_req, res) => void res.writeHead(204).end());
    gw = await startTestGateway('sqlite', {
      SERVER_SERVICE_NOTIFICATION: upstream.url,
      GATEWAY_PROXY_AUTHORIZATION: 'wrapped',
      GATEWAY_METRICS_TOKEN: 'scrape-secret',
    });
    port = await listenOnLoopback(gw.app);
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  test('the wrapped token goes upstream as the client sent it', async () => {
    const token = await gw.login();
    const response = await rawRequest(port, 'DELETE', '/api/v1/notification/42', { headers: { authorization: token } });
    assert.equal(response.status, 204);
    assert.equal(upstream.seen.at(-1)!.headers.authorization, token);
    assert.equal(upstream.seen.at(-1)!.method, 'DELETE');
    assert.equal(upstream.seen.at(-1)!.url, '/42');
  });

  test('/metrics needs the configured bearer token', async () => {
    assert.equal((await rawRequest(port, 'GET', '/metrics')).status, 401);
    assert.equal((await rawRequest(port, 'GET', '/metrics', { headers: { authorization: 'Bearer wrong' } })).status, 401);
    const ok = await rawRequest(port, 'GET', '/metrics', { headers: { authorization: 'Bearer scrape-secret' } });
    assert.equal(ok.status, 200);
    assert.match(ok.body.toString(), /gateway_proxy_requests_total\{service="notification",method="DELETE",status="204"\} 1/);
  });
});

describe('circuit breaker', () => {
  let gw: TestGateway;
  let upstream: TestUpstream;
  let port: number;
  let healthy = false;

  before(async () => {
    upstream = await startUpstream((req, res) => {
      if (!healthy) return void req.socket.destroy();
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
    gw = await startTestGateway('sqlite', {
      SERVER_SERVICE_PERIZINAN: upstream.url,
      GATEWAY_PROXY_RETRIES: '0',
      GATEWAY_PROXY_BREAKER_THRESHOLD: '2',
      GATEWAY_PROXY_BREAKER_COOLDOWN: '10s',
    });
    port = await listenOnLoopback(gw.app);
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  test('after consecutive failures calls fail at once; after the cooldown one trial call decides', async () => {
    const token = await gw.login();
    const call = async () => (await rawRequest(port, 'GET', '/api/v1/perizinan/cuti', { headers: { authorization: token } })).status;
    assert.equal(await call(), 502);
    assert.equal(await call(), 502);
    assert.equal(upstream.seen.length, 2);
    assert.equal(await call(), 502, 'open: not attempted');
    assert.equal(upstream.seen.length, 2);
    gw.clock.advance(10_001);
    assert.equal(await call(), 502, 'trial call fails');
    assert.equal(upstream.seen.length, 3);
    assert.equal(await call(), 502);
    assert.equal(upstream.seen.length, 3, 'open again');
    healthy = true;
    gw.clock.advance(10_001);
    assert.equal(await call(), 200, 'trial call succeeds');
    assert.equal(await call(), 200, 'closed');
    assert.equal(upstream.seen.length, 5);
    const metrics = (await rawRequest(port, 'GET', '/metrics')).body.toString();
    assert.match(metrics, /gateway_proxy_upstream_errors_total\{service="perizinan",kind="circuit_open"\} 2/);
  });
});

describe('proxy: CORS, access log, header bytes', () => {
  const PORTAL = 'https://portal.example.go.id';
  let gw: Gateway;
  let database: TestDatabase;
  let upstream: TestUpstream;
  let port: number;
  let token: string;
  const lines: string[] = [];

  before(async () => {
    upstream = await startUpstream((req, res) => {
      if (req.url === '/own-cors') return void res.writeHead(200, { 'access-control-allow-origin': '*' }).end('own');
      // A header value with a raw latin1 byte (é) and one with raw UTF-8 bytes (✓): both must pass unchanged.
      res.writeHead(
        200,
        [
          ['x-latin1', Buffer.from('caf\xe9', 'latin1').toString('latin1')],
          ['x-utf8', Buffer.from('✓ ok').toString('latin1')],
          ['content-type', 'text/plain'],
        ].flat(),
      );
      res.end('hello');
    });
    database = await createTestDatabase('sqlite');
    const logStream = new PassThrough();
    logStream.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));
    const config = loadGatewayConfig({
      GATEWAY_DATABASE_URL: database.url,
      GATEWAY_ADMIN_PASSWORD: ADMIN_PASSWORD,
      LOG_LEVEL: 'info',
      GATEWAY_CORS_ORIGINS: PORTAL,
      SERVER_SERVICE_PELAPORAN: upstream.url,
    });
    gw = await buildGateway({ config, logStream });
    port = await listenOnLoopback(gw.app);
    const login = await rawRequest(port, 'POST', '/api/v1/auth/login', {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ no_pegawai: 'admin', kata_sandi: ADMIN_PASSWORD }),
    });
    token = JSON.parse(login.body.toString()).data.token;
  });
  after(async () => {
    await gw.app.close();
    await upstream.close();
    await database.drop();
  });

  test("a browser on an allowed origin may read relayed answers and the gateway's own errors; others may not", async () => {
    const relayed = await rawRequest(port, 'GET', '/api/v1/pelaporan/laporan', { headers: { authorization: token, origin: PORTAL } });
    assert.equal(relayed.status, 200);
    assert.equal(relayed.headers['access-control-allow-origin'], PORTAL);
    assert.equal(relayed.headers['access-control-allow-credentials'], 'true');
    const refused = await rawRequest(port, 'GET', '/api/v1/pelaporan/laporan', { headers: { origin: PORTAL } });
    assert.equal(refused.status, 401);
    assert.equal(refused.headers['access-control-allow-origin'], PORTAL);
    const other = await rawRequest(port, 'GET', '/api/v1/pelaporan/laporan', {
      headers: { authorization: token, origin: 'https://evil.example.com' },
    });
    assert.equal(other.status, 200);
    assert.equal(other.headers['access-control-allow-origin'], undefined);
    const own = await rawRequest(port, 'GET', '/api/v1/pelaporan/own-cors', { headers: { authorization: token, origin: PORTAL } });
    assert.equal(own.headers['access-control-allow-origin'], '*', "the upstream's own CORS answer is kept, not doubled");
  });

  test('the SSO cookie authenticates proxied requests; cross-site state changes need the header', async () => {
    const cookie = `theme=dark; access_token=${token}`;
    const get = await rawRequest(port, 'GET', '/api/v1/pelaporan/laporan', { headers: { cookie, origin: 'https://evil.example.com' } });
    assert.equal(get.status, 200, 'a safe method may come from anywhere');
    assert.equal(upstream.seen.at(-1)!.headers.authorization, `Bearer ${token.slice(3, -5)}`);
    assert.equal(upstream.seen.at(-1)!.headers.cookie, 'theme=dark');
    const before = upstream.seen.length;
    const forged = await rawRequest(port, 'POST', '/api/v1/pelaporan/laporan', {
      headers: { cookie, origin: 'https://evil.example.com', 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(forged.status, 403);
    assert.equal(upstream.seen.length, before, 'nothing reached the upstream');
    for (const origin of [PORTAL, `http://127.0.0.1:${port}`]) {
      const allowed = await rawRequest(port, 'POST', '/api/v1/pelaporan/laporan', {
        headers: { cookie, origin, 'content-type': 'application/json' },
        body: '{}',
      });
      assert.equal(allowed.status, 200, origin);
    }
  });

  test('response header values arrive byte for byte, non-ASCII included', async () => {
    const response = await rawRequest(port, 'GET', '/api/v1/pelaporan/statistik', { headers: { authorization: token } });
    assert.equal(response.status, 200);
    const raw = (name: string) =>
      Buffer.from(response.rawHeaders[response.rawHeaders.findIndex((h, i) => i % 2 === 0 && h.toLowerCase() === name) + 1]!, 'latin1');
    assert.deepEqual(raw('x-latin1'), Buffer.from([0x63, 0x61, 0x66, 0xe9]));
    assert.deepEqual(raw('x-utf8'), Buffer.from('✓ ok'));
  });

  test('one access line per proxied request: service, method, path, parameter names (no values), status, timings', async () => {
    const response = await rawRequest(port, 'GET', '/api/v1/pelaporan/statistik?tahun=2024&nik=3171234567890001', {
      headers: { authorization: token, 'x-request-id': 'access-line-1' },
    });
    assert.equal(response.status, 200);
    await eventually(async () => assert.ok(lines.some((line) => line.includes('access-line-1'))));
    const entries = lines.map((line) => JSON.parse(line)).filter((entry) => entry.reqId === 'access-line-1');
    assert.equal(entries.length, 1);
    const [entry] = entries;
    assert.equal(entry.msg, 'proxied');
    assert.equal(entry.service, 'pelaporan');
    assert.equal(entry.method, 'GET');
    assert.equal(entry.path, '/api/v1/pelaporan/statistik');
    assert.equal(entry.query, 'tahun,nik');
    assert.equal(entry.status, 200);
    assert.equal(typeof entry.upstreamMs, 'number');
    assert.ok(entry.totalMs >= entry.upstreamMs);
    assert.ok(!lines.join('\n').includes('3171234567890001'), 'query values never reach the log');
    assert.ok(!lines.join('\n').includes(token.slice(3, -5)), 'nor the token');
  });
});

describe('proxy during shutdown', () => {
  test('an answer given while the gateway closes ends its keep-alive connection, so the close does not wait on idle clients', async () => {
    let arrived!: () => void;
    const arrival = new Promise<void>((resolve) => (arrived = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const upstream = await startUpstream(async (_req, res) => {
      arrived();
      await released;
      res.writeHead(200, { 'content-type': 'text/plain' }).end('late');
    });
    const gw = await startTestGateway('sqlite', { SERVER_SERVICE_TRAMTIBUM: upstream.url });
    const port = await listenOnLoopback(gw.app);
    const token = await gw.login();
    const agent = new Agent({ keepAlive: true });
    const answer = new Promise<IncomingMessage>((resolve, reject) =>
      httpGet({ host: '127.0.0.1', port, path: '/api/v1/tramtibum/kegiatan', agent, headers: { authorization: token } }, (res) =>
        res.resume().on('end', () => resolve(res)),
      ).on('error', reject),
    );
    await arrival;
    const closed = gw.close();
    await eventually(async () => assert.equal(gw.app.server.listening, false));
    release();
    const res = await answer;
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers.connection, 'close');
    await closed; // without the connection closing, this would wait for the keep-alive timeout (72 s)
    agent.destroy();
    await upstream.close();
  });
});

describe('HTTPS upstreams', () => {
  const fixture = (name: string) => fileURLToPath(new URL(`../../fixtures/tls/${name}`, import.meta.url));
  let server: HttpsServer;
  let address: string;

  before(async () => {
    // An upstream with a certificate from an internal CA that Node does not know.
    server = createHttpsServer(
      { key: readFileSync(fixture('server-key.pem')), cert: readFileSync(fixture('server-cert.pem')) },
      (req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ url: req.url, secure: true }));
      },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    address = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => void (await new Promise((resolve) => server.close(resolve))));

  test('with GATEWAY_PROXY_CA_FILE the internal CA is trusted and the call goes through', async () => {
    const gw = await startTestGateway('sqlite', { SERVER_SERVICE_FILE: `${address}/files`, GATEWAY_PROXY_CA_FILE: fixture('ca-cert.pem') });
    const response = await gw.request({ method: 'GET', url: '/api/v1/file/berkas-1', headers: { authorization: await gw.login() } });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(response.json(), { url: '/files/berkas-1', secure: true });
    await gw.close();
  });

  test('without it the certificate is refused: 502, counted as a TLS failure', async () => {
    const gw = await startTestGateway('sqlite', { SERVER_SERVICE_FILE: address });
    const response = await gw.request({ method: 'GET', url: '/api/v1/file/berkas-1', headers: { authorization: await gw.login() } });
    assert.equal(response.statusCode, 502);
    assert.ok(!response.body.includes('127.0.0.1'), 'no internal address in the answer');
    const metrics = (await gw.request({ method: 'GET', url: '/metrics' })).body;
    assert.match(metrics, /gateway_proxy_upstream_errors_total\{service="file",kind="tls"\} 1/);
    await gw.close();
  });
});
