#!/usr/bin/env node
// What watching itself costs the gateway ("self-watching stays cheap"): the gateway's
// proxy throughput with its telemetry off (`cli.js gateway` alone) against the same gateway under
// `cli.js all`, shipping its access lines and spans to the logs service beside it. The gateway is
// pinned to CPU 0; the logs service, the upstream and wrk share CPU 1, so the ratio shows what the
// shipping costs the gateway's own core, not what the console's ingestion takes from a shared one.
// Both runs offer the same load (bench/paced.lua: each of the connections waits BENCH_PACE_MS after
// an answer), so the gateway's CPU per request is compared at the same rate: at full speed, the
// console's ingestion on CPU 1 slows wrk, and a gateway serving fewer requests per wakeup spends
// more per request whatever shipping costs. Rounds alternate off/on to spread drift; the median
// ratio is reported. After each "on" run the logs service is asked how many access lines it holds.
//
// Needs: `npm run build` in the repository root; wrk and taskset (Debian: apt-get install -y wrk).
// Options (env): BENCH_DURATION (seconds, default 10), BENCH_ROUNDS (5), BENCH_CONNECTIONS (50),
// BENCH_PACE_MS (10; 0 = full speed), BENCH_SAMPLE_RATIO (GATEWAY_TELEMETRY_SAMPLE_RATIO; unset: the gateway's default, 0.1).
// Diagnosis: BENCH_SINK=null ships to bench/otlp-sink.mjs on CPU 1 instead of the logs service (the
// gateway's own cost of shipping, with nothing else busy); BENCH_NEIGHBOUR=burn keeps CPU 1 busy in
// the "off" runs with bench/cpu-burn.mjs (what a busy neighbour core alone costs the gateway: on a
// VM the two vCPUs may be hyperthreads of one physical core, sharing its execution units and caches).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { HERE, ROOT, childrenOf, fmt, gatewayLogin, pin, run, start, stop, waitForPort, wrk, writeSection } from './lib.mjs';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const PACE_MS = Number(process.env.BENCH_PACE_MS ?? 10);
const SAMPLE_RATIO = process.env.BENCH_SAMPLE_RATIO;
const SAMPLING = SAMPLE_RATIO === undefined ? 'the default span sampling, 0.1' : `span sampling ratio ${SAMPLE_RATIO}`;
process.env.PACE_MS = String(PACE_MS); // read by paced.lua
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const SINK = process.env.BENCH_SINK ?? 'logs';
const NEIGHBOUR = process.env.BENCH_NEIGHBOUR ?? 'none';
const PORTS = { upstream: 9201, gateway: 9203, logs: 9204, sink: 9205 };
const PASSWORD = 'Bench#Passw0rd1';
const tmp = mkdtempSync(join(tmpdir(), 'gerbang-self-watch-'));

const baseEnv = (dataDir) => ({
  ...process.env,
  HOST: '127.0.0.1',
  DATA_DIR: dataDir,
  GATEWAY_PORT: String(PORTS.gateway),
  LOGS_PORT: String(PORTS.logs),
  GATEWAY_ADMIN_PASSWORD: PASSWORD,
  LOGS_ADMIN_PASSWORD: PASSWORD,
  LOGS_MFA_REQUIRED_PERMISSIONS: 'none',
  LOG_LEVEL: 'info',
  SERVER_SERVICE_MASTER_DATA: `http://127.0.0.1:${PORTS.upstream}`,
  // The benchmark's own traffic must not be refused by the console's per-tenant ingestion limit.
  LOGS_INGEST_RATE_PER_TENANT: '1000000',
  ...(SAMPLE_RATIO === undefined ? {} : { GATEWAY_TELEMETRY_SAMPLE_RATIO: SAMPLE_RATIO }),
});

/** Starts the gateway alone (off) or both services (on) and pins them; returns what to stop. */
async function startSystem(shipping, run) {
  const dataDir = join(tmp, `${shipping ? 'on' : 'off'}-${run}`);
  mkdirSync(dataDir, { recursive: true });
  const toSink = shipping && SINK === 'null';
  const command = shipping && !toSink ? 'all' : 'gateway';
  const env = toSink ? { ...baseEnv(dataDir), GATEWAY_TELEMETRY_URL: `http://127.0.0.1:${PORTS.sink}` } : baseEnv(dataDir);
  const child = start(command, process.execPath, [join(ROOT, 'dist/cli.js'), command], { env });
  await waitForPort(PORTS.gateway);
  if (command === 'all') await waitForPort(PORTS.logs);
  const services = childrenOf(child.pid);
  const gatewayPid = services.find((s) => / gateway\b/.test(s.cmdline))?.pid ?? child.pid;
  const logsPid = services.find((s) => / logs\b/.test(s.cmdline))?.pid;
  pin(child.pid, '1');
  pin(gatewayPid, '0');
  if (logsPid) pin(logsPid, '1');
  const neighbour =
    !shipping && NEIGHBOUR === 'burn' ? start('burn', 'taskset', ['-c', '1', process.execPath, join(HERE, 'cpu-burn.mjs')]) : undefined;
  return { child, gatewayPid, separate: logsPid !== undefined, neighbour };
}

/** CPU time (user + system, all threads) a process has used, in milliseconds. */
function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in clock ticks (USER_HZ 100)
}

/** Access lines of the gateway's proxied calls that reached the logs service. */
async function accessLinesShipped() {
  const base = `http://127.0.0.1:${PORTS.logs}`;
  const login = await fetch(`${base}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: PASSWORD }),
  });
  const token = (await login.json()).token.access_token;
  const search = await fetch(`${base}/api/v1/logs/list/paginate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ filters: [{ field: 'log.type', value: 'access' }], limit: 1, trackTotal: true }),
  });
  return (await search.json()).total;
}

async function main() {
  if (!existsSync(join(ROOT, 'dist/cli.js'))) throw new Error('run `npm run build` in the repository root first');
  const upstream = start('upstream', 'taskset', ['-c', '1', process.execPath, join(HERE, 'upstream.mjs'), String(PORTS.upstream)]);
  await waitForPort(PORTS.upstream);
  const sink =
    SINK === 'null' ? start('sink', 'taskset', ['-c', '1', process.execPath, join(HERE, 'otlp-sink.mjs'), String(PORTS.sink)]) : undefined;
  if (sink) await waitForPort(PORTS.sink);
  const url = `http://127.0.0.1:${PORTS.gateway}/api/v1/master-data/1k`;
  const runs = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const shipping of [false, true]) {
      const system = await startSystem(shipping, round);
      const token = await gatewayLogin(PORTS.gateway, PASSWORD);
      const script = PACE_MS > 0 ? 'paced.lua' : undefined;
      wrk(url, { connections: CONNECTIONS, duration: 3, token, cpus: '1', script }); // warm-up
      const cpuBefore = cpuMs(system.gatewayPid);
      const get = wrk(url, { connections: CONNECTIONS, duration: DURATION, token, cpus: '1', script });
      // The gateway's own CPU per request: what shipping costs its core, whatever CPU 1 could give wrk.
      get.cpuUsPerRequest = ((cpuMs(system.gatewayPid) - cpuBefore) * 1000) / get.requests;
      let shipped;
      if (shipping && SINK !== 'null') {
        await delay(3_000); // the last batches (GATEWAY_TELEMETRY_INTERVAL, 1 s) reach the console
        shipped = await accessLinesShipped();
      }
      runs.push({ round, shipping, separate: system.separate, get, shipped });
      if (system.neighbour) await stop(system.neighbour);
      process.stdout.write(
        `round ${round + 1} ${shipping ? 'on ' : 'off'}: ${fmt(get.rps, 0)} req/s p99 ${fmt(get.p99)} ms, gateway ${fmt(get.cpuUsPerRequest, 1)} us CPU/request${shipping ? `, ${shipped} access lines shipped of ${get.requests + '+warm-up'}` : ''}\n`,
      );
      await stop(system.child);
    }
  }
  await stop(upstream);
  if (sink) await stop(sink);

  // The gateway's capacity with shipping on, as a share of off: the inverse ratio of its CPU per request.
  const ratios = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    const [off, on] = [false, true].map((s) => runs.find((r) => r.round === round && r.shipping === s).get.cpuUsPerRequest);
    ratios.push(off / on);
  }
  const median = [...ratios].sort((a, b) => a - b)[Math.floor(ratios.length / 2)];
  const rows = runs.map(
    (r) =>
      `| ${r.round + 1} | ${r.shipping ? `on (${SINK === 'null' ? 'null sink, CPU 1' : r.separate ? 'logs service in its own process, CPU 1' : 'one process'})` : `off (gateway alone${NEIGHBOUR === 'burn' ? ', CPU 1 busy' : ''})`} | ${fmt(r.get.rps, 0)} | ${fmt(r.get.p99)} | ${fmt(r.get.cpuUsPerRequest, 1)} | ${r.get.non2xx} | ${r.shipped ?? '-'} |`,
  );
  const machine = `${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Linux ${release()}`;
  const heading =
    SINK === 'null'
      ? '## Self-watching diagnosis: null sink'
      : NEIGHBOUR === 'burn'
        ? '## Self-watching diagnosis: busy neighbour core'
        : `## Self-watching cost${SAMPLE_RATIO === undefined ? '' : `: span sampling ${SAMPLE_RATIO}`}`;
  const onMeans =
    SINK === 'null'
      ? `\`cli.js gateway\` shipping every access line and the spans of sampled traces (${SAMPLING}) to bench/otlp-sink.mjs on CPU 1, which reads and drops them`
      : `\`cli.js all\`, the gateway shipping every access line and the spans of sampled traces (default batching; ${SAMPLING}) to the logs service`;
  const offMeans =
    NEIGHBOUR === 'burn'
      ? '`cli.js gateway` with no telemetry, CPU 1 kept busy by bench/cpu-burn.mjs'
      : '`cli.js gateway` with no telemetry';
  writeSection(
    heading,
    `${heading}

Run: ${new Date().toISOString()} with \`node bench/self-watch.mjs\` (after \`npm run build\`). Machine: ${machine}
(load average at the end: ${loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}). The gateway proxies a 1 KiB GET (wrk, ${CONNECTIONS}
connections${PACE_MS > 0 ? `, each pausing ${PACE_MS} ms after an answer so that both runs offer the same load` : ', full speed'}; ${DURATION} s after a 3 s warm-up)
pinned to CPU 0; wrk, the upstream and the logs service share CPU 1. "off": ${offMeans}.
"on": ${onMeans}. "shipped": access lines of the run found by a search afterwards.

| round | telemetry | GET req/s | p99 ms | gateway CPU us/request | non-2xx | shipped |
|---|---|---|---|---|---|---|
${rows.join('\n')}

The gateway's capacity with shipping on, as a share of off (its CPU per request off / on, so the
figure does not depend on what CPU 1 could still give wrk and the upstream while the logs service
ingested): ${ratios.map((r) => fmt(r)).join(', ')} (median ${fmt(median)}; target: at least 0.90). Requests per second are
shown for completeness: with shipping on, the logs service's ingestion takes CPU 1 from wrk and the
upstream, which lowers them whatever the gateway costs.

`,
  );
  process.stdout.write(`median on/off ${fmt(median)}; written to docs/benchmarks.md\n`);
}

run(main, () => rmSync(tmp, { recursive: true, force: true }));
