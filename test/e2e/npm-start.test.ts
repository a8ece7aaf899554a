import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';
import { eventually } from '../helpers/eventually.js';
import { startUpstream, type TestUpstream } from '../helpers/upstream.js';

const PASSWORD = 'Admin#Passw0rd';

/** `npm start`'s process (`cli.js all`) from source, on its embedded default, on free ports. */
async function startAll(dataDir: string, masterData: string): Promise<{ child: ChildProcess; gateway: string; logs: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'all'], {
    env: {
      ...process.env, DATA_DIR: dataDir, HOST: '127.0.0.1', GATEWAY_PORT: '0', LOGS_PORT: '0', LOG_LEVEL: 'info',
      GATEWAY_ADMIN_PASSWORD: PASSWORD, LOGS_ADMIN_PASSWORD: PASSWORD, GATEWAY_TELEMETRY_INTERVAL: '50ms',
      SERVER_SERVICE_MASTER_DATA: masterData,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const listening: string[] = [];
  const lines = createInterface({ input: child.stdout! });
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`exited with ${code}`)));
    lines.on('line', (line) => {
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(line);
      if (match) listening.push(match[1]!);
      if (listening.length === 2) resolve();
    });
  });
  lines.removeAllListeners('line');
  child.stdout!.resume();
  // The logs service starts first (the gateway ships to it).
  return { child, logs: listening[0]!, gateway: listening[1]! };
}

async function json(url: string, init: RequestInit = {}) {
  const response = await fetch(url, { ...init, headers: { 'content-type': 'application/json', ...(init.headers ?? {}) } });
  return { status: response.status, body: (await response.json()) as any };
}

describe('npm start: both services, the gateway watched by the logs service', () => {
  let dataDir: string;
  let system: Awaited<ReturnType<typeof startAll>>;
  let masterData: TestUpstream;
  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'gerbang-e2e-'));
    masterData = await startUpstream((_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end('[{"kode":"31","nama":"DKI Jakarta"}]'));
    system = await startAll(dataDir, masterData.url);
  });
  after(async () => {
    system.child.kill('SIGTERM');
    await new Promise((resolve) => system.child.once('exit', resolve));
    rmSync(dataDir, { recursive: true, force: true });
    await masterData.close();
  });

  test('a proxied call shows in the service map as gateway -> master-data', async () => {
    const login = await json(`${system.gateway}/api/v1/auth/login`, { method: 'POST', body: JSON.stringify({ no_pegawai: 'admin', kata_sandi: PASSWORD }) });
    const provinces = await json(`${system.gateway}/api/v1/master-data/provinsi`, { headers: { authorization: login.body.data.token } });
    assert.equal(provinces.status, 200);
    assert.equal(provinces.body[0].nama, 'DKI Jakarta');
    assert.match(String(masterData.seen.at(-1)!.headers.traceparent), /^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
    const logsLogin = await json(`${system.logs}/api/login`, { method: 'POST', body: JSON.stringify({ username: 'admin', password: PASSWORD }) });
    const auth = { authorization: `Bearer ${logsLogin.body.token.access_token}` };
    const edge = await eventually(async () => {
      const map = await json(`${system.logs}/api/v1/apm/service-map`, { headers: auth });
      assert.equal(map.status, 200);
      const found = map.body.edges.find((e: { source: string; target: string }) => e.source === 'gerbang-gateway' && e.target === 'master-data');
      assert.ok(found, JSON.stringify(map.body.edges));
      return found;
    });
    assert.ok(edge.requests >= 1);
    assert.equal(edge.errors, 0);
  });

  test('gateway traffic shows up in log search and the audit trail', async () => {
    const login = await json(`${system.gateway}/api/v1/auth/login`, { method: 'POST', body: JSON.stringify({ no_pegawai: 'admin', kata_sandi: PASSWORD }) });
    assert.equal(login.status, 200);
    const token = login.body.data.token as string;
    const bad = await json(`${system.gateway}/api/v1/auth/login`, { method: 'POST', body: JSON.stringify({ no_pegawai: 'admin', kata_sandi: 'Wrong#Pass1' }) });
    assert.equal(bad.status, 401);
    const created = await json(`${system.gateway}/api/v1/pengguna`, {
      method: 'POST', headers: { authorization: token },
      body: JSON.stringify({ no_pegawai: 'E2E001', nama: 'Uji Ujung', email: 'e2e@example.go.id', kata_sandi: 'Rahasia#123', tipe_pegawai: 'pns', hak_akses_id: 'pegawai' }),
    });
    assert.equal(created.status, 201);

    const logsLogin = await json(`${system.logs}/api/login`, { method: 'POST', body: JSON.stringify({ username: 'admin', password: PASSWORD }) });
    const auth = { authorization: `Bearer ${logsLogin.body.token.access_token}` };
    const range = { from: new Date(Date.now() - 3_600_000).toISOString(), to: new Date(Date.now() + 3_600_000).toISOString() };

    const found = await eventually(async () => {
      const search = await json(`${system.logs}/api/v1/logs/list/paginate`, {
        method: 'POST', headers: auth, body: JSON.stringify({ query: 'service:gerbang-gateway', timeRange: range, limit: 100 }),
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
      for (const expected of ['gateway.auth.login:success', 'gateway.auth.login:failure', 'gateway.user.create:success']) assert.ok(actions.includes(expected), actions.join(', '));
      return search.body.data;
    });
    assert.ok(audit.every((row: { details: { source: string } }) => row.details.source === 'gateway'));
  });

  test('the dashboards show the gateway: overview, throughput and pipeline status', async () => {
    const gatewayLogin = await json(`${system.gateway}/api/v1/auth/login`, { method: 'POST', body: JSON.stringify({ no_pegawai: 'admin', kata_sandi: PASSWORD }) });
    assert.equal(gatewayLogin.status, 200);
    const logsLogin = await json(`${system.logs}/api/login`, { method: 'POST', body: JSON.stringify({ username: 'admin', password: PASSWORD }) });
    const auth = { authorization: `Bearer ${logsLogin.body.token.access_token}` };
    const range = `from=${new Date(Date.now() - 3_600_000).toISOString()}&to=${new Date(Date.now() + 60_000).toISOString()}`;

    await eventually(async () => {
      const overview = await json(`${system.logs}/api/v1/dashboard/overview?${range}`, { headers: auth });
      assert.equal(overview.status, 200);
      assert.ok(overview.body.top_services.some((s: { service: string; count: number }) => s.service === 'gerbang-gateway' && s.count > 0), JSON.stringify(overview.body.top_services));
      const throughput = await json(`${system.logs}/api/v1/dashboard/throughput?${range}`, { headers: auth });
      assert.equal(throughput.status, 200);
      assert.ok(throughput.body.sources.find((s: { source: string }) => s.source === 'gateway').total > 0, 'the gateway is a source of its own');
      assert.ok(throughput.body.services.some((s: { service: string }) => s.service === 'gerbang-gateway'));
      const pipeline = await json(`${system.logs}/api/v1/dashboard/pipeline/status`, { headers: auth });
      const gateway = pipeline.body.sources.find((s: { source: string }) => s.source === 'gateway');
      assert.equal(gateway.active, true);
      assert.equal(gateway.status, 'healthy');
    });
  });
});
