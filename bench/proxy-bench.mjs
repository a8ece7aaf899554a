#!/usr/bin/env node
// Proxy benchmark, on loopback, side by side in one run:
//   the upstream hit directly, nginx (keepalive to the upstream), the gateway (token and session
//   check included; once with its access log on, once at LOG_LEVEL=warn), Express +
//   http-proxy-middleware, a bare Fastify + @fastify/reply-from peer (fastify-peer.mjs), and the
//   floor for any Node proxy: node:http + undici Pool.dispatch (node-floor.mjs). wrk drives each
//   with 50 connections: a 1 KiB GET and a 10 KiB POST.
// Two rounds: every proxy as one process, then nginx, the gateway, Express and the floor with one
// worker per core (nginx `worker_processes auto`, GATEWAY_WORKERS=auto, cluster.mjs for the others).
// Writes the setup and the numbers to docs/benchmarks.md: it replaces only the lines from
// "## Proxy" up to (not including) the next line starting with "## ". The reading of the numbers
// lives in a section of its own ("## Proxy: reading"), written by hand and never overwritten.
//
// Needs: `npm run build` in the repository root, `npm install` here, and nginx and wrk
// (Debian: apt-get install -y nginx wrk).
// Options (env): BENCH_DURATION (seconds, default 10), BENCH_CONNECTIONS (50),
// BENCH_PROFILE=1 (run the gateway with --cpu-prof; profiles land in bench/profiles/).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { availableParallelism, cpus, totalmem, tmpdir, release } from 'node:os';
import { join } from 'node:path';
import { HERE, ROOT, fmt, gatewayLogin, run, start, stop, stopAll, versionOf, waitForPort, wrk as wrkRun, writeSection } from './lib.mjs';
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const PROFILE = process.env.BENCH_PROFILE === '1';
const PORTS = {
  upstream: 9101,
  nginx: 9102,
  gateway: 9103,
  gatewayQuiet: 9104,
  express: 9105,
  replyFrom: 9106,
  nodeFloor: 9107,
  nginxPerCore: 9112,
  gatewayPerCore: 9113,
  expressPerCore: 9115,
  nodeFloorPerCore: 9117,
};
const CORES = availableParallelism();
const ROUNDS = { single: 'one process each', perCore: `one worker per core (${CORES})` };
const PASSWORD = 'Bench#Passw0rd1';

const tmp = mkdtempSync(join(tmpdir(), 'gerbang-bench-'));

const wrk = (url, { post = false, token, duration = DURATION } = {}) =>
  wrkRun(url, { connections: CONNECTIONS, duration, token, script: post ? 'post-10k.lua' : undefined });

function nginxConfig(name, workers, port) {
  const root = process.getuid?.() === 0 ? 'user root;\n' : '';
  const dir = join(tmp, name);
  mkdirSync(dir, { recursive: true });
  return `${root}worker_processes ${workers};
pid ${dir}/nginx.pid;
error_log ${dir}/nginx-error.log warn;
events { worker_connections 4096; }
http {
  access_log ${dir}/nginx-access.log combined buffer=64k;
  client_body_temp_path ${dir}/nginx-body;
  proxy_temp_path ${dir}/nginx-proxy;
  fastcgi_temp_path ${dir}/nginx-fastcgi;
  uwsgi_temp_path ${dir}/nginx-uwsgi;
  scgi_temp_path ${dir}/nginx-scgi;
  upstream backend { server 127.0.0.1:${PORTS.upstream}; keepalive 64; }
  server {
    listen 127.0.0.1:${port};
    location /api/v1/master-data/ {
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

async function startGateway(port, logLevel, label, workers = '1') {
  const dataDir = join(tmp, `gateway-${port}`);
  mkdirSync(dataDir, { recursive: true });
  const nodeArgs = PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${join(HERE, 'profiles')}`, `--cpu-prof-name=${label}.cpuprofile`] : [];
  const child = start(label, process.execPath, [...nodeArgs, join(ROOT, 'dist/cli.js'), 'gateway'], {
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      GATEWAY_PORT: String(port),
      DATA_DIR: dataDir,
      GATEWAY_ADMIN_PASSWORD: PASSWORD,
      LOG_LEVEL: logLevel,
      GATEWAY_WORKERS: workers,
      SERVER_SERVICE_MASTER_DATA: `http://127.0.0.1:${PORTS.upstream}`,
    },
  });
  await waitForPort(port);
  const token = await gatewayLogin(port, PASSWORD);
  return { child, token };
}

// Before measuring: the target answers the GET and relays the whole POST body (the upstream says
// how many bytes it got), so no row is fast because it drops the body.
async function checkRelay(name, url, token) {
  const headers = { 'content-type': 'application/json', ...(token ? { authorization: token } : {}) };
  const get = await fetch(url('/1k'), { headers });
  const got = (await get.arrayBuffer()).byteLength;
  if (get.status !== 200 || got !== 1024) throw new Error(`${name}: GET /1k answered ${get.status} with ${got} bytes`);
  const body = JSON.stringify({ data: 'x'.repeat(10240 - 11) });
  const post = await fetch(url('/10k'), { method: 'POST', headers, body });
  const received = post.status === 200 ? (await post.json()).received : undefined;
  if (received !== body.length)
    throw new Error(`${name}: POST /10k answered ${post.status}, the upstream got ${received} of ${body.length} bytes`);
}

async function main() {
  if (!existsSync(join(ROOT, 'dist/cli.js'))) throw new Error('run `npm run build` in the repository root first');
  const upstreamUrl = `http://127.0.0.1:${PORTS.upstream}`;
  // A fresh upstream for every target: one that had served the whole run slowed down towards its
  // end (a reordered run showed it), which penalised whatever was measured last.
  const startUpstream = async () => {
    const child = start('upstream', process.execPath, [join(HERE, 'upstream.mjs'), String(PORTS.upstream)]);
    await waitForPort(PORTS.upstream);
    return child;
  };
  for (const [name, workers, port] of [
    ['nginx', 1, PORTS.nginx],
    ['nginx-per-core', 'auto', PORTS.nginxPerCore],
  ]) {
    writeFileSync(join(tmp, `${name}.conf`), nginxConfig(name, workers, port));
    start(name, 'nginx', ['-p', tmp, '-c', join(tmp, `${name}.conf`), '-g', 'daemon off;']);
  }
  const perCore = (script, port) => [join(HERE, 'cluster.mjs'), String(CORES), join(HERE, script), String(port), upstreamUrl];
  start('express', process.execPath, [join(HERE, 'express-proxy.mjs'), String(PORTS.express), upstreamUrl]);
  start('express per core', process.execPath, perCore('express-proxy.mjs', PORTS.expressPerCore));
  start('reply-from', process.execPath, [join(HERE, 'fastify-peer.mjs'), String(PORTS.replyFrom), upstreamUrl]);
  start('node floor', process.execPath, [join(HERE, 'node-floor.mjs'), String(PORTS.nodeFloor), upstreamUrl]);
  start('node floor per core', process.execPath, perCore('node-floor.mjs', PORTS.nodeFloorPerCore));
  await Promise.all(
    [PORTS.nginx, PORTS.nginxPerCore, PORTS.express, PORTS.expressPerCore, PORTS.replyFrom, PORTS.nodeFloor, PORTS.nodeFloorPerCore].map(
      (port) => waitForPort(port),
    ),
  );

  const proxied = (port) => (p) => `http://127.0.0.1:${port}/api/v1/master-data${p}`;
  const targets = [
    { round: ROUNDS.single, name: 'upstream, direct', url: (p) => `${upstreamUrl}${p}` },
    { round: ROUNDS.single, name: 'nginx', url: proxied(PORTS.nginx) },
    {
      round: ROUNDS.single,
      name: 'gateway (access log on, LOG_LEVEL=info)',
      gateway: { port: PORTS.gateway, level: 'info', label: 'gateway-info' },
    },
    { round: ROUNDS.single, name: 'gateway (LOG_LEVEL=warn)', gateway: { port: PORTS.gatewayQuiet, level: 'warn', label: 'gateway-warn' } },
    { round: ROUNDS.single, name: 'express + http-proxy-middleware', url: proxied(PORTS.express) },
    { round: ROUNDS.single, name: 'peer: fastify + @fastify/reply-from (no checks)', url: proxied(PORTS.replyFrom) },
    { round: ROUNDS.single, name: 'floor: node:http + undici dispatch (no checks)', url: proxied(PORTS.nodeFloor) },
    { round: ROUNDS.perCore, name: 'nginx', url: proxied(PORTS.nginxPerCore) },
    {
      round: ROUNDS.perCore,
      name: 'gateway (access log on, LOG_LEVEL=info)',
      gateway: { port: PORTS.gatewayPerCore, level: 'info', label: 'gateway-per-core', workers: 'auto' },
    },
    { round: ROUNDS.perCore, name: 'express + http-proxy-middleware', url: proxied(PORTS.expressPerCore) },
    { round: ROUNDS.perCore, name: 'floor: node:http + undici dispatch (no checks)', url: proxied(PORTS.nodeFloorPerCore) },
  ];
  const results = [];
  for (const target of targets) {
    const upstream = await startUpstream();
    let gateway;
    if (target.gateway) {
      gateway = await startGateway(target.gateway.port, target.gateway.level, target.gateway.label, target.gateway.workers);
      target.url = proxied(target.gateway.port);
    }
    const token = gateway?.token;
    await checkRelay(target.name, target.url, token);
    wrk(target.url('/1k'), { token, duration: 3 }); // warm-up (JIT, pools)
    const get = wrk(target.url('/1k'), { token });
    const post = wrk(target.url('/10k'), { token, post: true });
    results.push({ round: target.round, name: target.name, get, post });
    process.stdout.write(
      `${target.round}, ${target.name}: GET ${fmt(get.rps, 0)} req/s p50 ${fmt(get.p50)} ms p99 ${fmt(get.p99)} ms | POST ${fmt(post.rps, 0)} req/s p50 ${fmt(post.p50)} ms p99 ${fmt(post.p99)} ms\n`,
    );
    if (gateway) await stop(gateway.child);
    await stop(upstream);
  }
  await stopAll();

  // The gateway is compared with the peers of its own round.
  const peers = ['nginx', 'express', 'floor: node', 'peer: fastify'];
  const peerTitles = ['nginx', 'express+hpm', 'node floor', 'reply-from'];
  const rows = results.map((r) => {
    const failures = [r.get, r.post].map((x) => x.non2xx + (x.errors ? ` (${x.errors})` : '')).join(' / ');
    return `| ${r.round} | ${r.name} | ${fmt(r.get.rps, 0)} | ${fmt(r.get.p50)} | ${fmt(r.get.p99)} | ${fmt(r.post.rps, 0)} | ${fmt(r.post.p50)} | ${fmt(r.post.p99)} | ${failures} |`;
  });
  const gateways = results.filter((r) => r.name.startsWith('gateway'));
  const peerOf = (r, prefix) => results.find((x) => x.round === r.round && x.name.startsWith(prefix));
  const ratioRows = gateways.map((r) => {
    const ratios = ['get', 'post'].flatMap((method) =>
      peers.map((prefix) => {
        const peer = peerOf(r, prefix);
        return peer ? `${fmt(r[method].rps / peer[method].rps)}x` : '-';
      }),
    );
    return `| ${r.round} | ${r.name} | ${ratios.join(' | ')} |`;
  });
  const verdicts = gateways.map((r) => {
    const check = (ok) => (ok ? 'met' : 'not met');
    const [nginx, express] = [peerOf(r, 'nginx'), peerOf(r, 'express')];
    return `- ${r.round}, ${r.name}: >= 0.5x nginx ${check(r.get.rps >= 0.5 * nginx.get.rps && r.post.rps >= 0.5 * nginx.post.rps)}; >= 2x express+hpm ${check(r.get.rps >= 2 * express.get.rps && r.post.rps >= 2 * express.post.rps)}; p99 < 5 ms ${check(r.get.p99 < 5 && r.post.p99 < 5)}.`;
  });
  const loadAverage = (await import('node:os'))
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');
  const machine = `${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Linux ${release()}`;
  const nginxText = execFileSync('sh', ['-c', 'nginx -v 2>&1'], { encoding: 'utf8' }).trim();
  const wrkText = execFileSync('sh', ['-c', 'wrk -v 2>&1 | head -1'], { encoding: 'utf8' }).trim();

  const section = `## Proxy

Run: ${new Date().toISOString()} with \`node bench/proxy-bench.mjs\` (after \`npm run build\`; \`cd bench && npm install\`).
Machine: ${machine} (load average at the end of the run: ${loadAverage}). Everything on this one machine over loopback: wrk (1 thread, ${CONNECTIONS} connections,
${DURATION} s per measurement after a 3 s warm-up), the upstream (Node \`http\`), and one proxy at a time, so the load
generator, proxy and upstream share the cores. Two rounds: each proxy as a single process (nginx
\`worker_processes 1\`), then with one worker per core (nginx \`worker_processes auto\`, the gateway with
GATEWAY_WORKERS=auto, Express and the node floor under node:cluster via bench/cluster.mjs).
Versions: Node ${process.version}; ${nginxText}; ${wrkText}; fastify ${versionOf('fastify')}, undici ${versionOf('undici')};
express ${versionOf('express', HERE)}, http-proxy-middleware ${versionOf('http-proxy-middleware', HERE)}.

The gateway is measured as deployed: every request carries the wrapped token and is checked (signature
cached per token, session look-up cached for GATEWAY_SESSION_CACHE_TTL, 2 s), then forwarded with the
header rules of docs/proxy.md, on SQLite. "access log on" writes the proxy's access line per request
(asynchronous writes to stdout, here /dev/null); nginx writes its access log (buffered).
The node floor is \`node:http\` + undici \`Pool.dispatch\` (bench/node-floor.mjs) with no token check, no
header rules and no logging: the cost of relaying in Node. The reply-from peer is a bare Fastify +
@fastify/reply-from proxy, equally without checks (bench/fastify-peer.mjs). Each figure is a single
run; the load average above says how busy the machine was.

| round | target | GET 1 KiB req/s | p50 ms | p99 ms | POST 10 KiB req/s | p50 ms | p99 ms | non-2xx GET / POST |
|---|---|---|---|---|---|---|---|---|
${rows.join('\n')}

| round | gateway vs | ${peerTitles.map((t) => `${t} GET`).join(' | ')} | ${peerTitles.map((t) => `${t} POST`).join(' | ')} |
|---|---|---|---|---|---|---|---|---|---|
${ratioRows.join('\n')}

Targets (issue 3): at least 0.5x nginx, at least 2x Express + http-proxy-middleware, p99 under 5 ms at 50 connections.
${verdicts.join('\n')}

`;
  writeSection('## Proxy', section);
  process.stdout.write(`\nwritten to docs/benchmarks.md\n`);
}

run(main, () => rmSync(tmp, { recursive: true, force: true }));
