import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as tick } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { Client as ElasticClient } from '@elastic/elasticsearch';
import { LOGS_NODE_OPTIONS } from '../../src/logs/node-options.js';
import { eventually } from '../helpers/eventually.js';
import { watchLines } from '../helpers/log-watch.js';
import { footprint, settlesBack } from '../helpers/process-probe.js';
import { startUpstream, type TestUpstream } from '../helpers/upstream.js';

const PASSWORD = 'Admin#Passw0rd';

/**
 * `npm start` as a user runs it (`node scripts/start.mjs`: the content-addressed build, then
 * `cli.js all` from it: a supervisor and its two service processes), on its embedded default, on
 * free ports. Its stdout is read as JSON lines: the supervisor's say which process serves what.
 */
async function startAll(dataDir: string, masterData: string) {
  const child = spawn(process.execPath, ['scripts/start.mjs'], {
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      GATEWAY_PORT: '0',
      LOGS_PORT: '0',
      LOG_LEVEL: 'info',
      GATEWAY_ADMIN_PASSWORD: PASSWORD,
      LOGS_ADMIN_PASSWORD: PASSWORD,
      LOGS_MFA_REQUIRED_PERMISSIONS: 'none',
      GATEWAY_TELEMETRY_INTERVAL: '50ms',
      // Every trace, so that the one proxied call below is in the service map (the default records a tenth).
      GATEWAY_TELEMETRY_SAMPLE_RATIO: '1',
      SERVER_SERVICE_MASTER_DATA: masterData,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const watch = watchLines(child);
  const { lines, exited } = watch;
  // The first start compiles the build before the services listen.
  const listening = await watch.waitFor((line) => line.msg === 'services listening', { timeoutMs: 300_000 });
  const pidOf = (service: string) =>
    lines
      .filter((line) => line.service === service && line.servicePid !== undefined && /^service (started|restarted)$/.test(line.msg))
      .at(-1)!.servicePid as number;
  const ports = listening.services as { logs: number; gateway: number };
  return {
    child,
    lines,
    waitFor: watch.waitFor,
    exited,
    pidOf,
    logs: `http://127.0.0.1:${ports.logs}`,
    gateway: `http://127.0.0.1:${ports.gateway}`,
  };
}

/** The V8 heap options on a process's command line (Linux /proc). */
function nodeOptionsOf(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8')
    .split('\0')
    .filter((arg) => arg.startsWith('--max-semi-space-size'));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function logsAdmin(logs: string) {
  const login = await json(`${logs}/api/login`, { method: 'POST', body: JSON.stringify({ username: 'admin', password: PASSWORD }) });
  assert.equal(login.status, 200);
  return { authorization: `Bearer ${login.body.token.access_token}` };
}

async function json(url: string, init: RequestInit = {}) {
  const response = await fetch(url, { ...init, headers: { 'content-type': 'application/json', ...(init.headers ?? {}) } });
  return { status: response.status, body: await response.json() };
}

describe('npm start: both services as two supervised processes, the gateway watched by the logs service', () => {
  let dataDir: string;
  let system: Awaited<ReturnType<typeof startAll>>;
  let masterData: TestUpstream;
  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'gerbang-e2e-'));
    masterData = await startUpstream(
      (_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end('[{"kode":"31","nama":"DKI Jakarta"}]'),
    );
    system = await startAll(dataDir, masterData.url);
  });
  after(async () => {
    if (system.child.exitCode === null) {
      system.child.kill('SIGTERM');
      await system.exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
    await masterData.close();
  });

  test('the official Elasticsearch client works against a fresh npm start: info, helpers.bulk, search, msearch with aggregations', async () => {
    const logsLogin = await json(`${system.logs}/api/login`, {
      method: 'POST',
      body: JSON.stringify({ username: 'admin', password: PASSWORD }),
    });
    const key = await json(`${system.logs}/api/v1/api-keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${logsLogin.body.token.access_token}` },
      body: JSON.stringify({ name: 'e2e client', permissions: ['logs:read', 'logs:write'] }),
    });
    assert.equal(key.status, 201);
    const es = new ElasticClient({ node: `${system.logs}/api/v1/_elastic`, auth: { apiKey: key.body.encoded as string } });
    assert.match((await es.info()).version.number, /^8\./);
    const now = Date.now();
    const docs = Array.from({ length: 300 }, (_, i) => ({
      id: `e2e-${i}`,
      '@timestamp': new Date(now - i * 1000).toISOString(),
      message: `e2e client ${i}`,
      host: `h${i % 3}`,
    }));
    const shipped = await es.helpers.bulk({ datasource: docs, onDocument: (doc) => ({ create: { _index: 'e2e', _id: doc.id } }) });
    assert.equal(shipped.successful, 300);
    const range = { range: { '@timestamp': { gte: now - 600_000, lte: now, format: 'epoch_millis' } } };
    const found = await es.search({ index: 'e2e', query: { bool: { filter: [range] } }, size: 0, track_total_hits: true });
    assert.deepEqual(found.hits.total, { value: 300, relation: 'eq' });
    const [answer] = (
      await es.msearch({
        searches: [
          { index: 'e2e' },
          {
            query: { bool: { filter: [range] } },
            size: 0,
            aggs: { hosts: { terms: { field: 'host' } }, t: { date_histogram: { field: '@timestamp', fixed_interval: '1m' } } },
          },
        ],
      })
    ).responses as any[];
    assert.deepEqual(
      answer.aggregations.hosts.buckets.map((bucket: { doc_count: number }) => bucket.doc_count),
      [100, 100, 100],
    );
    assert.equal(
      answer.aggregations.t.buckets.reduce((sum: number, bucket: { doc_count: number }) => sum + bucket.doc_count, 0),
      300,
    );
  });

  test('a proxied call shows in the service map as gateway -> master-data', async () => {
    const login = await json(`${system.gateway}/api/v1/auth/login`, {
      method: 'POST',
      body: JSON.stringify({ no_pegawai: 'admin', kata_sandi: PASSWORD }),
    });
    const provinces = await json(`${system.gateway}/api/v1/master-data/provinsi`, { headers: { authorization: login.body.data.token } });
    assert.equal(provinces.status, 200);
    assert.equal(provinces.body[0].nama, 'DKI Jakarta');
    assert.match(String(masterData.seen.at(-1)!.headers.traceparent), /^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
    const logsLogin = await json(`${system.logs}/api/login`, {
      method: 'POST',
      body: JSON.stringify({ username: 'admin', password: PASSWORD }),
    });
    const auth = { authorization: `Bearer ${logsLogin.body.token.access_token}` };
    const edge = await eventually(async () => {
      const map = await json(`${system.logs}/api/v1/apm/service-map`, { headers: auth });
      assert.equal(map.status, 200);
      const found = map.body.edges.find(
        (e: { source: string; target: string }) => e.source === 'gerbang-gateway' && e.target === 'master-data',
      );
      assert.ok(found, JSON.stringify(map.body.edges));
      return found;
    });
    assert.ok(edge.requests >= 1);
    assert.equal(edge.errors, 0);
  });

  test('gateway traffic shows up in log search and the audit trail', async () => {
    const login = await json(`${system.gateway}/api/v1/auth/login`, {
      method: 'POST',
      body: JSON.stringify({ no_pegawai: 'admin', kata_sandi: PASSWORD }),
    });
    assert.equal(login.status, 200);
    const token = login.body.data.token as string;
    const bad = await json(`${system.gateway}/api/v1/auth/login`, {
      method: 'POST',
      body: JSON.stringify({ no_pegawai: 'admin', kata_sandi: 'Wrong#Pass1' }),
    });
    assert.equal(bad.status, 401);
    const created = await json(`${system.gateway}/api/v1/pengguna`, {
      method: 'POST',
      headers: { authorization: token },
      body: JSON.stringify({
        no_pegawai: 'E2E001',
        nama: 'Uji Ujung',
        email: 'e2e@example.go.id',
        kata_sandi: 'Rahasia#123',
        tipe_pegawai: 'pns',
        hak_akses_id: 'pegawai',
      }),
    });
    assert.equal(created.status, 201);

    const logsLogin = await json(`${system.logs}/api/login`, {
      method: 'POST',
      body: JSON.stringify({ username: 'admin', password: PASSWORD }),
    });
    const auth = { authorization: `Bearer ${logsLogin.body.token.access_token}` };
    const range = { from: new Date(Date.now() - 3_600_000).toISOString(), to: new Date(Date.now() + 3_600_000).toISOString() };

    const found = await eventually(async () => {
      const search = await json(`${system.logs}/api/v1/logs/list/paginate`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ query: 'service:gerbang-gateway', timeRange: range, limit: 100 }),
      });
      assert.equal(search.status, 200);
      const messages = search.body.data.map((entry: { message: string }) => entry.message);
      assert.ok(messages.includes('POST /api/v1/pengguna 201'), messages.join(' | '));
      return search.body.data as { message: string; trace_id?: string; attributes: Record<string, unknown> }[];
    });
    const access = found.find((entry) => entry.message === 'POST /api/v1/auth/login 401')!;
    assert.equal(access.attributes['log.type'], 'access');
    assert.match(access.trace_id ?? '', /^[0-9a-f]{32}$/);
    assert.ok(!JSON.stringify(found).includes(PASSWORD), 'no password reaches the logs');

    const audit = await eventually(async () => {
      const search = await json(`${system.logs}/api/v1/log-audit/search?q=gateway.&limit=100`, { headers: auth });
      const actions = search.body.data.map((row: { action: string; outcome: string }) => `${row.action}:${row.outcome}`);
      for (const expected of ['gateway.auth.login:success', 'gateway.auth.login:failure', 'gateway.user.create:success'])
        assert.ok(actions.includes(expected), actions.join(', '));
      return search.body.data;
    });
    assert.ok(audit.every((row: { details: { source: string } }) => row.details.source === 'gateway'));
  });

  test('the dashboards show the gateway: overview, throughput and pipeline status', async () => {
    const gatewayLogin = await json(`${system.gateway}/api/v1/auth/login`, {
      method: 'POST',
      body: JSON.stringify({ no_pegawai: 'admin', kata_sandi: PASSWORD }),
    });
    assert.equal(gatewayLogin.status, 200);
    const logsLogin = await json(`${system.logs}/api/login`, {
      method: 'POST',
      body: JSON.stringify({ username: 'admin', password: PASSWORD }),
    });
    const auth = { authorization: `Bearer ${logsLogin.body.token.access_token}` };
    const range = `from=${new Date(Date.now() - 3_600_000).toISOString()}&to=${new Date(Date.now() + 60_000).toISOString()}`;

    await eventually(async () => {
      const overview = await json(`${system.logs}/api/v1/dashboard/overview?${range}`, { headers: auth });
      assert.equal(overview.status, 200);
      assert.ok(
        overview.body.top_services.some((s: { service: string; count: number }) => s.service === 'gerbang-gateway' && s.count > 0),
        JSON.stringify(overview.body.top_services),
      );
      const throughput = await json(`${system.logs}/api/v1/dashboard/throughput?${range}`, { headers: auth });
      assert.equal(throughput.status, 200);
      assert.ok(
        throughput.body.sources.find((s: { source: string }) => s.source === 'gateway').total > 0,
        'the gateway is a source of its own',
      );
      assert.ok(throughput.body.services.some((s: { service: string }) => s.service === 'gerbang-gateway'));
      const pipeline = await json(`${system.logs}/api/v1/dashboard/pipeline/status`, { headers: auth });
      const gateway = pipeline.body.sources.find((s: { source: string }) => s.source === 'gateway');
      assert.equal(gateway.active, true);
      assert.equal(gateway.status, 'healthy');
    });
  });
  test("the logs service runs with its V8 options (a young generation for batches), the gateway with node's defaults", () => {
    assert.deepEqual(nodeOptionsOf(system.pidOf('logs')), LOGS_NODE_OPTIONS);
    assert.deepEqual(nodeOptionsOf(system.pidOf('gateway')), []);
  });

  test('the gateway killed (SIGKILL): the logs service answers throughout, the gateway comes back on its port by itself', async () => {
    const killed = system.pidOf('gateway');
    const from = system.lines.length;
    process.kill(killed, 'SIGKILL');
    const restarted = system.waitFor((line) => line.service === 'gateway' && line.msg === 'service restarted', { from });
    let back = false;
    void restarted.then(
      () => (back = true),
      () => {},
    );
    let answered = 0;
    while (!back) {
      // Every probe while the gateway is down or starting: the console is unaffected.
      assert.equal((await fetch(`${system.logs}/healthz`)).status, 200);
      answered += 1;
      await tick();
    }
    assert.ok(answered > 0);
    const exit = system.lines.find((line, i) => i >= from && line.service === 'gateway' && line.msg === 'service exited; restarting')!;
    assert.equal(exit.signal, 'SIGKILL');
    assert.equal(exit.servicePid, killed);
    assert.equal(typeof exit.restartInMs, 'number');
    assert.equal((await restarted).port, Number(new URL(system.gateway).port), 'the same port');
    assert.equal(alive(killed), false);
    const login = await json(`${system.gateway}/api/v1/auth/login`, {
      method: 'POST',
      body: JSON.stringify({ no_pegawai: 'admin', kata_sandi: PASSWORD }),
    });
    assert.equal(login.status, 200);
  });

  test('the logs service killed (SIGKILL): the gateway keeps proxying, the logs service comes back, and what the gateway did meanwhile reaches log search', async () => {
    const login = await json(`${system.gateway}/api/v1/auth/login`, {
      method: 'POST',
      body: JSON.stringify({ no_pegawai: 'admin', kata_sandi: PASSWORD }),
    });
    const token = login.body.data.token as string;
    const gatewayPid = system.pidOf('gateway');
    const baseline = footprint(gatewayPid);
    const killed = system.pidOf('logs');
    const from = system.lines.length;
    process.kill(killed, 'SIGKILL');
    await system.waitFor((line) => line.service === 'logs' && line.msg === 'service exited; restarting', { from });
    // The logs service is down now (restarted no sooner than the back-off): the gateway serves on.
    const marker = `/api/v1/master-data/while-logs-down-${Date.now()}`;
    const proxied = await fetch(`${system.gateway}${marker}`, { headers: { authorization: token } });
    assert.equal(proxied.status, 200);
    await proxied.arrayBuffer();
    const restarted = await system.waitFor((line) => line.service === 'logs' && line.msg === 'service restarted', { from });
    assert.equal(restarted.port, Number(new URL(system.logs).port), 'the same port');
    assert.equal(alive(killed), false);
    assert.deepEqual(nodeOptionsOf(system.pidOf('logs')), LOGS_NODE_OPTIONS, 'restarted with its node options');

    const auth = await logsAdmin(system.logs);
    const range = { from: new Date(Date.now() - 3_600_000).toISOString(), to: new Date(Date.now() + 3_600_000).toISOString() };
    await eventually(
      async () => {
        const search = await json(`${system.logs}/api/v1/logs/list/paginate`, {
          method: 'POST',
          headers: auth,
          body: JSON.stringify({ query: 'service:gerbang-gateway', timeRange: range, limit: 100 }),
        });
        assert.equal(search.status, 200);
        const messages = search.body.data.map((entry: { message: string }) => entry.message);
        assert.ok(messages.includes(`GET ${marker} 200`), messages.join(' | '));
      },
      90_000,
      200,
    );
    // The queue drained: the gateway's descriptors and memory are back where they were.
    await settlesBack(gatewayPid, baseline);
  });

  test('SIGTERM to npm start stops both services and exits 0, leaving no process behind', async () => {
    const pids = [system.pidOf('gateway'), system.pidOf('logs')];
    assert.ok(pids.every(alive));
    system.child.kill('SIGTERM');
    assert.equal(await system.exited, 0);
    assert.deepEqual(pids.filter(alive), [], 'no orphan service process');
    const stopped = system.lines.filter((line) => line.msg === 'service stopped').map((line) => `${line.service}:${line.code}`);
    assert.deepEqual(stopped, ['gateway:0', 'logs:0'], 'the gateway first, so its last telemetry reaches the logs service');
  });
});
