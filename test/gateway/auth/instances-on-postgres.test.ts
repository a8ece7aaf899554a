import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { decodeJwt, decodeProtectedHeader, generateKeyPair, SignJWT } from 'jose';
import pg from 'pg';
import { LISTENER_APPLICATION_NAME, LISTENER_LOST, LISTENER_RESTORED } from '../../../src/gateway/modules/auth/session-notify.js';
import { unwrapToken } from '../../../src/gateway/modules/auth/token-wrapping.js';
import { UNANNOUNCED_TRUST_MS } from '../../../src/gateway/modules/auth/session-cache.js';
import { runCli } from '../../helpers/cli-process.js';
import { eventually } from '../../helpers/eventually.js';
import { ADMIN_PASSWORD } from '../../helpers/gateway.js';
import { watchLines, type LogLine, type LogWatch } from '../../helpers/log-watch.js';
import { LOGS_ADMIN, LOGS_ADMIN_PASSWORD } from '../../helpers/logs.js';
import { startLogsProcess } from '../../helpers/logs-process.js';
import { startOwnPostgres, type OwnPostgres } from '../../helpers/own-postgres.js';
import { startPostgresGate, type PostgresGate } from '../../helpers/postgres-gate.js';
import { closedPort, rawRequest, startUpstream, type TestUpstream } from '../../helpers/upstream.js';
import { nodeArgs } from '../../helpers/node-args.js';

/**
 * Two gateway processes on one PostgreSQL (a private one: this test stops and starts it), each
 * trusting a looked-up session for 30 s (GATEWAY_SESSION_CACHE_TTL), as an operator runs them
 * behind a load balancer. A logout on one is refused on the other long before those 30 s: told at
 * once while the LISTEN connections stand; while one cannot hear (its listening connection cut
 * and kept away by a gate in front of PostgreSQL, or PostgreSQL restarting), that one trusts its
 * cache for a second and says so, and once back it forgets what it cached. A signing-key rotation
 * needs no restart: after `rotate-signing-keys` and a restart of one instance, its tokens are
 * accepted by the other, in both services; tokens of unknown keys are refused.
 */

const CACHE_TTL = '30s';

interface GatewayProcess {
  readonly child: ChildProcess;
  readonly port: number;
  readonly log: LogWatch;
}

async function startGateway(databaseUrl: string, upstream: TestUpstream): Promise<GatewayProcess> {
  const port = await closedPort();
  const child = spawn(process.execPath, [...nodeArgs('src/cli.ts'), 'gateway'], {
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      GATEWAY_PORT: String(port),
      GATEWAY_DATABASE_URL: databaseUrl,
      GATEWAY_ADMIN_PASSWORD: ADMIN_PASSWORD,
      GATEWAY_SESSION_CACHE_TTL: CACHE_TTL,
      LOG_LEVEL: 'info',
      SERVER_SERVICE_MASTER_DATA: upstream.url,
      GATEWAY_PROXY_RETRIES: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log = watchLines(child);
  await log.waitFor((line) => line.msg === `Server listening at http://127.0.0.1:${port}`);
  return { child, port, log };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  await exited;
  clearTimeout(killer);
}

/** The next line passing `check` that the process writes from now on (lines already written do not count). */
function nextLine(log: LogWatch, check: (line: LogLine) => boolean, timeoutMs = 60_000): Promise<LogLine> {
  return log.waitFor(check, { from: log.lines.length, timeoutMs });
}

const json = (body: Buffer) => JSON.parse(body.toString()) as Record<string, any>;

async function login(gateway: GatewayProcess): Promise<string> {
  const response = await rawRequest(gateway.port, 'POST', '/api/v1/auth/login', {
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ no_pegawai: 'admin', kata_sandi: ADMIN_PASSWORD }),
  });
  assert.equal(response.status, 200, response.body.toString());
  return json(response.body).data.token as string;
}

/** A proxied call with `token`: 200 when the gateway takes the token, 401 when not. */
async function proxied(gateway: GatewayProcess, token: string): Promise<number> {
  return (await rawRequest(gateway.port, 'GET', '/api/v1/master-data/provinsi', { headers: { authorization: token } })).status;
}

async function logout(gateway: GatewayProcess, token: string): Promise<number> {
  return (await rawRequest(gateway.port, 'POST', '/api/v1/auth/logout', { headers: { authorization: token } })).status;
}

async function degradedGauge(gateway: GatewayProcess): Promise<number> {
  const text = (await rawRequest(gateway.port, 'GET', '/metrics')).body.toString();
  const value = /^gateway_session_cache_degraded (\S+)$/m.exec(text)?.[1];
  assert.ok(value !== undefined, 'gateway_session_cache_degraded is exposed');
  return Number(value);
}

/** Until `at` (Date.now() time): the one wait of this file, for the second a degraded instance still trusts its cache. */
async function until(at: number): Promise<void> {
  if (at > Date.now()) await delay(at - Date.now());
}

const kidOf = (jwt: string) => decodeProtectedHeader(jwt).kid;

/** The claims of a real token signed again with a key of our own under a made-up kid. */
async function forged(jwt: string): Promise<string> {
  const { privateKey } = await generateKeyPair('ES256');
  return new SignJWT(decodeJwt(jwt))
    .setProtectedHeader({ alg: 'ES256', kid: randomUUID(), typ: decodeProtectedHeader(jwt).typ! })
    .sign(privateKey);
}

describe('two gateway processes on one PostgreSQL, with a 30 s session cache', { timeout: 600_000 }, () => {
  let postgres: OwnPostgres;
  let gate: PostgresGate;
  let upstream: TestUpstream;
  let a: GatewayProcess;
  /** Reaches PostgreSQL through `gate`. */
  let b: GatewayProcess;
  const children: ChildProcess[] = [];

  before(async () => {
    postgres = await startOwnPostgres();
    gate = await startPostgresGate({ host: '127.0.0.1', port: Number(new URL(postgres.url).port) });
    upstream = await startUpstream((_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    a = await startGateway(postgres.url, upstream);
    b = await startGateway(gate.url(postgres.url), upstream);
    children.push(a.child, b.child);
  });
  after(async () => {
    for (const child of children) await stop(child);
    await gate?.close();
    await upstream?.close();
    await postgres?.remove();
  });

  test('a logout on one is refused on the other at once, not after the cache TTL', async () => {
    for (const [here, there] of [
      [a, b],
      [b, a],
    ] as const) {
      const token = await login(here);
      assert.equal(await proxied(there, token), 200, 'cached on the other instance for 30 s');
      assert.equal(await logout(here, token), 200);
      assert.equal(await proxied(here, token), 401);
      // Bounded far below the 30 s TTL: only the notification can make it refused in time.
      await eventually(async () => assert.equal(await proxied(there, token), 401), 10_000);
    }
    assert.equal(await degradedGauge(b), 0);
  });

  test('while one cannot hear the others (its listening connection cut and kept away), it says so, trusts its cache for a second, and once back forgets what it cached and hears again', async () => {
    const cached = await login(a);
    assert.equal(await proxied(b, cached), 200);
    const lost = nextLine(b.log, (line) => line.msg === LISTENER_LOST);
    const restored = nextLine(b.log, (line) => line.msg === LISTENER_RESTORED);
    let unheard = '';
    gate.cut(LISTENER_APPLICATION_NAME);
    try {
      const lostLine = await lost;
      const degradedSince = Date.now();
      assert.equal(lostLine.level, 40, 'a warning');
      assert.equal(await degradedGauge(b), 1);

      // Ended on A, which B cannot hear: refused on B once its second of trust has passed.
      assert.equal(await logout(a, cached), 200);
      await until(degradedSince + UNANNOUNCED_TRUST_MS);
      assert.equal(await proxied(b, cached), 401, 'a request made a second after the degraded line is refused, though cached for 30 s');

      // Read by B during the outage, then ended where B cannot hear it.
      unheard = await login(a);
      assert.equal(await proxied(b, unheard), 200);
      assert.equal(await logout(a, unheard), 200);
      await eventually(async () => assert.ok(gate.refused(LISTENER_APPLICATION_NAME) >= 1, 'B keeps trying to reconnect'));
    } finally {
      gate.open();
    }
    const restoredLine = await restored;
    assert.equal(restoredLine.level, 30);
    assert.ok((restoredLine.attempts as number) >= 2, 'it came back on a later attempt');
    assert.equal(await proxied(b, unheard), 401, 'nothing cached during the outage is trusted once back');
    assert.equal(await degradedGauge(b), 0);

    const later = await login(a);
    assert.equal(await proxied(b, later), 200);
    assert.equal(await logout(a, later), 200);
    await eventually(async () => assert.equal(await proxied(b, later), 401), 10_000);
  });

  test('PostgreSQL restarted: both say they lost it and are back; a logout meanwhile is refused a second after, and at once after', async (t) => {
    const cached = await login(a);
    assert.equal(await proxied(b, cached), 200);
    const lost = [a, b].map((gateway) => nextLine(gateway.log, (line) => line.msg === LISTENER_LOST));
    const restored = [a, b].map((gateway) =>
      nextLine(gateway.log, (line) => line.msg === LISTENER_RESTORED).then((line) => ({ line, at: Date.now() })),
    );
    await postgres.stop();
    await Promise.all(lost);
    const degradedSince = Date.now();
    await postgres.start();
    const startedAt = Date.now();

    // Once A's database answers again (its pool reconnects by itself), the logout; B may or may not be back yet.
    await eventually(async () => assert.equal(await logout(a, cached), 200), 60_000, 100);
    await until(degradedSince + UNANNOUNCED_TRUST_MS);
    const statuses: number[] = [];
    await eventually(
      async () => {
        statuses.push(await proxied(b, cached));
        assert.equal(statuses.at(-1), 401);
      },
      30_000,
      100,
    );
    assert.ok(!statuses.includes(200), `refused on B (answers: ${statuses.join(' ')})`);

    const back = await Promise.all(restored);
    for (const [name, { line, at }] of [
      ['A', back[0]!],
      ['B', back[1]!],
    ] as const) {
      t.diagnostic(
        `${name}: listening again ${at - startedAt} ms after PostgreSQL was up (down ${String(line.downMs)} ms, ${String(line.attempts)} attempts)`,
      );
    }
    for (const [here, there] of [
      [a, b],
      [b, a],
    ] as const) {
      const token = await login(here);
      assert.equal(await proxied(there, token), 200);
      assert.equal(await logout(here, token), 200);
      await eventually(async () => assert.equal(await proxied(there, token), 401), 10_000);
    }
  });

  test('signing keys rotated: no restart needed; a restarted instance’s tokens are accepted by the others, in both services; unknown kids refused', async () => {
    // The logs service's database on the same server, two logs processes on it.
    const admin = new pg.Client(postgres.url);
    await admin.connect();
    await admin.query('CREATE DATABASE logs');
    await admin.end();
    const logsUrl = Object.assign(new URL(postgres.url), { pathname: '/logs' }).toString();
    const logsPorts = [await closedPort(), await closedPort()];
    let logsA = await startLogsProcess(logsUrl, logsPorts[0]!);
    children.push(logsA);
    const logsB = await startLogsProcess(logsUrl, logsPorts[1]!);
    children.push(logsB);
    const logsLogin = async (port: number) => {
      const response = await rawRequest(port, 'POST', '/api/login', {
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: LOGS_ADMIN, password: LOGS_ADMIN_PASSWORD }),
      });
      assert.equal(response.status, 200, response.body.toString());
      return json(response.body).token.access_token as string;
    };
    const me = async (port: number, jwt: string) =>
      (await rawRequest(port, 'GET', '/api/me', { headers: { authorization: `Bearer ${jwt}` } })).status;

    const oldGatewayToken = await login(a);
    const oldKid = kidOf(unwrapToken(oldGatewayToken)!);
    const oldLogsToken = await logsLogin(logsPorts[0]!);
    const oldLogsKid = kidOf(oldLogsToken);

    const rotated = await runCli(['rotate-signing-keys'], { GATEWAY_DATABASE_URL: postgres.url, LOGS_DATABASE_URL: logsUrl });
    assert.equal(rotated.status, 0, rotated.stderr);
    const newKid = /^gateway: new signing key (\S+),/m.exec(rotated.stdout)?.[1];
    const newLogsKid = /^logs: new signing key (\S+),/m.exec(rotated.stdout)?.[1];
    assert.ok(newKid && newLogsKid, rotated.stdout);

    // Gateway: the running instances are told at once, and sign with the new key without a restart.
    for (const gateway of [a, b]) {
      await eventually(async () => assert.equal(kidOf(unwrapToken(await login(gateway))!), newKid), 10_000);
      const jwks = json((await rawRequest(gateway.port, 'GET', '/.well-known/jwks.json')).body) as { keys: { kid: string }[] };
      assert.deepEqual(jwks.keys.map((key) => key.kid).sort(), [oldKid, newKid].sort());
    }

    // Logs service (no listener), while its B is younger than its first key refresh (a minute): a
    // restarted instance signs with the new key; the other, which has not read its keys since,
    // accepts it on first sight.
    await stop(logsA);
    logsA = await startLogsProcess(logsUrl, logsPorts[0]!);
    children.push(logsA);
    const freshLogs = await logsLogin(logsPorts[0]!);
    assert.equal(kidOf(freshLogs), newLogsKid);
    assert.notEqual(newLogsKid, oldLogsKid);
    assert.equal(await me(logsPorts[1]!, freshLogs), 200);
    assert.equal(await me(logsPorts[1]!, oldLogsToken), 200);
    const forgedLogs = await Promise.all(Array.from({ length: 20 }, async () => me(logsPorts[1]!, await forged(freshLogs))));
    assert.deepEqual(forgedLogs, Array(20).fill(401));

    // Gateway A restarted: its tokens (new key) work on B, and the old key's tokens still work on both.
    await stop(a.child);
    a = await startGateway(postgres.url, upstream);
    children.push(a.child);
    const fresh = await login(a);
    assert.equal(kidOf(unwrapToken(fresh)!), newKid);
    assert.equal(await proxied(b, fresh), 200);
    assert.equal(await proxied(a, oldGatewayToken), 200);
    assert.equal(await proxied(b, oldGatewayToken), 200);
    // The claims of a live session under a key nobody has: refused, a flood of them too.
    const forgedStatuses = await Promise.all(
      Array.from({ length: 20 }, async () => proxied(b, `Bearer ${await forged(unwrapToken(fresh)!)}`)),
    );
    assert.deepEqual(forgedStatuses, Array(20).fill(401));
    assert.equal(await proxied(b, fresh), 200, 'and the real one still works');
  });
});
