#!/usr/bin/env node
// `npm run bench:proxy`: the gateway side by side with nginx, Caddy 2 and Express +
// http-proxy-middleware, as issue 43 measures it. Every proxy runs on CPU 0 (one process: nginx
// `worker_processes 1`, Caddy with one CPU, so GOMAXPROCS=1; the gateway's own process; Express);
// the upstream, wrk and, for the gateway, `cli.js all`'s supervisor and logs service on CPU 1. The
// gateway runs as `npm start` runs it (`cli.js all` from the build: the logs service beside it) with
// the defaults: every request's token checked, access log at info, metrics, telemetry shipped to
// the logs service with span sampling 0.1. nginx and Caddy write an access log to a file.
// wrk: 1 thread, BENCH_CONNECTIONS (50) connections, a 3 s warm-up then BENCH_DURATION (10) s of a
// 1 KiB GET, and as long of a POST with a 1 KiB JSON body. Each proxy's CPU per request is read from
// /proc. BENCH_ROUNDS (3) consecutive runs of all four; a fresh upstream for every measurement.
//
// Targets (issue 43): at least 1.0x Caddy and 0.40x nginx, GET and POST, and a p99 at most twice
// nginx's, in every run. The node floor (bench/node-floor.mjs: node:http and undici relaying, nothing
// else) runs beside them as the ceiling of any Node proxy here; it is no peer and has no verdict.
// Writes bench/results/proxy-compare-<time>.md; with BENCH_RECORD=1 (a quiet machine) also the
// section "## Proxy: side by side (issue 43)" of docs/benchmarks.md.
//
// BENCH_GATEWAY_ENV (KEY=VALUE,...): settings for the gateway's `cli.js all`, for A/B runs;
// BENCH_ONLY (names, e.g. `gateway,node floor`): only those targets, their lines printed.
// Needs: `npm run build`, `cd bench && npm install`, nginx, caddy, wrk and taskset.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import {
  HERE,
  ROOT,
  childrenOf,
  cpuMs,
  fmt,
  gatewayLogin,
  pin,
  run,
  start,
  stop,
  versionOf,
  waitForPort,
  wrk as wrkRun,
  writeSection,
} from './lib.mjs';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const RECORD = process.env.BENCH_RECORD === '1';
/** Extra KEY=VALUE,... for the gateway's `cli.js all` (A/B runs of a setting; never with BENCH_RECORD). */
const GATEWAY_ENV = Object.fromEntries(
  (process.env.BENCH_GATEWAY_ENV ?? '')
    .split(',')
    .filter(Boolean)
    .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
);
if (RECORD && Object.keys(GATEWAY_ENV).length > 0) throw new Error('BENCH_RECORD=1 records the defaults: unset BENCH_GATEWAY_ENV');
/** BENCH_ONLY=gateway[,nginx,...]: measure these targets only and print their lines (no table, no ratios). */
const ONLY = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',')) : undefined;
if (RECORD && ONLY) throw new Error('BENCH_RECORD=1 records every target: unset BENCH_ONLY');
const PORTS = { upstream: 9601, nginx: 9602, caddy: 9603, gateway: 9604, logs: 9605, express: 9606, floor: 9607 };
const PASSWORD = 'Bench#Passw0rd1';
const PREFIX = '/api/v1/master-data';
const tmp = mkdtempSync(join(tmpdir(), 'gerbang-compare-'));
const upstreamUrl = `http://127.0.0.1:${PORTS.upstream}`;

function nginxConfig() {
  const user = process.getuid?.() === 0 ? 'user root;\n' : '';
  const dir = join(tmp, 'nginx');
  mkdirSync(dir, { recursive: true });
  return `${user}worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
  access_log ${dir}/access.log combined buffer=64k;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  upstream backend { server 127.0.0.1:${PORTS.upstream}; keepalive 64; }
  server {
    listen 127.0.0.1:${PORTS.nginx};
    location ${PREFIX}/ {
      proxy_pass http://backend/;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header X-Forwarded-For $remote_addr;
      proxy_request_buffering off;
    }
  }
}
`;
}

function caddyConfig() {
  const dir = join(tmp, 'caddy');
  mkdirSync(dir, { recursive: true });
  return `{
  admin off
  auto_https off
}
http://127.0.0.1:${PORTS.caddy} {
  log {
    output file ${dir}/access.log
  }
  handle_path ${PREFIX}/* {
    reverse_proxy 127.0.0.1:${PORTS.upstream}
  }
}
`;
}

/** Each target: how to start it on CPU 0, and the process whose CPU is its cost. */
const TARGETS = [
  {
    name: 'nginx',
    async start() {
      writeFileSync(join(tmp, 'nginx.conf'), nginxConfig());
      const child = start('nginx', 'taskset', ['-c', '0', 'nginx', '-p', tmp, '-c', join(tmp, 'nginx.conf'), '-g', 'daemon off;']);
      await waitForPort(PORTS.nginx);
      // The master and its worker: the worker does the work, both are counted.
      return { child, pids: [child.pid, ...childrenOf(child.pid).map((c) => c.pid)], port: PORTS.nginx };
    },
  },
  {
    name: 'caddy',
    async start() {
      writeFileSync(join(tmp, 'Caddyfile'), caddyConfig());
      const child = start('caddy', 'taskset', ['-c', '0', 'caddy', 'run', '--config', join(tmp, 'Caddyfile'), '--adapter', 'caddyfile'], {
        env: { ...process.env, XDG_DATA_HOME: join(tmp, 'caddy-data'), XDG_CONFIG_HOME: join(tmp, 'caddy-config') },
      });
      await waitForPort(PORTS.caddy);
      return { child, pids: [child.pid], port: PORTS.caddy };
    },
  },
  {
    name: 'gateway',
    async start(round) {
      const dataDir = join(tmp, `gateway-${round}`);
      mkdirSync(dataDir, { recursive: true });
      const child = start('cli all', process.execPath, [join(ROOT, 'dist/cli.js'), 'all'], {
        env: {
          ...process.env,
          HOST: '127.0.0.1',
          DATA_DIR: dataDir,
          GATEWAY_PORT: String(PORTS.gateway),
          LOGS_PORT: String(PORTS.logs),
          GATEWAY_ADMIN_PASSWORD: PASSWORD,
          LOGS_ADMIN_PASSWORD: PASSWORD,
          LOG_LEVEL: 'info',
          GATEWAY_WORKERS: '1',
          SERVER_SERVICE_MASTER_DATA: upstreamUrl,
          // The benchmark's own traffic must not be refused by the logs service's per-tenant limit.
          LOGS_INGEST_RATE_PER_TENANT: '1000000',
          ...GATEWAY_ENV,
        },
      });
      await waitForPort(PORTS.gateway);
      await waitForPort(PORTS.logs);
      const services = childrenOf(child.pid);
      const gatewayPid = services.find((s) => / gateway\b/.test(s.cmdline))?.pid;
      if (!gatewayPid) throw new Error('no gateway process under cli.js all');
      pin(child.pid, '1');
      for (const s of services) pin(s.pid, s.pid === gatewayPid ? '0' : '1');
      const logsPid = services.find((s) => / logs\b/.test(s.cmdline))?.pid;
      return { child, pids: [gatewayPid], logsPid, port: PORTS.gateway, token: await gatewayLogin(PORTS.gateway, PASSWORD) };
    },
  },
  {
    // Not a peer: bench/node-floor.mjs, a bare node:http server relaying with undici and doing
    // nothing else, is what relaying alone costs in Node here: the ceiling of any Node proxy.
    name: 'node floor',
    async start() {
      const child = start('node floor', 'taskset', [
        '-c',
        '0',
        process.execPath,
        join(HERE, 'node-floor.mjs'),
        String(PORTS.floor),
        upstreamUrl,
      ]);
      await waitForPort(PORTS.floor);
      return { child, pids: [child.pid], port: PORTS.floor };
    },
  },
  {
    name: 'express + http-proxy-middleware',
    async start() {
      const child = start('express', 'taskset', [
        '-c',
        '0',
        process.execPath,
        join(HERE, 'express-proxy.mjs'),
        String(PORTS.express),
        upstreamUrl,
      ]);
      await waitForPort(PORTS.express);
      return { child, pids: [child.pid], port: PORTS.express };
    },
  },
];

const wrk = (url, options) => wrkRun(url, { connections: CONNECTIONS, cpus: '1', ...options });
const cpuOf = (pids) => pids.reduce((sum, pid) => sum + cpuMs(pid), 0);

/** CPU 1's busy and total time so far (/proc/stat, clock ticks): how loaded the other core is. */
function cpu1Ticks() {
  const fields = /^cpu1 (.*)$/m.exec(readFileSync('/proc/stat', 'utf8'))[1].trim().split(/\s+/).map(Number);
  const idle = fields[3] + fields[4];
  const total = fields.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

async function measure(target, round) {
  const upstream = start('upstream', 'taskset', ['-c', '1', process.execPath, join(HERE, 'upstream.mjs'), String(PORTS.upstream)]);
  await waitForPort(PORTS.upstream);
  const proxy = await target.start(round);
  const url = `http://127.0.0.1:${proxy.port}${PREFIX}/1k`;
  // Before measuring: the GET is answered whole and the POST's body reaches the upstream whole.
  const headers = { 'content-type': 'application/json', ...(proxy.token ? { authorization: proxy.token } : {}) };
  const got = await fetch(url, { headers });
  const size = (await got.arrayBuffer()).byteLength;
  if (got.status !== 200 || size !== 1024) throw new Error(`${target.name}: GET answered ${got.status} with ${size} bytes`);
  const body = JSON.stringify({ data: 'x'.repeat(1024 - 11) });
  const posted = await fetch(url, { method: 'POST', headers, body });
  const received = posted.status === 200 ? (await posted.json()).received : undefined;
  if (received !== body.length) throw new Error(`${target.name}: POST answered ${posted.status}, the upstream got ${received} bytes`);
  wrk(url, { token: proxy.token, duration: 3 }); // warm-up: JIT, pools
  const result = {};
  for (const [method, script] of [
    ['GET', undefined],
    ['POST', 'post-1k.lua'],
  ]) {
    const before = cpuOf(proxy.pids);
    const logsBefore = proxy.logsPid ? cpuMs(proxy.logsPid) : 0;
    const other = cpu1Ticks();
    const r = wrk(url, { token: proxy.token, duration: DURATION, script });
    r.cpuUs = ((cpuOf(proxy.pids) - before) * 1000) / r.requests;
    const otherAfter = cpu1Ticks();
    r.cpu1Busy = (otherAfter.busy - other.busy) / (otherAfter.total - other.total);
    r.logsUs = proxy.logsPid ? ((cpuMs(proxy.logsPid) - logsBefore) * 1000) / r.requests : undefined;
    result[method] = r;
  }
  await stop(proxy.child);
  await stop(upstream);
  process.stdout.write(
    `run ${round}, ${target.name}: ${['GET', 'POST'].map((m) => `${m} ${fmt(result[m].rps, 0)} req/s p99 ${fmt(result[m].p99)} ms ${fmt(result[m].cpuUs, 1)} µs CPU, CPU 1 ${fmt(result[m].cpu1Busy * 100, 0)} % busy${result[m].logsUs === undefined ? '' : `, logs service ${fmt(result[m].logsUs, 1)} µs/req`}`).join(' | ')}\n`,
  );
  return result;
}

async function main() {
  if (!existsSync(join(ROOT, 'dist/cli.js'))) throw new Error('run `npm run build` in the repository root first');
  const runs = [];
  for (let round = 1; round <= ROUNDS; round += 1) {
    const results = new Map();
    for (const target of TARGETS) if (!ONLY || ONLY.has(target.name)) results.set(target.name, await measure(target, round));
    runs.push(results);
  }
  if (ONLY) return;
  const rows = [];
  const ratioRows = [];
  const verdicts = [];
  runs.forEach((results, i) => {
    for (const [name, r] of results) {
      const failures = [r.GET, r.POST].map((x) => x.non2xx + (x.errors ? ` (${x.errors})` : '')).join(' / ');
      rows.push(
        `| ${i + 1} | ${name} | ${fmt(r.GET.rps, 0)} | ${fmt(r.GET.p99)} | ${fmt(r.GET.cpuUs, 1)} | ${fmt(r.POST.rps, 0)} | ${fmt(r.POST.p99)} | ${fmt(r.POST.cpuUs, 1)} | ${failures} | ${fmt(r.GET.cpu1Busy * 100, 0)} % / ${fmt(r.POST.cpu1Busy * 100, 0)} % | ${r.GET.logsUs === undefined ? '–' : `${fmt(r.GET.logsUs, 1)} / ${fmt(r.POST.logsUs, 1)}`} |`,
      );
    }
    const gateway = results.get('gateway');
    const [nginx, caddy, express, floor] = ['nginx', 'caddy', 'express + http-proxy-middleware', 'node floor'].map((n) => results.get(n));
    const ratio = (method, peer) => gateway[method].rps / peer[method].rps;
    ratioRows.push(
      `| ${i + 1} | ${['GET', 'POST'].map((m) => [nginx, caddy, express].map((p) => `${fmt(ratio(m, p))}x`).join(' | ')).join(' | ')} | ${['GET', 'POST'].map((m) => `${fmt(gateway[m].p99 / nginx[m].p99)}x`).join(' | ')} | ${['GET', 'POST'].map((m) => `${fmt(floor[m].rps / nginx[m].rps)}x`).join(' | ')} |`,
    );
    const met = ['GET', 'POST'].every((m) => ratio(m, caddy) >= 1 && ratio(m, nginx) >= 0.4 && gateway[m].p99 <= 2 * nginx[m].p99);
    verdicts.push(met);
  });
  const machine = `${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Linux ${release()}`;
  const version = (command) => execFileSync('sh', ['-c', `${command} 2>&1 | head -1`], { encoding: 'utf8' }).trim();
  const heading = '## Proxy: side by side (issue 43)';
  const section = `${heading}

Run: ${new Date().toISOString()} with \`npm run bench:proxy\` (bench/proxy-compare.mjs, after \`npm run build\`).
Machine: ${machine} (load average at the end: ${loadavg()
    .map((n) => n.toFixed(2))
    .join(' ')}). Each proxy on CPU 0 as one process; upstream, wrk (1 thread, ${CONNECTIONS} connections,
${DURATION} s after a 3 s warm-up) and, for the gateway, \`cli.js all\`'s logs service on CPU 1. The gateway as
\`npm start\` runs it, with the defaults: token checked on every request, access log at info, metrics,
telemetry to the logs service (span sampling 0.1). nginx and Caddy write access logs to files. GET: a
1 KiB answer; POST: a 1 KiB JSON body. CPU: the proxy's own, from /proc, per request; CPU 1 busy:
the other core's share of busy time during the run (wrk, the upstream and, for the gateway, the logs
service: at 100 % the proxy waits on them); logs service: its CPU per proxied request (ingesting the
gateway's access records and spans).
Versions: Node ${process.version}; ${version('nginx -v')}; Caddy ${version('caddy version')}; ${version('wrk -v')};
undici ${versionOf('undici')}; express ${versionOf('express', HERE)}, http-proxy-middleware ${versionOf('http-proxy-middleware', HERE)}.

| run | target | GET req/s | GET p99 ms | GET µs CPU/req | POST req/s | POST p99 ms | POST µs CPU/req | non-2xx GET / POST | CPU 1 busy GET / POST | logs service µs/req GET / POST |
|---|---|---|---|---|---|---|---|---|---|---|
${rows.join('\n')}

| run | vs nginx GET | vs Caddy GET | vs Express GET | vs nginx POST | vs Caddy POST | vs Express POST | p99 / nginx's GET | p99 / nginx's POST | node floor vs nginx GET | node floor vs nginx POST |
|---|---|---|---|---|---|---|---|---|---|---|
${ratioRows.join('\n')}

Targets (issue 43): at least 1.0x Caddy and 0.40x nginx, GET and POST, p99 at most 2x nginx's.
${verdicts.map((met, i) => `- run ${i + 1}: ${met ? 'met' : 'not met'}`).join('\n')}
- ${verdicts.every(Boolean) ? `met in all ${ROUNDS} consecutive runs` : `not met in every one of ${ROUNDS} consecutive runs`}.

`;
  mkdirSync(join(HERE, 'results'), { recursive: true });
  const file = join(HERE, 'results', `proxy-compare-${new Date().toISOString().replace(/[:.]/g, '-')}.md`);
  writeFileSync(file, section);
  process.stdout.write(`\n${section}written to ${file}\n`);
  if (RECORD) {
    writeSection(heading, section);
    process.stdout.write('and to docs/benchmarks.md\n');
  }
}

run(main, () => rmSync(tmp, { recursive: true, force: true }));
