#!/usr/bin/env node
// Two (or more) builds of the gateway compared by their CPU per proxied request on a machine others
// are using: every build's gateway runs at once, pinned to CPU 0, and wrk (on CPU 1) drives them in
// turn in short bursts, so a busy stretch of the machine falls on every build alike. Each burst's
// CPU a request is read from /proc/<pid>/stat; the medians over the bursts are compared. As
// deployed: token check, access log at info, metrics, telemetry to bench/otlp-sink.mjs (span
// sampling 0.1). GET of 1 KiB and POST of a 1 KiB JSON body.
//
// Needs: the builds (`npm run build`; copy one aside for the other arm), wrk and taskset.
// Options (env): BENCH_ARMS ("name=distdir,name=distdir"; default "head=dist"; an arm may add its own
// environment after a `|`: "semi32=dist|NODE_OPTIONS=--max-semi-space-size=32;LOG_LEVEL=info", and node's own
// options as NODE_ARGS: "single=dist|NODE_ARGS=--single-threaded-gc"), BENCH_BURSTS (8),
// BENCH_BURST (seconds, 3), BENCH_CONNECTIONS (50), BENCH_OUT (also write the table there).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { HERE, ROOT, benchGatewayEnv, cpuMs, fmt, gatewayLogin, pin, run, start, stop, waitForPort, wrk } from './lib.mjs';

const BURSTS = Number(process.env.BENCH_BURSTS ?? 8);
const BURST = Number(process.env.BENCH_BURST ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const ARMS = (process.env.BENCH_ARMS ?? 'head=dist').split(',').map((arm, i) => {
  const [build, envText = ''] = arm.split('|');
  const [name, dist] = build.split('=');
  const env = Object.fromEntries(
    envText
      .split(';')
      .filter(Boolean)
      .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  );
  return { name, dist: resolve(ROOT, dist), env, port: 9503 + i };
});
const PORTS = { upstream: 9501, sink: 9502 };
const PASSWORD = 'Bench#Passw0rd1';
const tmp = mkdtempSync(join(tmpdir(), 'gerbang-proxy-ab-'));

async function startArm(arm) {
  const dataDir = join(tmp, arm.name);
  mkdirSync(dataDir, { recursive: true });
  // NODE_ARGS (space-separated): node's own options that NODE_OPTIONS does not take (--single-threaded-gc).
  const { NODE_ARGS = '', ...env } = arm.env;
  const nodeArgs = NODE_ARGS.split(' ').filter(Boolean);
  arm.child = start(arm.name, 'taskset', ['-c', '0', process.execPath, ...nodeArgs, join(arm.dist, 'cli.js'), 'gateway'], {
    env: {
      ...benchGatewayEnv({ port: arm.port, dataDir, password: PASSWORD, upstreamPort: PORTS.upstream, sinkPort: PORTS.sink }),
      ...env,
    },
  });
  await waitForPort(arm.port);
  pin(arm.child.pid, '0');
  arm.token = await gatewayLogin(arm.port, PASSWORD);
  arm.bursts = { GET: [], POST: [] };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const upstream = start('upstream', 'taskset', ['-c', '1', process.execPath, join(HERE, 'upstream.mjs'), String(PORTS.upstream)]);
  const sink = start('sink', 'taskset', ['-c', '1', process.execPath, join(HERE, 'otlp-sink.mjs'), String(PORTS.sink)]);
  await waitForPort(PORTS.upstream);
  await waitForPort(PORTS.sink);
  for (const arm of ARMS) await startArm(arm);
  const url = (arm) => `http://127.0.0.1:${arm.port}/api/v1/master-data/1k`;
  for (const arm of ARMS) {
    wrk(url(arm), { connections: CONNECTIONS, token: arm.token, cpus: '1', duration: 3 }); // warm-up
    wrk(url(arm), { connections: CONNECTIONS, token: arm.token, cpus: '1', duration: 2, script: 'post-1k.lua' });
  }
  for (let burst = 0; burst < BURSTS; burst += 1) {
    // Each burst in a different order of the arms, so neither always follows the other.
    const order = burst % 2 === 0 ? ARMS : [...ARMS].reverse();
    for (const method of ['GET', 'POST']) {
      for (const arm of order) {
        const before = cpuMs(arm.child.pid);
        const result = wrk(url(arm), {
          connections: CONNECTIONS,
          token: arm.token,
          cpus: '1',
          duration: BURST,
          script: method === 'POST' ? 'post-1k.lua' : undefined,
        });
        const cpuUs = ((cpuMs(arm.child.pid) - before) * 1000) / result.requests;
        arm.bursts[method].push({ cpuUs, rps: result.rps, non2xx: result.non2xx });
        process.stdout.write(`burst ${burst + 1} ${arm.name} ${method}: ${fmt(result.rps, 0)} req/s, ${fmt(cpuUs, 1)} µs CPU/request\n`);
      }
    }
  }
  for (const arm of ARMS) await stop(arm.child);
  await stop(upstream);
  await stop(sink);
  const lines = [
    `Run ${new Date().toISOString()} with \`node bench/proxy-cpu-ab.mjs\`: ${BURSTS} bursts of ${BURST} s per build and method, builds in turn, all running at once on CPU 0 (load average at the end ${loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}).`,
    '',
    '| build | GET µs CPU/request (median) | GET range | GET req/s (median) | POST µs CPU/request (median) | POST range | POST req/s (median) | non-2xx |',
    '|---|---|---|---|---|---|---|---|',
    ...ARMS.map((arm) => {
      const cell = (method) => {
        const cpu = arm.bursts[method].map((b) => b.cpuUs);
        return `${fmt(median(cpu), 1)} | ${fmt(Math.min(...cpu), 1)}–${fmt(Math.max(...cpu), 1)} | ${fmt(median(arm.bursts[method].map((b) => b.rps)), 0)}`;
      };
      const non2xx = [...arm.bursts.GET, ...arm.bursts.POST].reduce((n, b) => n + b.non2xx, 0);
      return `| ${arm.name} | ${cell('GET')} | ${cell('POST')} | ${non2xx} |`;
    }),
  ];
  const text = `${lines.join('\n')}\n`;
  process.stdout.write(`\n${text}`);
  if (process.env.BENCH_OUT) writeFileSync(process.env.BENCH_OUT, text);
}

run(main, () => rmSync(tmp, { recursive: true, force: true }));
