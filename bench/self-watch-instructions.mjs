#!/usr/bin/env node
// What watching itself costs the gateway, counted in instructions instead of CPU time:
// on this 2-vCPU VM, CPU time per request varies by ±20-40 % from one 10-second run to the next,
// more than the cost being measured. Here `cli.js gateway` runs under valgrind's callgrind with
// instrumentation off; after a warm-up it is switched on (`callgrind_control -i on`) for a fixed
// number of proxied requests and off again, so start-up and warm-up are not counted.
// Each process measures BENCH_WINDOWS windows and keeps its cheapest (its steady state). The arms
// alternate over BENCH_PROCESSES processes each, and the medians of those are compared: one process
// of the same arm differs from the next by up to ±10 % (how V8 compiled it), more than the cost measured.
//   "off": no telemetry; "on": shipping every access line and span to bench/otlp-sink.mjs.
// Instructions in user space only (callgrind does not see the kernel): socket writes of the batches
// show as their syscalls' user-side cost, not their kernel time.
//
// Needs: `npm run build`, valgrind (Debian: apt-get install -y valgrind).
// Options (env): BENCH_WARMUP (requests, default 3000), BENCH_WINDOW (2000), BENCH_WINDOWS (5),
// BENCH_PROCESSES (3), BENCH_CONCURRENCY (20), BENCH_SAMPLE_RATIO (unset: the gateway's default), BENCH_PORT_BASE (9300), BENCH_KEEP=1 keeps the
// callgrind files (cg.<arm>.<pid>.<window>) and V8's perf map for callgrind_annotate.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { HERE, ROOT, fmt, gatewayLogin, run, start, stop, waitForPort, writeSection } from './lib.mjs';

const WARMUP = Number(process.env.BENCH_WARMUP ?? 3000);
const WINDOW = Number(process.env.BENCH_WINDOW ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 20);
const WINDOWS = Number(process.env.BENCH_WINDOWS ?? 5);
const PROCESSES = Number(process.env.BENCH_PROCESSES ?? 3);
// Unset: the gateway's default span sampling (GATEWAY_TELEMETRY_SAMPLE_RATIO).
const SAMPLE_RATIO = process.env.BENCH_SAMPLE_RATIO;
const SAMPLING = SAMPLE_RATIO === undefined ? 'the default span sampling, 0.1' : `span sampling ratio ${SAMPLE_RATIO}`;
const KEEP = process.env.BENCH_KEEP === '1';
// BENCH_PORT_BASE: two runs side by side (say, two sampling ratios) need their own ports.
const BASE = Number(process.env.BENCH_PORT_BASE ?? 9300);
const PORTS = { upstream: BASE + 1, gateway: BASE + 3, sink: BASE + 5 };
const PASSWORD = 'Bench#Passw0rd1';
const tmp = mkdtempSync(join(tmpdir(), 'gerbang-instructions-'));

/** `count` proxied GETs, CONCURRENCY at a time over keep-alive connections. */
async function load(count, token) {
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  let left = count;
  const one = () =>
    new Promise((done, fail) => {
      const req = request(
        { host: '127.0.0.1', port: PORTS.gateway, path: '/api/v1/master-data/1k', agent, headers: { authorization: token } },
        (res) => {
          res.resume();
          res.on('end', () => (res.statusCode === 200 ? done() : fail(new Error(`status ${res.statusCode}`))));
        },
      );
      req.on('error', fail);
      req.end();
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

async function measure(shipping) {
  const name = shipping ? 'on' : 'off';
  const env = {
    ...process.env,
    HOST: '127.0.0.1',
    DATA_DIR: join(tmp, name),
    GATEWAY_PORT: String(PORTS.gateway),
    GATEWAY_ADMIN_PASSWORD: PASSWORD,
    LOG_LEVEL: 'info',
    SERVER_SERVICE_MASTER_DATA: `http://127.0.0.1:${PORTS.upstream}`,
    ...(SAMPLE_RATIO === undefined ? {} : { GATEWAY_TELEMETRY_SAMPLE_RATIO: SAMPLE_RATIO }),
    // Under valgrind the gateway serves ~70 times fewer requests a second, so the 1 s timer would
    // send batches of a few dozen records; at full speed they leave full (512), as here.
    ...(shipping ? { GATEWAY_TELEMETRY_URL: `http://127.0.0.1:${PORTS.sink}`, GATEWAY_TELEMETRY_INTERVAL: '1h' } : {}),
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
      // With BENCH_KEEP, V8 writes /tmp/perf-<pid>.map, which names the JIT code's addresses.
      ...(KEEP ? ['--perf-basic-prof'] : []),
      join(ROOT, 'dist/cli.js'),
      'gateway',
    ],
    // In the scratch directory: --perf-basic-prof also writes V8 log files into the working directory.
    { env, cwd: tmp },
  );
  await waitForPort(PORTS.gateway, 3000);
  const token = await gatewayLogin(PORTS.gateway, PASSWORD);
  await load(WARMUP, token);
  const pid = String(gateway.pid);
  const windows = [];
  for (let i = 0; i < WINDOWS; i += 1) {
    control('-z', pid); // zero the counters
    control('-i', 'on', pid);
    await load(WINDOW, token);
    control('-i', 'off', pid);
    control('-d', pid); // dump what the window counted: cg.<arm>.<pid>.<n>
    windows.push((await instructionsOf(join(tmp, `cg.${name}.${pid}.${i + 1}`))) / WINDOW);
    process.stdout.write(`${name} (pid ${pid}) window ${i + 1}: ${fmt(windows.at(-1) / 1000, 0)} thousand instructions a request\n`);
  }
  await stop(gateway);
  return windows;
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
  // Alternating, so that a slow stretch of the machine's day falls on both arms.
  const off = [];
  const on = [];
  for (let i = 0; i < PROCESSES; i += 1) {
    off.push(await measure(false));
    on.push(await measure(true));
  }
  await stop(upstream);
  await stop(sink);
  const ratio = median(off.map(steady)) / median(on.map(steady));
  process.stdout.write(`on/off capacity by instructions: ${fmt(ratio)}\n`);
  const heading = `## Self-watching cost in instructions${SAMPLE_RATIO === undefined ? '' : `: span sampling ${SAMPLE_RATIO}`}`;
  const row = (arm, windows, i) =>
    `| ${arm} | ${i + 1} | ${windows.map((x) => fmt(x / 1000, 0)).join(' | ')} | ${fmt(steady(windows) / 1000, 0)} |`;
  writeSection(
    heading,
    `${heading}

Run: ${new Date().toISOString()} with \`node bench/self-watch-instructions.mjs\` (after \`npm run build\`).
\`cli.js gateway\` under valgrind's callgrind proxies a 1 KiB GET (${CONCURRENCY} keep-alive connections); after
${WARMUP} requests of warm-up, instructions are counted over ${WINDOWS} windows of ${WINDOW} requests each
(user space only; batches leave full, as at full speed), in ${PROCESSES} gateway processes of each arm, started
in turn. "off": no telemetry; "on": every access line, and the spans of sampled traces (${SAMPLING}), shipped
to bench/otlp-sink.mjs. Thousands of instructions a request, per window:

| telemetry | process | ${off[0].map((_, i) => `window ${i + 1}`).join(' | ')} | steady (cheapest) |
|---|---|${off[0].map(() => '---|').join('')}---|
${off.map((windows, i) => row('off', windows, i)).join('\n')}
${on.map((windows, i) => row('on', windows, i)).join('\n')}

The gateway's user-space instructions with shipping on, as a share of off, in steady state (the
median over the processes of each one's cheapest window): **${fmt(ratio)}**. Windows far dearer than
the rest hold a major GC or a wave of recompilation: under valgrind, V8's time-driven work lands on
~70 times fewer requests than at full speed. Kernel time (socket writes) is not counted here;
bench/self-watch.mjs measures CPU time.

`,
  );
}

run(main, () => (KEEP ? process.stdout.write(`callgrind files kept in ${tmp}\n`) : rmSync(tmp, { recursive: true, force: true })));
