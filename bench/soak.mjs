#!/usr/bin/env node
// Soak run: `cli.js all` (supervisor, gateway, logs service) under ten minutes of mixed
// traffic, one request in SOAK_FAULT_EVERY faulted, with every Node process of the system sampled
// by soak-probe.mjs (RSS, heap, open descriptors, event-loop delay). Memory and descriptors must
// come back flat: the first sample after the warm-up is compared with the last one, taken after the
// traffic stopped and the processes had SOAK_SETTLE_S to go quiet.
//
// Traffic (SOAK_CONCURRENCY loops): proxied GET 1 KiB and POST 10 KiB through the gateway to a local
// upstream, the gateway's profile route, `_bulk` batches and searches on the logs service.
// Faults, in turn: a client that sends half a proxied upload and leaves, a client that leaves in
// the middle of a 1 MiB proxied download, an upstream that resets the connection, malformed JSON to
// the gateway's login, a malformed `_bulk` body, half a `_bulk` body.
//
// Needs: `npm run build` in the repository root. Options (env): SOAK_SECONDS (600),
// SOAK_CONCURRENCY (16), SOAK_FAULT_EVERY (100), SOAK_WARMUP_S (30), SOAK_SETTLE_S (20).
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { Agent, createServer, request } from 'node:http';
import { connect } from 'node:net';
import { cpus, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { ROOT, fmt, gatewayLogin, run, start, stop, waitForPort, writeSection } from './lib.mjs';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 600);
const CONCURRENCY = Number(process.env.SOAK_CONCURRENCY ?? 16);
const FAULT_EVERY = Number(process.env.SOAK_FAULT_EVERY ?? 100);
const WARMUP_S = Number(process.env.SOAK_WARMUP_S ?? 30);
const SETTLE_S = Number(process.env.SOAK_SETTLE_S ?? 20);
const PORTS = { gateway: 9301, logs: 9302 };
const PASSWORD = 'Soak#Passw0rd1';
const tmp = mkdtempSync(join(tmpdir(), 'gerbang-soak-'));
const probeDir = join(tmp, 'probe');
mkdirSync(probeDir);

// The upstream: 1 KiB answers, uploads read to the end, 1 MiB downloads, and resets on /reset.
const oneKib = Buffer.alloc(1024, 'x');
const oneMib = Buffer.alloc(1_048_576, 'y');
const upstream = createServer((req, res) => {
  if (req.url.endsWith('/reset')) return void req.socket.destroy();
  if (req.url.endsWith('/1m')) return void res.writeHead(200, { 'content-length': oneMib.length }).end(oneMib);
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json', 'content-length': oneKib.length }).end(oneKib));
});
upstream.keepAliveTimeout = 65_000;

const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY * 2 });
const stats = new Map(); // "kind status" -> count

function count(kind, status) {
  const key = `${kind} ${status}`;
  stats.set(key, (stats.get(key) ?? 0) + 1);
}

/** One request on the keep-alive agent; resolves with the status (or the error's code). */
function call(port, method, path, { headers = {}, body } = {}) {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
      res.on('error', () => resolve('aborted'));
    });
    req.setTimeout(30_000, () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
    req.on('error', (error) => resolve(error.code ?? 'error'));
    req.end(body);
  });
}

/** A raw connection that writes `text`, optionally reads until `readBytes` arrived, then leaves. */
function rawAndLeave(port, text, readBytes = 0) {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(text);
      if (readBytes === 0) setTimeout(() => socket.destroy(), 20);
    });
    let got = 0;
    socket.on('data', (chunk) => {
      got += chunk.length;
      if (readBytes > 0 && got >= readBytes) socket.destroy();
    });
    socket.on('close', () => resolve('left'));
    socket.on('error', () => {});
    socket.setTimeout(10_000, () => socket.destroy());
  });
}

const bulkBody = (n) => {
  const lines = [];
  for (let i = 0; i < n; i += 1)
    lines.push(
      '{"index":{}}',
      JSON.stringify({
        '@timestamp': new Date().toISOString(),
        message: `soak event ${i}`,
        level: i % 7 ? 'info' : 'error',
        service: 'soak',
        host: `h${i % 5}`,
      }),
    );
  return `${lines.join('\n')}\n`;
};
const basic = `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`;
const POST_10K = JSON.stringify({ data: 'x'.repeat(10_229) });

async function main() {
  if (!existsSync(join(ROOT, 'dist/cli.js'))) throw new Error('run `npm run build` in the repository root first');
  await new Promise((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const upstreamUrl = `http://127.0.0.1:${upstream.address().port}`;
  const dataDir = join(tmp, 'data');
  const system = start('all', process.execPath, [join(ROOT, 'dist/cli.js'), 'all'], {
    env: {
      ...process.env,
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${new URL('./soak-probe.mjs', import.meta.url).href}`.trim(),
      SOAK_PROBE_DIR: probeDir,
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      GATEWAY_PORT: String(PORTS.gateway),
      LOGS_PORT: String(PORTS.logs),
      GATEWAY_ADMIN_PASSWORD: PASSWORD,
      LOGS_ADMIN_PASSWORD: PASSWORD,
      LOGS_MFA_REQUIRED_PERMISSIONS: 'none',
      LOG_LEVEL: 'info',
      SERVER_SERVICE_MASTER_DATA: upstreamUrl,
      LOGS_INGEST_RATE_PER_TENANT: '1000000',
      LOGS_API_RATE_PER_USER: '1000000',
    },
  });
  await waitForPort(PORTS.gateway);
  await waitForPort(PORTS.logs);
  const token = await gatewayLogin(PORTS.gateway, PASSWORD);
  let logsToken;
  const logsLogin = async () => {
    const response = await fetch(`http://127.0.0.1:${PORTS.logs}/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password: PASSWORD }),
    });
    logsToken = (await response.json()).token.access_token;
  };
  await logsLogin();
  const relogin = setInterval(() => void logsLogin(), 120_000);

  const auth = { authorization: token };
  const json = { 'content-type': 'application/json' };
  const normal = [
    [50, 'proxied GET', () => call(PORTS.gateway, 'GET', '/api/v1/master-data/1k', { headers: auth })],
    [15, 'proxied POST', () => call(PORTS.gateway, 'POST', '/api/v1/master-data/10k', { headers: { ...auth, ...json }, body: POST_10K })],
    [10, 'profile', () => call(PORTS.gateway, 'GET', '/api/v1/auth/profile', { headers: auth })],
    [
      15,
      'bulk',
      () =>
        call(PORTS.logs, 'POST', '/api/v1/_elastic/_bulk', {
          headers: { authorization: basic, 'content-type': 'application/x-ndjson' },
          body: bulkBody(20),
        }),
    ],
    [
      10,
      'search',
      () =>
        call(PORTS.logs, 'POST', '/api/v1/logs/list/paginate', {
          headers: { authorization: `Bearer ${logsToken}`, ...json },
          body: JSON.stringify({ query: 'soak error', limit: 50 }),
        }),
    ],
  ];
  const totalWeight = normal.reduce((sum, [weight]) => sum + weight, 0);
  const faults = [
    [
      'fault: half upload, client leaves',
      () =>
        rawAndLeave(
          PORTS.gateway,
          `POST /api/v1/master-data/up HTTP/1.1\r\nHost: x\r\nAuthorization: ${token}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"data":"${'x'.repeat(5000)}`,
        ),
    ],
    [
      'fault: client leaves mid-download',
      () => rawAndLeave(PORTS.gateway, `GET /api/v1/master-data/1m HTTP/1.1\r\nHost: x\r\nAuthorization: ${token}\r\n\r\n`, 65_536),
    ],
    ['fault: upstream resets', () => call(PORTS.gateway, 'GET', '/api/v1/master-data/reset', { headers: auth })],
    [
      'fault: malformed login JSON',
      () => call(PORTS.gateway, 'POST', '/api/v1/auth/login', { headers: json, body: '{"no_pegawai": "admin", ' }),
    ],
    [
      'fault: malformed _bulk',
      () =>
        call(PORTS.logs, 'POST', '/api/v1/_elastic/_bulk', {
          headers: { authorization: basic, 'content-type': 'application/x-ndjson' },
          body: '{"index":{}}\n{not json\n',
        }),
    ],
    [
      'fault: half _bulk body, client leaves',
      () =>
        rawAndLeave(
          PORTS.logs,
          `POST /api/v1/_elastic/_bulk HTTP/1.1\r\nHost: x\r\nAuthorization: ${basic}\r\nContent-Type: application/x-ndjson\r\nContent-Length: 50000\r\n\r\n${bulkBody(5)}`,
        ),
    ],
  ];

  const startedAt = Date.now();
  const deadline = startedAt + SECONDS * 1000;
  let sequence = 0;
  let faultTurn = 0;
  const loop = async () => {
    while (Date.now() < deadline) {
      sequence += 1;
      if (sequence % FAULT_EVERY === 0) {
        const [kind, run] = faults[faultTurn++ % faults.length];
        count(kind, await run());
        continue;
      }
      let pick = (sequence * 7919) % totalWeight;
      const [, kind, run] = normal.find(([weight]) => (pick -= weight) < 0);
      count(kind, await run());
    }
  };
  const progress = setInterval(
    () => process.stdout.write(`${Math.round((Date.now() - startedAt) / 1000)} s: ${sequence} requests\n`),
    60_000,
  );
  await Promise.all(Array.from({ length: CONCURRENCY }, loop));
  clearInterval(progress);
  clearInterval(relogin);
  const trafficSeconds = (Date.now() - startedAt) / 1000;
  if (system.exitCode !== null || system.signalCode !== null)
    throw new Error(`the system exited during the soak (${system.exitCode ?? system.signalCode}); nothing written`);
  agent.destroy();
  await delay(SETTLE_S * 1000); // idle: what is still held now is kept, not in flight

  // Per process: the first sample after the warm-up against the last one.
  const processes = readdirSync(probeDir).map((file) =>
    readFileSync(join(probeDir, file), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line)),
  );
  const rows = processes
    .filter((samples) => samples.length > 1)
    .map((samples) => {
      const first = samples.find((s) => s.t >= startedAt + WARMUP_S * 1000) ?? samples[0];
      const last = samples[samples.length - 1];
      const during = samples.filter((s) => s.t <= deadline);
      const eldP99 = Math.max(...during.map((s) => s.eldP99Ms));
      const mib = (bytes) => fmt(bytes / 1_048_576, 1);
      return `| ${first.role} | ${mib(first.rss)} -> ${mib(last.rss)} | ${mib(first.heapUsed)} -> ${mib(last.heapUsed)} | ${first.fds} -> ${last.fds} | ${fmt(eldP99, 1)} |`;
    });
  await stop(system);
  upstream.close();

  const statRows = [...stats.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, n]) => {
      const at = key.lastIndexOf(' ');
      return `| ${key.slice(0, at)} | ${key.slice(at + 1)} | ${n} |`;
    });
  const served = [...stats.entries()].filter(([key]) => !key.startsWith('fault')).reduce((sum, [, n]) => sum + n, 0);
  const unexpected = [...stats.entries()].filter(([key]) => !key.startsWith('fault') && !/ 20[01]$/.test(key));
  const machine = `${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Linux ${release()}`;
  writeSection(
    '## Soak',
    `## Soak

Run: ${new Date().toISOString()} with \`node bench/soak.mjs\` (after \`npm run build\`). Machine: ${machine}.
\`cli.js all\` (supervisor, gateway, logs service, SQLite) under ${fmt(trafficSeconds / 60, 1)} minutes of mixed traffic from ${CONCURRENCY}
loops on loopback, one request in ${FAULT_EVERY} faulted; ${served} ordinary requests answered (${fmt(served / trafficSeconds, 0)}/s).
Each process is sampled every 5 s by bench/soak-probe.mjs; "start" is the first sample after a ${WARMUP_S} s warm-up,
"end" the last one, after the traffic stopped and ${SETTLE_S} s of quiet. Event-loop delay is the worst per-sample p99
while the traffic ran.

| process | RSS MiB start -> end | heap used MiB start -> end | open descriptors start -> end | event-loop delay p99 ms (worst) |
|---|---|---|---|---|
${rows.join('\n')}

| request | status | count |
|---|---|---|
${statRows.join('\n')}

Ordinary requests answered with something other than 200/201: ${unexpected.length === 0 ? 'none' : unexpected.map(([key, n]) => `${key} (${n})`).join(', ')}.

`,
  );
  process.stdout.write(`${served} requests; written to docs/benchmarks.md\n${rows.join('\n')}\n`);
}

run(main, () => {
  upstream.close();
  rmSync(tmp, { recursive: true, force: true });
});
