#!/usr/bin/env node
// The gateway's allocations per proxied request, and where they are made: what its garbage collector
// has to clear, measured as bytes rather than time, so the count does not move with the machine's
// load. `cli.js gateway` runs with the inspector on loopback; after a warm-up V8's sampling heap
// profiler is switched on (keeping the objects minor and major GCs collected, so it counts every
// allocation, not only what survives) for a wrk run, and the samples are summed per request and by
// allocating function. As deployed: token check, access log at info, metrics, telemetry shipped to
// bench/otlp-sink.mjs (span sampling 0.1). GET of 1 KiB and POST of a 1 KiB JSON body.
//
// Needs: `npm run build`, wrk. Options (env): BENCH_DURATION (5 s), BENCH_CONNECTIONS (50),
// BENCH_TOP (25 sites), BENCH_DIST (the build; default dist/), BENCH_INTERVAL (sampling, bytes: 256),
// BENCH_LIVE=1 (only what is still alive when sampling stops: what outlives its request).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import WebSocket from 'ws';
import { HERE, ROOT, benchGatewayEnv, fmt, gatewayLogin, run, start, stop, waitForPort, wrk } from './lib.mjs';

const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const TOP = Number(process.env.BENCH_TOP ?? 25);
const INTERVAL = Number(process.env.BENCH_INTERVAL ?? 256);
const LIVE = process.env.BENCH_LIVE === '1';
const DIST = process.env.BENCH_DIST ?? join(ROOT, 'dist');
const PORTS = { upstream: 9331, gateway: 9333, sink: 9335, inspector: 9339 };
const PASSWORD = 'Bench#Passw0rd1';
const tmp = mkdtempSync(join(tmpdir(), 'gerbang-allocations-'));

/** A minimal Chrome DevTools Protocol session over the inspector's WebSocket. */
async function inspectorSession(port) {
  const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
  const socket = new WebSocket(targets[0].webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  let next = 0;
  const pending = new Map();
  socket.on('message', (data) => {
    const message = JSON.parse(String(data));
    const waiting = pending.get(message.id);
    if (!waiting) return;
    pending.delete(message.id);
    if (message.error) waiting.reject(new Error(message.error.message));
    else waiting.resolve(message.result);
  });
  return {
    send: (method, params = {}) =>
      new Promise((resolve, reject) => {
        next += 1;
        pending.set(next, { resolve, reject });
        socket.send(JSON.stringify({ id: next, method, params }));
      }),
    close: () => socket.close(),
  };
}

/** Sums a sampling heap profile's nodes by allocating function (name and place). */
function sitesOf(profile) {
  const sites = new Map();
  let total = 0;
  const walk = (node) => {
    const frame = node.callFrame;
    if (node.selfSize > 0) {
      const where = frame.url ? `${relative(ROOT, frame.url.replace(/^file:\/\//, ''))}:${frame.lineNumber + 1}` : '(native)';
      const key = `${frame.functionName || '(anonymous)'} ${where}`;
      sites.set(key, (sites.get(key) ?? 0) + node.selfSize);
      total += node.selfSize;
    }
    for (const child of node.children) walk(child);
  };
  walk(profile.head);
  return { total, sites: [...sites].sort((a, b) => b[1] - a[1]) };
}

async function main() {
  const upstream = start('upstream', 'taskset', ['-c', '1', process.execPath, join(HERE, 'upstream.mjs'), String(PORTS.upstream)]);
  const sink = start('sink', 'taskset', ['-c', '1', process.execPath, join(HERE, 'otlp-sink.mjs'), String(PORTS.sink)]);
  await waitForPort(PORTS.upstream);
  await waitForPort(PORTS.sink);
  const dataDir = join(tmp, 'gateway');
  mkdirSync(dataDir, { recursive: true });
  const gateway = start(
    'gateway',
    'taskset',
    ['-c', '0', process.execPath, `--inspect=127.0.0.1:${PORTS.inspector}`, join(DIST, 'cli.js'), 'gateway'],
    {
      env: benchGatewayEnv({
        port: PORTS.gateway,
        dataDir: dataDir,
        password: PASSWORD,
        upstreamPort: PORTS.upstream,
        sinkPort: PORTS.sink,
      }),
    },
  );
  await waitForPort(PORTS.gateway);
  const token = await gatewayLogin(PORTS.gateway, PASSWORD);
  const url = `http://127.0.0.1:${PORTS.gateway}/api/v1/master-data/1k`;
  const options = { connections: CONNECTIONS, token, cpus: '1' };
  wrk(url, { ...options, duration: 3 }); // warm-up: JIT, pools
  wrk(url, { ...options, duration: 2, script: 'post-1k.lua' });
  const session = await inspectorSession(PORTS.inspector);
  const lines = [];
  for (const [method, script] of [
    ['GET', undefined],
    ['POST', 'post-1k.lua'],
  ]) {
    await session.send('HeapProfiler.startSampling', {
      samplingInterval: INTERVAL,
      includeObjectsCollectedByMajorGC: !LIVE,
      includeObjectsCollectedByMinorGC: !LIVE,
    });
    const result = wrk(url, { ...options, duration: DURATION, script });
    const { profile } = await session.send('HeapProfiler.stopSampling');
    const { total, sites } = sitesOf(profile);
    lines.push(
      `### ${method}: ${fmt(total / result.requests, 0)} bytes ${LIVE ? 'still alive at the end' : 'allocated'} a request (${result.requests} requests)`,
      '',
    );
    lines.push('| bytes a request | share | where |', '|---|---|---|');
    for (const [site, bytes] of sites.slice(0, TOP))
      lines.push(`| ${fmt(bytes / result.requests, 0)} | ${fmt((100 * bytes) / total, 1)} % | ${site} |`);
    lines.push('');
  }
  session.close();
  await stop(gateway);
  await stop(upstream);
  await stop(sink);
  process.stdout.write(`${lines.join('\n')}\n`);
}

run(main, () => rmSync(tmp, { recursive: true, force: true }));
