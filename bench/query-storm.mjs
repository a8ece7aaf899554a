#!/usr/bin/env node
// A storm of expensive log searches against the gateway's latency (the requirement: "a storm of expensive
// queries leaves the gateway's latency untouched"). `cli.js all` (gateway and logs service as
// separate supervised processes) on SQLite, a store of STORM_ENTRIES entries from the last hour;
// the gateway proxies a 1 KiB GET at a fixed pace (wrk + bench/paced.lua, the same offered load in
// every phase) while STORM_CLIENTS loops send the search the docs call expensive: every entry of the
// hour sorted by an attribute. Phases: quiet, storm with the processes where the OS puts them, and
// storm with the gateway pinned to CPU 0 and the logs service to CPU 1 (services on cores of their
// own, as in production). The searches run in the logs service's read pool (LOGS_SEARCH_WORKERS
// threads), within LOGS_SEARCH_TIMEOUT; what they cost the gateway is what they take of its core.
//
// Needs: `npm run build`, wrk, taskset. Options (env): STORM_ENTRIES (200000), STORM_CLIENTS (8),
// BENCH_DURATION (10 s per phase), BENCH_CONNECTIONS (50), BENCH_PACE_MS (10).
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { HERE, ROOT, childrenOf, fmt, gatewayLogin, pin, run, start, stop, waitForPort, wrkAsync, writeSection } from './lib.mjs';

const ENTRIES = Number(process.env.STORM_ENTRIES ?? 200_000);
const CLIENTS = Number(process.env.STORM_CLIENTS ?? 8);
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const PACE_MS = Number(process.env.BENCH_PACE_MS ?? 10);
process.env.PACE_MS = String(PACE_MS); // read by paced.lua
const PORTS = { upstream: 9401, gateway: 9403, logs: 9404 };
const PASSWORD = 'Storm#Passw0rd1';
const tmp = mkdtempSync(join(tmpdir(), 'gerbang-storm-'));
const logsUrl = `http://127.0.0.1:${PORTS.logs}`;

async function logsToken() {
  const response = await fetch(`${logsUrl}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: PASSWORD }),
  });
  return (await response.json()).token.access_token;
}

/** ENTRIES entries spread over the last hour, with a high-cardinality `user` attribute to sort by. */
async function seed() {
  const basic = `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`;
  const now = Date.now();
  const levels = ['info', 'warn', 'error', 'debug'];
  for (let sent = 0; sent < ENTRIES; sent += 5_000) {
    let body = '';
    for (let i = sent; i < Math.min(ENTRIES, sent + 5_000); i++) {
      const doc = {
        '@timestamp': new Date(now - 3_500_000 + Math.floor((i / ENTRIES) * 3_400_000)).toISOString(),
        message: `request ${i} from user u${(i * 7919) % 100_003} took ${i % 997} ms`,
        'log.level': levels[i % 4],
        service: `svc-${i % 20}`,
        user: `u${(i * 7919) % 100_003}`,
      };
      body += `{"index":{}}\n${JSON.stringify(doc)}\n`;
    }
    const response = await fetch(`${logsUrl}/api/v1/_elastic/_bulk`, {
      method: 'POST',
      headers: { authorization: basic, 'content-type': 'application/x-ndjson' },
      body,
    });
    if (!response.ok) throw new Error(`seeding failed: ${response.status} ${await response.text()}`);
  }
}

/** Loops sending the expensive search until `signal` aborts; counts answers by status. */
function storm(token, signal) {
  const counts = new Map();
  const body = JSON.stringify({
    timeRange: { from: new Date(Date.now() - 3_600_000).toISOString(), to: new Date().toISOString() },
    sort: { field: 'user', order: 'asc' },
    limit: 50,
  });
  const loop = async () => {
    while (!signal.aborted) {
      const status = await fetch(`${logsUrl}/api/v1/logs/list/paginate`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body,
        signal,
      }).then(
        async (response) => (await response.arrayBuffer(), response.status),
        () => 'aborted',
      );
      if (status !== 'aborted') counts.set(status, (counts.get(status) ?? 0) + 1);
    }
  };
  return Promise.all(Array.from({ length: CLIENTS }, loop)).then(() => counts);
}

async function main() {
  const upstream = start('upstream', process.execPath, [join(HERE, 'upstream.mjs'), String(PORTS.upstream)]);
  const system = start('all', process.execPath, [join(ROOT, 'dist/cli.js'), 'all'], {
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      DATA_DIR: tmp,
      GATEWAY_PORT: String(PORTS.gateway),
      LOGS_PORT: String(PORTS.logs),
      GATEWAY_ADMIN_PASSWORD: PASSWORD,
      LOGS_ADMIN_PASSWORD: PASSWORD,
      LOGS_MFA_REQUIRED_PERMISSIONS: 'none',
      LOG_LEVEL: 'warn',
      SERVER_SERVICE_MASTER_DATA: `http://127.0.0.1:${PORTS.upstream}`,
      LOGS_INGEST_RATE_PER_TENANT: '1000000',
      LOGS_API_RATE_PER_USER: '1000000',
    },
  });
  await waitForPort(PORTS.upstream);
  await waitForPort(PORTS.gateway);
  await waitForPort(PORTS.logs);
  const services = childrenOf(system.pid);
  const gatewayPid = services.find((s) => / gateway\b/.test(s.cmdline))?.pid;
  const logsPid = services.find((s) => / logs\b/.test(s.cmdline))?.pid;
  if (!gatewayPid || !logsPid) throw new Error('expected the gateway and the logs service as separate processes');
  await seed();
  const token = await gatewayLogin(PORTS.gateway, PASSWORD);
  const url = `http://127.0.0.1:${PORTS.gateway}/api/v1/master-data/1k`;
  const measure = () =>
    wrkAsync(url, { connections: CONNECTIONS, duration: DURATION, token, script: PACE_MS > 0 ? 'paced.lua' : undefined });
  await measure(); // warm-up

  const phases = [];
  const phase = async (name, withStorm) => {
    const stopStorm = new AbortController();
    const searches = withStorm ? storm(await logsToken(), stopStorm.signal) : Promise.resolve(new Map());
    const result = await measure();
    stopStorm.abort();
    phases.push({ name, result, searches: await searches });
    process.stdout.write(`${name}: ${fmt(result.rps, 0)} req/s p50 ${fmt(result.p50)} ms p99 ${fmt(result.p99)} ms\n`);
  };
  await phase('quiet', false);
  await phase('storm, processes unpinned', true);
  pin(gatewayPid, '0');
  pin(logsPid, '1');
  pin(upstream.pid, '1');
  await phase('quiet, gateway on CPU 0, the rest on CPU 1', false);
  await phase('storm, gateway on CPU 0, the rest on CPU 1', true);
  await stop(system);
  await stop(upstream);

  const machine = `${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Linux ${release()}`;
  const rows = phases.map(({ name, result, searches }) => {
    const answered = [...searches.entries()].map(([status, n]) => `${n}× ${status}`).join(', ') || '-';
    return `| ${name} | ${fmt(result.rps, 0)} | ${fmt(result.p50)} | ${fmt(result.p99)} | ${result.non2xx} | ${answered} |`;
  });
  writeSection(
    '## Query storm',
    `## Query storm

Run: ${new Date().toISOString()} with \`node bench/query-storm.mjs\` (after \`npm run build\`). Machine: ${machine}
(load average at the end: ${loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}). \`cli.js all\` on SQLite with ${ENTRIES} log entries from
the last hour; the gateway proxies a 1 KiB GET (wrk, ${CONNECTIONS} connections, each pausing ${PACE_MS} ms after an answer,
${DURATION} s per phase) while ${CLIENTS} clients loop on the expensive search of docs/log-search.md (every entry of the
hour sorted by the \`user\` attribute). Default \`LOGS_SEARCH_WORKERS\` and \`LOGS_SEARCH_TIMEOUT\`.

| phase | gateway req/s | p50 ms | p99 ms | non-2xx | searches answered |
|---|---|---|---|---|---|
${rows.join('\n')}

`,
  );
}

run(main, () => rmSync(tmp, { recursive: true, force: true }));
