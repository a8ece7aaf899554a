import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter, once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DialectName } from '../../src/shared/db/database.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';
import { ADMIN_PASSWORD } from '../helpers/gateway.js';
import { OtlpReceiver } from '../helpers/otlp-receiver.js';
import { killHard } from '../helpers/logs-process.js';
import { footprint, jsonLines, settlesBack, type ProcessFootprint } from '../helpers/process-probe.js';
import { closedPort, rawRequest, readAll, startUpstream, type RawResponse, type TestUpstream } from '../helpers/upstream.js';
import { nodeArgs } from '../helpers/node-args.js';

/**
 * One real gateway process (`src/cli.ts gateway`, helpers/node-args.ts) for the fault suite, with
 * telemetry ON (shipping to a real OTLP receiver), real upstreams on loopback and an OIDC issuer
 * whose key endpoint stalls. Services:
 * - master-data, file, tramtibum: the behaving upstream (30 s timeout);
 * - keuangan: the same upstream with a 1 s timeout (never answers / one byte a second);
 * - perizinan: a closed port (refused); pelaporan: `gerbang-no-such-host.invalid` (DNS).
 * The upstream emits `arrived:<path>` when a request reaches it and `closed:<path>` when its
 * connection closes, so tests wait on events, never on time.
 */

/** GATEWAY_REQUEST_TIMEOUT of the process: a client that sends its headers slowly is cut off after it. */
export const REQUEST_TIMEOUT_MS = 2_000;
export const MIB = 1_048_576;

export interface GatewayUnderFault {
  readonly port: number;
  readonly pid: number;
  /** The administrator's wrapped token. */
  readonly token: string;
  readonly upstream: TestUpstream;
  /** `arrived:<path>`, `closed:<path>`, `wrote:<path>` from the upstream. */
  readonly events: EventEmitter;
  /** Paths of requests the JWKS endpoint of the stalling issuer received. */
  readonly issuer: { url: string; jwksRequests: number; events: EventEmitter };
  readonly receiver: OtlpReceiver;
  call(method: string, path: string, options?: { headers?: Record<string, string>; body?: string | Buffer }): Promise<RawResponse>;
  logLines(): Record<string, unknown>[];
  alive(): void;
  baseline(): ProcessFootprint;
  /** After a case: still alive, /healthz and a proxied call answer, descriptors and memory came back near `baseline`. */
  stillServes(baseline: ProcessFootprint): Promise<void>;
  close(): Promise<void>;
}

/** An OIDC issuer whose discovery answers and whose JWKS endpoint never does (a provider hanging mid-login). */
async function stallingIssuer() {
  const events = new EventEmitter();
  const state = { url: '', jwksRequests: 0, events };
  const server: Server = createServer((req, res) => {
    if (req.url === '/.well-known/openid-configuration') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ issuer: state.url, jwks_uri: `${state.url}/jwks` }));
      return;
    }
    state.jwksRequests += 1;
    events.emit('jwks');
    // Never answers: the gateway's own timeout must end the wait.
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    state,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The behaving upstream; each path is one behaviour (see the tests). */
function faultUpstream(events: EventEmitter) {
  return startUpstream(async (req, res, seen) => {
    const path = (req.url ?? '').split('?')[0]!;
    events.emit(`arrived:${path}`);
    req.socket.once('close', () => events.emit(`closed:${path}`));
    switch (path) {
      case '/slow':
        return; // answers nobody: only the client leaving (or a timeout) ends it
      case '/upload-sink':
        // Reads whatever comes, answers only once the whole body arrived.
        req.on('data', () => events.emit('upload-data'));
        req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
        req.on('error', () => {});
        return;
      case '/big': {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(64 * MIB) });
        const piece = Buffer.alloc(64 * 1024, 9);
        let sent = 0;
        const pump = () => {
          while (sent < 64 * MIB) {
            sent += piece.length;
            if (sent === MIB) events.emit(`wrote:${path}`);
            if (!res.write(piece)) return void res.once('drain', pump);
          }
          res.end();
        };
        res.on('error', () => {});
        return pump();
      }
      case '/reset-before-headers':
        return void req.socket.destroy();
      case '/reset-mid-body':
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': '1000000' });
        res.write(Buffer.alloc(1000, 1), () => setImmediate(() => req.socket.destroy()));
        return;
      case '/drip': {
        // The status line one byte at a time, a byte a second: the 1 s timeout must end it.
        const head = 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok';
        let at = 0;
        const timer = setInterval(
          () => (at < head.length && !req.socket.destroyed ? req.socket.write(head[at++]!) : clearInterval(timer)),
          1_000,
        );
        req.socket.once('close', () => clearInterval(timer));
        return;
      }
    }
    // A client that stalls or leaves mid-upload makes the gateway abandon this request: nothing to answer.
    const body = await readAll(req).catch(() => undefined);
    if (body === undefined) return;
    seen.body = body;
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ method: req.method, url: req.url, length: seen.body.length }));
  });
}

export async function startGatewayUnderFault(dialect: DialectName, env: Record<string, string> = {}): Promise<GatewayUnderFault> {
  const database: TestDatabase = await createTestDatabase(dialect);
  const events = new EventEmitter();
  events.setMaxListeners(0);
  const upstream = await faultUpstream(events);
  const issuer = await stallingIssuer();
  const receiver = new OtlpReceiver();
  const port = await closedPort();
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs('src/cli.ts'), 'gateway'], {
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      GATEWAY_PORT: String(port),
      GATEWAY_DATABASE_URL: database.url,
      GATEWAY_ADMIN_PASSWORD: ADMIN_PASSWORD,
      LOG_LEVEL: 'info',
      GATEWAY_TELEMETRY_URL: await receiver.start(),
      GATEWAY_TELEMETRY_INTERVAL: '100ms',
      // Every trace: the faults' spans (an upstream call ended after its request) are checked too.
      GATEWAY_TELEMETRY_SAMPLE_RATIO: '1',
      GATEWAY_REQUEST_TIMEOUT: `${REQUEST_TIMEOUT_MS}ms`,
      GATEWAY_PROXY_RETRIES: '0',
      GATEWAY_PROXY_BREAKER_THRESHOLD: '0',
      SERVER_SERVICE_MASTER_DATA: upstream.url,
      SERVER_SERVICE_FILE: upstream.url,
      SERVER_SERVICE_TRAMTIBUM: upstream.url,
      SERVER_SERVICE_KEUANGAN: upstream.url,
      SERVER_SERVICE_KEUANGAN_TIMEOUT: '1s',
      SERVER_SERVICE_PERIZINAN: `http://127.0.0.1:${await closedPort()}`,
      SERVER_SERVICE_PELAPORAN: 'http://gerbang-no-such-host.invalid',
      OIDC_ISSUER: issuer.state.url,
      OIDC_CLIENT_ID: 'web',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let exit: string | undefined;
  child.once('exit', (code, signal) => (exit = `gateway exited (code ${code}, signal ${signal})`));
  try {
    await new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('Server listening')) resolve();
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.once('exit', (code) => reject(new Error(`gateway exited (${code}) before listening:\n${output}`)));
    });
  } catch (error) {
    await Promise.all([upstream.close(), issuer.close(), receiver.stop(), database.drop()]);
    throw error;
  }
  const call: GatewayUnderFault['call'] = (method, path, options = {}) => rawRequest(port, method, path, options);
  const login = await call('POST', '/api/v1/auth/login', {
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ no_pegawai: 'admin', kata_sandi: ADMIN_PASSWORD }),
  });
  assert.equal(login.status, 200, login.body.toString());
  const token = (JSON.parse(login.body.toString()) as { data: { token: string } }).data.token;

  const fixture: GatewayUnderFault = {
    port,
    pid: child.pid!,
    token,
    upstream,
    events,
    issuer: issuer.state,
    receiver,
    call,
    logLines: () => jsonLines(output),
    alive() {
      assert.equal(exit, undefined, `${exit}\n${output.slice(-4000)}`);
    },
    baseline: () => footprint(child.pid!),
    async stillServes(baseline) {
      fixture.alive();
      assert.equal((await call('GET', '/healthz')).status, 200);
      const proxied = await call('POST', '/api/v1/master-data/ok', {
        headers: { authorization: token, 'content-type': 'application/json' },
        body: '{"still":"serving"}',
      });
      assert.equal(proxied.status, 200, proxied.body.toString());
      await settlesBack(fixture.pid, baseline);
      fixture.alive();
    },
    async close() {
      await killHard(child);
      await Promise.all([upstream.close(), issuer.close(), receiver.stop()]);
      await database.drop();
    },
  };
  return fixture;
}
