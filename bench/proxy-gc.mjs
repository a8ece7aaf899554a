#!/usr/bin/env node
// What the gateway's young-generation collections cost and why: `cli.js gateway` (or, with
// BENCH_TARGET=floor, bench/node-floor.mjs) runs under V8's --trace-gc-nvp while wrk drives it, and
// the scavenges of the run are summed: their pauses per request, the share of each scavenge's
// allocations that survived it, and what was promoted to the old generation. A relay's objects live
// for one request, so almost nothing should survive a scavenge; a high survival share means
// something keeps requests alive (docs/performance-notes.md, "Gateway"). Counts, not timings: the
// survival and promotion figures do not move with the machine's load. As deployed: token check,
// access log at info, metrics, telemetry to bench/otlp-sink.mjs (span sampling 0.1).
//
// Needs: `npm run build`, wrk. Options (env): BENCH_DURATION (5 s), BENCH_CONNECTIONS (50),
// BENCH_METHOD (GET or POST: a 1 KiB JSON body), BENCH_TARGET (gateway or floor), BENCH_DIST.
import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HERE, ROOT, benchGatewayEnv, fmt, gatewayLogin, run, start, stop, waitForPort, wrk } from './lib.mjs';

const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const METHOD = process.env.BENCH_METHOD ?? 'GET';
const TARGET = process.env.BENCH_TARGET ?? 'gateway';
const DIST = process.env.BENCH_DIST ?? join(ROOT, 'dist');
const PORTS = { upstream: 9341, gateway: 9343, sink: 9345 };
const PASSWORD = 'Bench#Passw0rd1';
const tmp = mkdtempSync(join(tmpdir(), 'gerbang-proxy-gc-'));

/** The fields of a --trace-gc-nvp line (`name=value`), numbers where they are. */
function fieldsOf(line) {
  const fields = new Map();
  for (const match of line.matchAll(/(\w[\w.]*)=(\S+)/g)) fields.set(match[1], Number.parseFloat(match[2]));
  return fields;
}

async function main() {
  const upstream = start('upstream', 'taskset', ['-c', '1', process.execPath, join(HERE, 'upstream.mjs'), String(PORTS.upstream)]);
  const sink = start('sink', 'taskset', ['-c', '1', process.execPath, join(HERE, 'otlp-sink.mjs'), String(PORTS.sink)]);
  await waitForPort(PORTS.upstream);
  await waitForPort(PORTS.sink);
  // V8 writes its trace to stdout through C's buffered stdio: to a file, read once the process has exited.
  const traceFile = join(tmp, 'trace.txt');
  const program =
    TARGET === 'floor'
      ? [join(HERE, 'node-floor.mjs'), String(PORTS.gateway), `http://127.0.0.1:${PORTS.upstream}`]
      : [join(DIST, 'cli.js'), 'gateway'];
  const target = start(TARGET, 'taskset', ['-c', '0', process.execPath, '--trace-gc-nvp', ...program], {
    stdio: ['ignore', openSync(traceFile, 'w'), 'pipe'],
    env: benchGatewayEnv({ port: PORTS.gateway, dataDir: tmp, password: PASSWORD, upstreamPort: PORTS.upstream, sinkPort: PORTS.sink }),
  });
  await waitForPort(PORTS.gateway);
  const token = TARGET === 'floor' ? undefined : await gatewayLogin(PORTS.gateway, PASSWORD);
  const url = `http://127.0.0.1:${PORTS.gateway}/api/v1/master-data/1k`;
  const options = { connections: CONNECTIONS, token, cpus: '1', script: METHOD === 'POST' ? 'post-1k.lua' : undefined };
  wrk(url, { ...options, duration: 3 }); // warm-up: JIT, pools
  const warmTrace = readFileSync(traceFile, 'utf8').split('\n').length;
  const result = wrk(url, { ...options, duration: DURATION });
  await stop(target);
  await stop(upstream);
  await stop(sink);
  // The scavenges after the warm-up (the buffered trace may hold a few of its last ones: a small bias).
  const scavenges = readFileSync(traceFile, 'utf8')
    .split('\n')
    .slice(warmTrace - 1)
    .filter((line) => / gc=s /.test(line))
    .map(fieldsOf);
  const sum = (name) => scavenges.reduce((total, fields) => total + (fields.get(name) ?? 0), 0);
  const allocated = sum('allocated');
  process.stdout.write(
    [
      `${TARGET === 'floor' ? 'node floor' : 'gateway'}, ${METHOD}: ${result.requests} requests (${fmt(result.rps, 0)}/s, p99 ${fmt(result.p99)} ms), ${scavenges.length} scavenges`,
      `  pause: ${fmt(sum('pause') / Math.max(1, scavenges.length), 1)} ms a scavenge, ${fmt((sum('pause') * 1000) / result.requests, 1)} µs a request`,
      `  allocated: ${fmt(allocated / 1024 / result.requests, 1)} KiB a request`,
      `  survived a scavenge: ${fmt((100 * sum('new_space_survived')) / allocated, 1)} % of what was allocated; promoted: ${fmt(sum('promoted') / 1024 / Math.max(1, scavenges.length), 0)} KiB a scavenge`,
      '',
    ].join('\n'),
  );
}

run(main, () => rmSync(tmp, { recursive: true, force: true }));
