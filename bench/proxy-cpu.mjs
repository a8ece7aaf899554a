#!/usr/bin/env node
// The gateway's own CPU per proxied request, as deployed (token check, access log at info, metrics,
// telemetry shipping with span sampling 0.1), and where it goes by component. Robust to a shared
// machine: it reads the gateway's CPU time from /proc/<pid>/stat around a wrk run and divides by the
// requests served, so whatever else runs on the other core changes the rate, not the CPU a request.
// The gateway (`cli.js gateway`) is pinned to CPU 0; wrk, the upstream and the telemetry receiver
// to CPU 1. GET of 1 KiB and POST of a 1 KiB JSON body, BENCH_ROUNDS rounds (a fresh gateway each).
//
// BENCH_PROFILE=1 also runs each gateway with --cpu-prof and splits its samples by component
// (bench/profile-components.mjs): token check, access line, metrics, telemetry, header rules, the
// relay (undici and the handler), Node's HTTP server, GC and the rest; the CPU µs a request of
// each is its share of the profile's busy samples times the measured CPU a request (the profiler
// itself adds a few per cent, spread over everything).
//
// Needs: `npm run build`; wrk and taskset. Writes nothing to docs/: prints a table (Markdown), and
// with BENCH_OUT=<file> also writes it there.
// Options (env): BENCH_DURATION (10 s), BENCH_ROUNDS (3), BENCH_CONNECTIONS (50), BENCH_PROFILE (0),
// BENCH_SINK (null: bench/otlp-sink.mjs, reads and drops; none: telemetry off), BENCH_LOG_LEVEL (info),
// BENCH_GATEWAY_ENV (extra KEY=VALUE,... for the gateway, for A/B runs of a setting),
// BENCH_DIST (the build to run; default dist/), BENCH_TARGET=floor (bench/node-floor.mjs in the gateway's place: what relaying alone costs in Node here).
import { readdirSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { HERE, ROOT, benchGatewayEnv, cpuMs, fmt, gatewayLogin, pin, run, start, stop, waitForPort, wrk } from './lib.mjs';
import { componentsOf, ALL_NAMES } from './profile-components.mjs';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const PROFILE = process.env.BENCH_PROFILE === '1';
const SINK = process.env.BENCH_SINK ?? 'null';
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'info';
const EXTRA_ENV = Object.fromEntries(
  (process.env.BENCH_GATEWAY_ENV ?? '')
    .split(',')
    .filter(Boolean)
    .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
);
/** The build to run (BENCH_DIST: another build's directory, for A/B runs of two commits). */
const DIST = process.env.BENCH_DIST ?? join(ROOT, 'dist');
const PORTS = { upstream: 9301, gateway: 9303, sink: 9305 };
const PASSWORD = 'Bench#Passw0rd1';
const tmp = mkdtempSync(join(tmpdir(), 'gerbang-proxy-cpu-'));

const TARGET = process.env.BENCH_TARGET ?? 'gateway';

/** The node floor (bench/node-floor.mjs: relaying only) in the gateway's place, to calibrate the machine. */
async function startFloor(round) {
  const profileDir = join(tmp, `profile-floor-${round}`);
  const nodeArgs = PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const child = start('floor', 'taskset', [
    '-c',
    '0',
    process.execPath,
    ...nodeArgs,
    join(HERE, 'node-floor.mjs'),
    String(PORTS.gateway),
    `http://127.0.0.1:${PORTS.upstream}`,
  ]);
  await waitForPort(PORTS.gateway);
  return { child, profileDir };
}

/**
 * The gateway's own account of its pauses, from /metrics (prom-client's runtime metrics): seconds
 * of GC by kind so far, and the event loop's delay since the last scrape (reset at each scrape).
 */
async function runtimeOf(port) {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const value = (pattern) => Number(pattern.exec(text)?.[1] ?? NaN);
  const gc = {};
  for (const match of text.matchAll(/^nodejs_gc_duration_seconds_sum\{kind="(\w+)"\} ([\d.e+-]+)$/gm)) gc[match[1]] = Number(match[2]);
  return {
    gc,
    lagP99Ms: value(/^nodejs_eventloop_lag_p99_seconds ([\d.e+-]+)$/m) * 1000,
    lagMaxMs: value(/^nodejs_eventloop_lag_max_seconds ([\d.e+-]+)$/m) * 1000,
  };
}

async function startGateway(round) {
  const dataDir = join(tmp, `gateway-${round}`);
  mkdirSync(dataDir, { recursive: true });
  const profileDir = join(tmp, `profile-${round}`);
  const nodeArgs = PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const child = start('gateway', 'taskset', ['-c', '0', process.execPath, ...nodeArgs, join(DIST, 'cli.js'), 'gateway'], {
    env: {
      ...benchGatewayEnv({
        port: PORTS.gateway,
        dataDir,
        password: PASSWORD,
        upstreamPort: PORTS.upstream,
        sinkPort: SINK === 'null' ? PORTS.sink : undefined,
        logLevel: LOG_LEVEL,
      }),
      ...EXTRA_ENV,
    },
  });
  await waitForPort(PORTS.gateway);
  pin(child.pid, '0');
  return { child, profileDir };
}

async function main() {
  const upstream = start('upstream', 'taskset', ['-c', '1', process.execPath, join(HERE, 'upstream.mjs'), String(PORTS.upstream)]);
  const sink =
    SINK === 'null' ? start('sink', 'taskset', ['-c', '1', process.execPath, join(HERE, 'otlp-sink.mjs'), String(PORTS.sink)]) : undefined;
  await waitForPort(PORTS.upstream);
  if (sink) await waitForPort(PORTS.sink);
  const url = (path) => `http://127.0.0.1:${PORTS.gateway}/api/v1/master-data${path}`;
  const rows = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    const gateway = TARGET === 'floor' ? await startFloor(round) : await startGateway(round);
    const token = TARGET === 'floor' ? undefined : await gatewayLogin(PORTS.gateway, PASSWORD);
    const options = { connections: CONNECTIONS, token, cpus: '1' };
    wrk(url('/1k'), { ...options, duration: 3 }); // warm-up: JIT, pools
    wrk(url('/1k'), { ...options, duration: 2, script: 'post-1k.lua' });
    const measured = {};
    for (const [name, path, script] of [
      ['GET', '/1k', undefined],
      ['POST', '/1k', 'post-1k.lua'],
    ]) {
      const runtimeBefore = TARGET === 'floor' ? undefined : await runtimeOf(PORTS.gateway);
      const before = cpuMs(gateway.child.pid);
      const result = wrk(url(path), { ...options, duration: DURATION, script });
      result.cpuUs = ((cpuMs(gateway.child.pid) - before) * 1000) / result.requests;
      if (runtimeBefore) {
        const after = await runtimeOf(PORTS.gateway);
        const gcUs = (kind) => (((after.gc[kind] ?? 0) - (runtimeBefore.gc[kind] ?? 0)) * 1e6) / result.requests;
        process.stdout.write(
          `  ${name}: GC µs a request: minor ${fmt(gcUs('minor'), 1)}, major ${fmt(gcUs('major'), 1)}, incremental ${fmt(gcUs('incremental'), 1)}, weakcb ${fmt(gcUs('weakcb'), 1)}; event loop delay p99 ${fmt(after.lagP99Ms)} ms, max ${fmt(after.lagMaxMs)} ms\n`,
        );
      }
      measured[name] = result;
      process.stdout.write(
        `round ${round + 1} ${name}: ${fmt(result.rps, 0)} req/s p99 ${fmt(result.p99)} ms, gateway ${fmt(result.cpuUs, 1)} µs CPU/request, non-2xx ${result.non2xx}\n`,
      );
    }
    await stop(gateway.child);
    let components;
    if (PROFILE) {
      const file = readdirSync(gateway.profileDir).find((name) => name.endsWith('.cpuprofile'));
      const profile = JSON.parse(readFileSync(join(gateway.profileDir, file), 'utf8'));
      // The measured runs only (plus the second the gateway takes to stop): not start-up and warm-up.
      components = componentsOf(profile, { lastSeconds: 2 * DURATION + 1 });
      writeFileSync(join(HERE, 'results/tmp', `proxy-cpu-round${round + 1}.cpuprofile`), JSON.stringify(profile));
    }
    rows.push({ round: round + 1, ...measured, components });
  }
  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const lines = [
    `Run ${new Date().toISOString()}: ${TARGET === 'floor' ? 'the node floor' : 'the gateway'}; ${cpus()[0]?.model}, load average ${loadavg()
      .map((n) => n.toFixed(2))
      .join(
        ' ',
      )}; LOG_LEVEL=${LOG_LEVEL}, telemetry ${SINK === 'null' ? 'to a null sink' : 'off'}${Object.keys(EXTRA_ENV).length ? `, ${JSON.stringify(EXTRA_ENV)}` : ''}; ${CONNECTIONS} connections, ${DURATION} s.`,
    '',
    '| round | GET req/s | GET p99 ms | GET µs CPU/request | POST 1 KiB req/s | POST p99 ms | POST µs CPU/request |',
    '|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.round} | ${fmt(r.GET.rps, 0)} | ${fmt(r.GET.p99)} | ${fmt(r.GET.cpuUs, 1)} | ${fmt(r.POST.rps, 0)} | ${fmt(r.POST.p99)} | ${fmt(r.POST.cpuUs, 1)} |`,
    ),
    `| median | | | ${fmt(median(rows.map((r) => r.GET.cpuUs)), 1)} | | | ${fmt(median(rows.map((r) => r.POST.cpuUs)), 1)} |`,
  ];
  if (PROFILE) {
    lines.push(
      '',
      `Components (share of the profile's busy samples × the round's mean CPU a request, µs):`,
      '',
      `| round | ${ALL_NAMES.join(' | ')} |`,
      `|---|${ALL_NAMES.map(() => '---').join('|')}|`,
      ...rows.map((r) => {
        const mean = (r.GET.cpuUs * r.GET.requests + r.POST.cpuUs * r.POST.requests) / (r.GET.requests + r.POST.requests);
        return `| ${r.round} | ${ALL_NAMES.map((c) => fmt((r.components.shares.get(c) ?? 0) * mean, 1)).join(' | ')} |`;
      }),
      '',
      'Top self-time frames (last round, % of busy samples):',
      '',
      ...rows.at(-1).components.top.map(({ name, share }) => `- ${fmt(share * 100, 1)}% ${name}`),
    );
  }
  const text = `${lines.join('\n')}\n`;
  process.stdout.write(`\n${text}`);
  if (process.env.BENCH_OUT) writeFileSync(process.env.BENCH_OUT, text);
  await stop(upstream);
  if (sink) await stop(sink);
}

mkdirSync(join(HERE, 'results/tmp'), { recursive: true });
run(main, () => rmSync(tmp, { recursive: true, force: true }));
