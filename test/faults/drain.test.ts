import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter, once } from 'node:events';
import { Agent, get, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { after, describe, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';
import { ADMIN_PASSWORD } from '../helpers/gateway.js';
import { LOGS_ADMIN, LOGS_ADMIN_PASSWORD } from '../helpers/logs.js';
import { killHard, startLogsProcess } from '../helpers/logs-process.js';
import { watchLines, type LogWatch } from '../helpers/log-watch.js';
import { closedPort, rawRequest, startUpstream, type TestUpstream } from '../helpers/upstream.js';
import { nodeArgs } from '../helpers/node-args.js';

/**
 * Stopping like a production server, with real processes: SIGTERM flips /readyz to 503 `draining`
 * while new requests are still served for SHUTDOWN_READINESS_DELAY; then no new connections, idle
 * keep-alive connections closed, a slow 50 MB download in flight finishes within
 * SHUTDOWN_DRAIN_TIMEOUT; with a short drain timeout it is cut, and its cut is logged.
 */

const MIB = 1_048_576;
const DOWNLOAD_BYTES = 50 * MIB;
const DOWNLOAD = '/api/v1/master-data/slow-download';

/** An upstream sending 50 MB at about 2 MB/s (64 KiB every 32 ms); emits `first-bytes` once it started. */
function slowUpstream(events: EventEmitter): Promise<TestUpstream> {
  return startUpstream((req, res) => {
    if (!req.url?.startsWith('/slow-download')) {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(DOWNLOAD_BYTES) });
    const piece = Buffer.alloc(64 * 1024, 7);
    let sent = 0;
    let waiting = false;
    const timer = setInterval(() => {
      if (waiting) return;
      sent += piece.length;
      waiting = !res.write(piece);
      if (waiting) res.once('drain', () => (waiting = false));
      if (sent === piece.length) events.emit('first-bytes');
      if (sent >= DOWNLOAD_BYTES) {
        clearInterval(timer);
        res.end();
      }
    }, 32);
    res.once('close', () => clearInterval(timer));
  });
}

interface GatewayProcess {
  child: ChildProcess;
  port: number;
  token: string;
  log: LogWatch;
}

async function startGateway(database: TestDatabase, upstream: TestUpstream, env: Record<string, string>): Promise<GatewayProcess> {
  const port = await closedPort();
  const child = spawn(process.execPath, [...nodeArgs('src/cli.ts'), 'gateway'], {
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      GATEWAY_PORT: String(port),
      GATEWAY_DATABASE_URL: database.url,
      GATEWAY_ADMIN_PASSWORD: ADMIN_PASSWORD,
      LOG_LEVEL: 'info',
      SERVER_SERVICE_MASTER_DATA: upstream.url,
      SERVER_SERVICE_MASTER_DATA_TIMEOUT: '120s',
      GATEWAY_PROXY_RETRIES: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log = watchLines(child);
  const workers = Number(env.GATEWAY_WORKERS ?? '1');
  await log.waitFor((line) => line.msg === (workers > 1 ? 'gateway workers listening' : 'Server listening at http://127.0.0.1:' + port), {
    timeoutMs: 60_000,
  });
  const login = await rawRequest(port, 'POST', '/api/v1/auth/login', {
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ no_pegawai: 'admin', kata_sandi: ADMIN_PASSWORD }),
  });
  assert.equal(login.status, 200, login.body.toString());
  return { child, port, log, token: (JSON.parse(login.body.toString()) as { data: { token: string } }).data.token };
}

/** A download through the gateway on a connection of its own: its answer, then how many bytes came and whether all did. */
function download(port: number, path: string, token: string) {
  return new Promise<{ response: IncomingMessage; body: Promise<{ bytes: number; complete: boolean }> }>((resolve, reject) => {
    const request = get({ host: '127.0.0.1', port, path, headers: { authorization: token }, agent: false }, (response) => {
      let bytes = 0;
      response.on('data', (chunk: Buffer) => (bytes += chunk.length));
      const body = new Promise<{ bytes: number; complete: boolean }>((done) => {
        response.once('end', () => done({ bytes, complete: response.complete }));
        response.once('error', () => done({ bytes, complete: false }));
        response.once('close', () => done({ bytes, complete: response.complete }));
      });
      resolve({ response, body });
    });
    request.once('error', reject);
  });
}

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

describe('drain: a stop that lets requests in flight finish', () => {
  const cleanups: (() => Promise<void>)[] = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  test('gateway workers: /readyz 503 `draining` while still serving during the delay, idle keep-alive closed, a 50 MB download at 2 MB/s finishes, exit 0', async () => {
    const events = new EventEmitter();
    const upstream = await slowUpstream(events);
    const database = await createTestDatabase('sqlite');
    cleanups.push(
      () => upstream.close(),
      () => database.drop(),
    );
    const gateway = await startGateway(database, upstream, {
      GATEWAY_WORKERS: '2',
      SHUTDOWN_READINESS_DELAY: '5s',
      SHUTDOWN_DRAIN_TIMEOUT: '120s',
    });
    cleanups.push(() => killHard(gateway.child));

    // A keep-alive connection left idle after its answer.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const idle = await new Promise<IncomingMessage>((resolve, reject) =>
      get({ host: '127.0.0.1', port: gateway.port, path: '/healthz', agent }, resolve).once('error', reject),
    );
    const idleClosed = once(idle.socket, 'close');
    idle.resume();
    await once(idle, 'end');

    const started = once(events, 'first-bytes');
    const { response, body } = await download(gateway.port, DOWNLOAD, gateway.token);
    assert.equal(response.statusCode, 200);
    await started;
    gateway.child.kill('SIGTERM');
    await gateway.log.waitFor((line) => line.msg.startsWith('shutting down') === true);

    // The delay: not ready, but a new connection is still served (the load balancer is still sending).
    const ready = await rawRequest(gateway.port, 'GET', '/readyz');
    assert.equal(ready.status, 503);
    const readyBody = JSON.parse(ready.body.toString()) as { status: boolean; data: { reasons: { reason: string }[] } };
    assert.equal(readyBody.status, false);
    assert.deepEqual(
      readyBody.data.reasons.map((reason) => reason.reason),
      ['draining'],
    );
    const proxied = await rawRequest(gateway.port, 'GET', '/api/v1/master-data/still-there', { headers: { authorization: gateway.token } });
    assert.equal(proxied.status, 200, proxied.body.toString());

    // After the delay: no new connections, the idle keep-alive connection closed, the download still running.
    await gateway.log.waitFor((line) => line.msg.startsWith('no longer accepting') === true);
    await idleClosed;
    agent.destroy();
    await eventuallyRefused(gateway.port);

    const received = await body;
    assert.deepEqual(received, { bytes: DOWNLOAD_BYTES, complete: true });
    assert.equal(await gateway.log.exited, 0);
    assert.equal(gateway.log.lines.filter((line) => line.msg === 'request cut at the end of the drain').length, 0);
  });

  test('gateway: a download still running at SHUTDOWN_DRAIN_TIMEOUT is cut and logged (method, path without its query, time, bytes), exit 0', async () => {
    const events = new EventEmitter();
    const upstream = await slowUpstream(events);
    const database = await createTestDatabase('sqlite');
    cleanups.push(
      () => upstream.close(),
      () => database.drop(),
    );
    const gateway = await startGateway(database, upstream, { SHUTDOWN_DRAIN_TIMEOUT: '1s' });
    cleanups.push(() => killHard(gateway.child));

    const started = once(events, 'first-bytes');
    const { response, body } = await download(gateway.port, `${DOWNLOAD}?signature=query-secret`, gateway.token);
    assert.equal(response.statusCode, 200);
    await started;
    gateway.child.kill('SIGTERM');

    const cut = await gateway.log.waitFor((line) => line.msg === 'request cut at the end of the drain');
    assert.equal(cut.method, 'GET');
    assert.equal(cut.path, DOWNLOAD);
    assert.ok(typeof cut.runningMs === 'number' && cut.runningMs > 0, JSON.stringify(cut));
    assert.ok(typeof cut.bytesSent === 'number' && cut.bytesSent > 0 && cut.bytesSent < DOWNLOAD_BYTES, JSON.stringify(cut));
    const received = await body;
    assert.equal(received.complete, false);
    assert.ok(received.bytes < DOWNLOAD_BYTES);
    assert.equal(await gateway.log.exited, 0);
    // Neither the query string nor the token is in any line.
    assert.ok(!gateway.log.output().includes('query-secret'));
    assert.ok(!gateway.log.output().includes(gateway.token.split('.').at(-1)!));
  });

  test('logs service: /readyz 503 `draining` while a search is still answered during the delay, then exit 0', async () => {
    const database = await createTestDatabase('sqlite');
    cleanups.push(() => database.drop());
    const port = await closedPort();
    const child = await startLogsProcess(database.url, port, { SHUTDOWN_READINESS_DELAY: '5s', SHUTDOWN_DRAIN_TIMEOUT: '5s' });
    cleanups.push(() => killHard(child));
    const log = watchLines(child);
    const basic = `Basic ${Buffer.from(`${LOGS_ADMIN}:${LOGS_ADMIN_PASSWORD}`).toString('base64')}`;
    assert.equal((await rawRequest(port, 'GET', '/readyz')).status, 200);

    child.kill('SIGTERM');
    await log.waitFor((line) => line.msg.startsWith('shutting down') === true);
    const ready = await rawRequest(port, 'GET', '/readyz');
    assert.equal(ready.status, 503);
    const readyBody = JSON.parse(ready.body.toString()) as { status: string; reasons: { reason: string; signal: string }[] };
    assert.equal(readyBody.status, 'unavailable');
    assert.deepEqual(
      readyBody.reasons.map(({ reason, signal }) => ({ reason, signal })),
      [{ reason: 'draining', signal: 'SIGTERM' }],
    );
    const search = await rawRequest(port, 'GET', '/api/v1/_elastic/_search?q=anything', { headers: { authorization: basic } });
    assert.equal(search.status, 200, search.body.toString());
    assert.equal(await log.exited, 0);
  });
});

/** The listening socket closes once every worker stopped accepting: wait for that event's consequence. */
async function eventuallyRefused(port: number): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    if (await refused(port)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.fail('the gateway still accepts connections after the readiness delay');
}
