#!/usr/bin/env node
// The gateway's instructions per proxied request, two builds compared (A/B of a change): robust to
// a shared machine, where CPU time per request moves by ±20-40 % with the neighbours' load and an
// instruction count does not. `cli.js gateway` of each build runs under valgrind's callgrind with
// instrumentation off; after a warm-up it is switched on for a fixed number of requests and off
// again (the method of bench/self-watch-instructions.mjs). As deployed: token check, access log at
// info, metrics, telemetry shipped to bench/otlp-sink.mjs (span sampling at its default, 0.1).
// Each process measures BENCH_WINDOWS windows of GET (1 KiB answer) and of POST (1 KiB JSON body)
// and keeps the cheapest of each (its steady state); the arms alternate over BENCH_PROCESSES
// processes, and the medians are compared. User space only: the kernel's share of the socket work
// is not counted (bench/proxy-cpu.mjs measures CPU time).
//
// Needs: builds to compare (`npm run build`; copy one aside for the other arm), valgrind.
// Options (env): BENCH_ARMS ("name=distdir,name=distdir"; default "head=dist"), BENCH_WARMUP (3000),
// BENCH_WINDOW (2000), BENCH_WINDOWS (3), BENCH_PROCESSES (2), BENCH_CONCURRENCY (20),
// BENCH_PORT_BASE (9400), BENCH_OUT (also write the table there), BENCH_KEEP=1 (keep the callgrind files).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { HERE, ROOT, fmt, gatewayLogin, run, start, stop, waitForPort } from './lib.mjs';

const WARMUP = Number(process.env.BENCH_WARMUP ?? 3000);
const WINDOW = Number(process.env.BENCH_WINDOW ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 20);
const WINDOWS = Number(process.env.BENCH_WINDOWS ?? 3);
const PROCESSES = Number(process.env.BENCH_PROCESSES ?? 2);
const ARMS = (process.env.BENCH_ARMS ?? 'head=dist').split(',').map((arm) => {
  const [name, dist] = arm.split('=');
  return { name, dist: resolve(ROOT, dist) };
});
const ONE_KIB_JSON = JSON.stringify({ data: 'x'.repeat(1024 - 11) });
const KEEP = process.env.BENCH_KEEP === '1';
// BENCH_PORT_BASE: two runs side by side (say, two sampling ratios) need their own ports.
const BASE = Number(process.env.BENCH_PORT_BASE ?? 9400);
const PORTS = { upstream: BASE + 1, gateway: BASE + 3, sink: BASE + 5 };
const PASSWORD = 'Bench#Passw0rd1';
const tmp = mkdtempSync(join(tmpdir(), 'gerbang-instructions-'));

/** `count` proxied GETs (or POSTs of a 1 KiB JSON body), CONCURRENCY at a time over keep-alive connections. */
async function load(count, token, post = false) {
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  let left = count;
  const one = () =>
    new Promise((done, fail) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: PORTS.gateway,
          path: '/api/v1/master-data/1k',
          agent,
          method: post ? 'POST' : 'GET',
          headers: post
            ? { authorization: token, 'content-type': 'application/json', 'content-length': ONE_KIB_JSON.length }
            : { authorization: token },
        },
        (res) => {
          res.resume();
          res.on('end', () => (res.statusCode === 200 ? done() : fail(new Error(`status ${res.statusCode}`))));
        },
      );
      req.on('error', fail);
      req.end(post ? ONE_KIB_JSON : undefined);
    });
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (left > 0) {
        left -= 1;
        await one();
      }
    }),
  );
  agent.destroy();
}

/**
 * Instructions (Ir) of a callgrind dump. valgrind may take callgrind_control's commands only when
 * the gateway next runs, so it is woken with /healthz calls (after "-i off": not counted) until the
 * dump is written.
 */
async function instructionsOf(file) {
  for (let i = 0; i < 600; i += 1) {
    const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
    const totals = /^totals:\s+(\d+)/m.exec(text);
    if (totals) return Number(totals[1]);
    await fetch(`http://127.0.0.1:${PORTS.gateway}/healthz`).then((r) => r.arrayBuffer());
    await delay(100);
  }
  throw new Error(`callgrind wrote no ${file}`);
}

// valgrind names its vgdb files after $USER and $HOST: callgrind_control must see the gateway's HOST.
const control = (...args) =>
  execFileSync('callgrind_control', args, {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, HOST: '127.0.0.1' },
  });

async function measure(arm, index) {
  const name = `${arm.name}-${index}`;
  const env = {
    ...process.env,
    HOST: '127.0.0.1',
    DATA_DIR: join(tmp, name),
    GATEWAY_PORT: String(PORTS.gateway),
    GATEWAY_ADMIN_PASSWORD: PASSWORD,
    LOG_LEVEL: 'info',
    SERVER_SERVICE_MASTER_DATA: `http://127.0.0.1:${PORTS.upstream}`,
    // Under valgrind the gateway serves ~70 times fewer requests a second, so the 1 s timer would
    // send small batches; at full speed they leave full, as here.
    GATEWAY_TELEMETRY_URL: `http://127.0.0.1:${PORTS.sink}`,
    GATEWAY_TELEMETRY_INTERVAL: '1h',
  };
  const gateway = start(
    `gateway ${name}`,
    'valgrind',
    [
      '--tool=callgrind',
      '--instr-atstart=no',
      '--collect-atstart=yes',
      `--callgrind-out-file=${join(tmp, `cg.${name}.%p`)}`,
      process.execPath,
      ...(KEEP ? ['--perf-basic-prof'] : []),
      join(arm.dist, 'cli.js'),
      'gateway',
    ],
    { env, cwd: tmp },
  );
  await waitForPort(PORTS.gateway, 3000);
  const token = await gatewayLogin(PORTS.gateway, PASSWORD);
  await load(WARMUP, token);
  await load(Math.ceil(WARMUP / 3), token, true);
  const pid = String(gateway.pid);
  const result = { GET: [], POST: [] };
  let dump = 0;
  for (let i = 0; i < WINDOWS; i += 1) {
    for (const method of ['GET', 'POST']) {
      control('-z', pid); // zero the counters
      control('-i', 'on', pid);
      await load(WINDOW, token, method === 'POST');
      control('-i', 'off', pid);
      control('-d', pid); // dump what the window counted: cg.<name>.<pid>.<n>
      dump += 1;
      result[method].push((await instructionsOf(join(tmp, `cg.${name}.${pid}.${dump}`))) / WINDOW);
      process.stdout.write(
        `${name} (pid ${pid}) ${method} window ${i + 1}: ${fmt(result[method].at(-1) / 1000, 0)} thousand instructions a request\n`,
      );
    }
  }
  await stop(gateway);
  return result;
}

// The cheapest window of a process: its steady state. Under valgrind the gateway runs ~70 times
// slower, so V8's time-driven work (the memory reducer's major GCs, code flushing and the
// recompilation after it) lands on far fewer requests than at full speed, and a window holding it
// costs up to three times the others, in either arm.
const steady = (windows) => Math.min(...windows);
const median = (xs) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

async function main() {
  const upstream = start('upstream', process.execPath, [join(HERE, 'upstream.mjs'), String(PORTS.upstream)]);
  const sink = start('sink', process.execPath, [join(HERE, 'otlp-sink.mjs'), String(PORTS.sink)]);
  await waitForPort(PORTS.upstream);
  await waitForPort(PORTS.sink);
  // Alternating, so that a slow stretch of the machine's day falls on every arm.
  const runs = new Map(ARMS.map((arm) => [arm.name, []]));
  for (let i = 0; i < PROCESSES; i += 1) for (const arm of ARMS) runs.get(arm.name).push(await measure(arm, i + 1));
  await stop(upstream);
  await stop(sink);
  const lines = [
    `Run ${new Date().toISOString()} with \`node bench/proxy-instructions.mjs\`: thousands of user-space instructions a proxied request (callgrind), cheapest of ${WINDOWS} windows of ${WINDOW} requests a process, ${CONCURRENCY} connections; telemetry to a null sink, LOG_LEVEL=info.`,
    '',
    '| build | process | GET | POST |',
    '|---|---|---|---|',
  ];
  for (const arm of ARMS) {
    runs
      .get(arm.name)
      .forEach((r, i) => lines.push(`| ${arm.name} | ${i + 1} | ${fmt(steady(r.GET) / 1000, 0)} | ${fmt(steady(r.POST) / 1000, 0)} |`));
    const m = (method) => median(runs.get(arm.name).map((r) => steady(r[method])));
    lines.push(`| ${arm.name} | median | **${fmt(m('GET') / 1000, 0)}** | **${fmt(m('POST') / 1000, 0)}** |`);
  }
  const text = `${lines.join('\n')}\n`;
  process.stdout.write(`\n${text}`);
  if (process.env.BENCH_OUT) writeFileSync(process.env.BENCH_OUT, text);
}

run(main, () => (KEEP ? process.stdout.write(`callgrind files kept in ${tmp}\n`) : rmSync(tmp, { recursive: true, force: true })));
