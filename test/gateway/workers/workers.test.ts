import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { describe, test } from 'node:test';
import { ConfigError } from '../../../src/shared/config/env.js';
import { loadGatewayConfig } from '../../../src/gateway/config.js';
import type { DialectName } from '../../../src/shared/db/database.js';
import { createTestDatabase, DIALECTS } from '../../helpers/databases.js';
import { eventually } from '../../helpers/eventually.js';
import { ADMIN_PASSWORD } from '../../helpers/gateway.js';
import { watchLines, type LogLine } from '../../helpers/log-watch.js';
import { rawRequest, startUpstream, type TestUpstream } from '../../helpers/upstream.js';
import { nodeArgs } from '../../helpers/node-args.js';

/** `gerbang gateway` with GATEWAY_WORKERS=2, from source, on a free port; its stdout read line by line. */
async function startWorkers(env: Record<string, string>) {
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs('src/cli.ts'), 'gateway'], {
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      GATEWAY_PORT: '0',
      GATEWAY_WORKERS: '2',
      LOG_LEVEL: 'info',
      GATEWAY_ADMIN_PASSWORD: ADMIN_PASSWORD,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const watch = watchLines(child);
  const { lines, exited } = watch;
  /** The first line from now on that passes `check`. */
  const next = (check: (line: LogLine) => boolean) => watch.waitFor(check, { from: lines.length });
  /** Resolves once `condition` holds over the lines read so far. */
  const until = async (condition: () => boolean) => {
    if (!condition()) await next(condition);
  };
  const listening = () => lines.filter((line) => line.msg.startsWith('Server listening'));
  try {
    // Each process flushes its own lines: the primary's may come before a worker's.
    await until(() => listening().length === 2 && lines.some((line) => line.msg === 'gateway workers listening'));
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  const [first, second] = listening() as [LogLine, LogLine];
  const port = Number(/http:\/\/127\.0\.0\.1:(\d+)/.exec(first.msg)![1]);
  assert.ok(second.msg.includes(`127.0.0.1:${port}`), 'both workers serve the one port');
  assert.notEqual(first.pid, second.pid);
  /** One request on a connection of its own, so the primary hands each to a worker in turn. */
  const call = async (method: string, path: string, token?: string) => {
    const response = await rawRequest(port, method, path, { headers: token ? { authorization: token } : {} });
    return { status: response.status, text: response.body.toString() };
  };
  const login = async () => {
    const response = await rawRequest(port, 'POST', '/api/v1/auth/login', {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ no_pegawai: 'admin', kata_sandi: ADMIN_PASSWORD }),
    });
    return JSON.parse(response.body.toString()).data.token as string;
  };
  /** SIGTERM to the primary (unless it is gone already); resolves with its exit code. */
  const stop = () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    return exited;
  };
  return { lines, torn: watch.unparsed, next, until, call, login, stop, workerPids: [first.pid, second.pid] };
}

type Workers = Awaited<ReturnType<typeof startWorkers>>;

/** Two workers on a fresh database in front of an upstream that answers 200; stopped (exit 0 expected) and cleaned up after `use`. */
async function withWorkers(
  dialect: DialectName,
  env: Record<string, string>,
  use: (gateway: Workers, upstream: TestUpstream) => Promise<void>,
) {
  const database = await createTestDatabase(dialect);
  const upstream = await startUpstream((_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
  try {
    const gateway = await startWorkers({ GATEWAY_DATABASE_URL: database.url, SERVER_SERVICE_MASTER_DATA: upstream.url, ...env });
    try {
      await use(gateway, upstream);
    } finally {
      assert.equal(await gateway.stop(), 0);
    }
  } finally {
    await upstream.close();
    await database.drop();
  }
}

/** The pids that wrote access lines for requests with this status. */
const accessPids = (lines: LogLine[], status: number) =>
  new Set(lines.filter((line) => line.msg === 'proxied' && line.status === status).map((line) => line.pid));

const isRunning = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('GATEWAY_WORKERS settings', () => {
  test('a whole number from 1 to 64 or "auto" (one per core); anything else stops the start with the variable named', () => {
    assert.equal(loadGatewayConfig({}).workers, 1);
    assert.equal(loadGatewayConfig({ GATEWAY_WORKERS: '3' }).workers, 3);
    assert.equal(loadGatewayConfig({ GATEWAY_WORKERS: 'auto' }).workers, Math.min(availableParallelism(), 64));
    for (const bad of ['0', '65', '-1', '1.5', 'two', '2 workers']) {
      assert.throws(
        () => loadGatewayConfig({ GATEWAY_WORKERS: bad }),
        (error: unknown) => error instanceof ConfigError && /GATEWAY_WORKERS/.test(error.message),
        bad,
      );
    }
  });

  test("`gerbang all` checks both services' settings before starting either: a bad one stops it with one line", () => {
    // (More than one worker is allowed under `all`: the gateway has a process of its own there.)
    for (const [variable, value] of [
      ['GATEWAY_WORKERS', '0'],
      ['LOGS_PORT', 'eighty'],
    ] as const) {
      const result = spawnSync(process.execPath, [...nodeArgs('src/cli.ts'), 'all'], {
        env: { ...process.env, [variable]: value, LOG_LEVEL: 'info' },
        encoding: 'utf8',
        timeout: 60_000,
      });
      assert.equal(result.status, 1);
      assert.match(result.stderr, new RegExp(`^invalid configuration: ${variable} [^\\n]*\\n$`));
      assert.equal(result.stdout, '', 'nothing started');
    }
  });

  test('a worker that cannot start (database unreachable) fails the start: the primary exits 1 and says so', () => {
    const result = spawnSync(process.execPath, [...nodeArgs('src/cli.ts'), 'gateway'], {
      env: {
        ...process.env,
        HOST: '127.0.0.1',
        GATEWAY_PORT: '0',
        GATEWAY_WORKERS: '2',
        LOG_LEVEL: 'info',
        GATEWAY_DATABASE_URL: 'postgres://gerbang@127.0.0.1:1/gerbang',
      },
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(result.status, 1);
    assert.match(result.stderr, /ECONNREFUSED/, "the worker's own error");
    assert.match(result.stdout, /"msg":"a gateway worker failed to start"/);
  });
});

for (const dialect of DIALECTS) {
  describe(`gerbang gateway with two workers [${dialect}]`, () => {
    test('one port, one signing key and session store, metrics summed over the workers, whole log lines', () =>
      withWorkers(dialect, {}, async (gateway, upstream) => {
        const token = await gateway.login();
        const statuses = [];
        for (let i = 0; i < 20; i += 1) statuses.push((await gateway.call('GET', `/api/v1/master-data/provinsi?i=${i}`, token)).status);
        assert.deepEqual(statuses, Array(20).fill(200));
        // Every scrape, whichever worker takes it, counts all 20.
        const counted = /^gateway_proxy_requests_total\{service="master-data",method="GET",status="200"\} 20$/m;
        await eventually(async () => assert.match((await gateway.call('GET', '/metrics')).text, counted), 5_000);
        for (let i = 0; i < 4; i += 1) {
          const metrics = await gateway.call('GET', '/metrics');
          assert.equal(metrics.status, 200);
          assert.match(metrics.text, counted);
        }
        await gateway.until(() => accessPids(gateway.lines, 200).size === 2);
        assert.deepEqual(
          [...accessPids(gateway.lines, 200)].sort(),
          [...gateway.workerPids].sort(),
          'both workers relayed with the token issued by one',
        );
        assert.equal(upstream.seen.length, 20);
        assert.deepEqual(gateway.torn, [], 'every stdout line is one whole JSON line');
      }));

    test('a logout through one worker is refused at once by the other, even with a long session cache', () =>
      withWorkers(dialect, { GATEWAY_SESSION_CACHE_TTL: '10m' }, async (gateway, upstream) => {
        const token = await gateway.login();
        // Both workers check the token once and cache its session.
        for (let i = 0; i < 4; i += 1) assert.equal((await gateway.call('GET', '/api/v1/master-data/x', token)).status, 200);
        await gateway.until(() => accessPids(gateway.lines, 200).size === 2);
        assert.equal((await gateway.call('POST', '/api/v1/auth/logout', token)).status, 200);
        const after = [];
        for (let i = 0; i < 6; i += 1) after.push((await gateway.call('GET', '/api/v1/master-data/x', token)).status);
        assert.deepEqual(after, Array(6).fill(401));
        await gateway.until(() => accessPids(gateway.lines, 401).size === 2);
        assert.equal(upstream.seen.length, 4, 'nothing went upstream after the logout');
      }));

    test('a worker that dies is replaced; SIGTERM stops the primary and every worker', () =>
      withWorkers(dialect, {}, async (gateway) => {
        const [victim, survivor] = gateway.workerPids as [number, number];
        const replaced = gateway.next((line) => line.msg === 'gateway worker exited; starting another');
        const replacement = gateway.next((line) => line.msg.startsWith('Server listening'));
        process.kill(victim, 'SIGKILL');
        const exited = await replaced;
        assert.equal(exited.workerPid, victim);
        assert.equal(exited.restartInMs, 500, "replaced after the restart policy's first back-off");
        const newcomer = (await replacement).pid;
        assert.ok(newcomer !== victim && newcomer !== survivor);
        const token = await gateway.login();
        for (let i = 0; i < 4; i += 1) assert.equal((await gateway.call('GET', '/api/v1/master-data/x', token)).status, 200);
        await gateway.until(() => accessPids(gateway.lines, 200).size === 2);
        assert.deepEqual([...accessPids(gateway.lines, 200)].sort(), [survivor, newcomer].sort());

        assert.equal(await gateway.stop(), 0);
        assert.equal(isRunning(survivor), false);
        assert.equal(isRunning(newcomer), false);
      }));
  });
}
