#!/usr/bin/env node
// Splits a V8 CPU profile (.cpuprofile, from `node --cpu-prof`) of the gateway by component. Each
// sample goes to the innermost frame of its stack that belongs to one of the gateway's components
// (so the Node stream and socket calls a component makes are its cost: the access line's writes
// count as the access line's); samples with no such frame go to Node's HTTP server (parsing,
// sockets, timers), GC or the rest (V8 and native code without a JavaScript frame). Idle samples
// are left out: shares are of the busy samples.
//   node bench/profile-components.mjs file.cpuprofile [last seconds]   (prints the shares and the top frames)
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

/** In matching order: the first whose test passes for a frame claims it. */
export const COMPONENTS = [
  {
    name: 'token check',
    test: (url) =>
      /\/auth\/(authenticate|tokens|token-wrapping|session-cache|sessions\.repository|token-cache)\.js|\/shared\/auth\/|node_modules\/(jose|kysely)\//.test(
        url,
      ),
  },
  {
    name: 'access line',
    test: (url) =>
      /node_modules\/(pino|sonic-boom|quick-format|fast-redact|on-exit-leak-free|thread-stream)|shared\/http\/(logger|access-log)\.js|proxy\/access-line\.js/.test(
        url,
      ),
  },
  { name: 'metrics', test: (url) => /proxy\.metrics\.js|node_modules\/prom-client\//.test(url) },
  { name: 'telemetry', test: (url) => /\/telemetry\//.test(url) },
  {
    name: 'header rules',
    test: (url) => /proxy\/(headers|client-facts|header-rules)\.js|node_modules\/(@fastify\/proxy-addr|cookie)\//.test(url),
  },
  { name: 'drain and body deadline', test: (url) => /shared\/http\/(drain|create-server)\.js/.test(url) },
  { name: 'relay: undici', test: (url) => /node_modules\/undici\/|proxy\/(upstream|circuit-breaker)\.js/.test(url) },
  {
    name: 'relay: handler',
    test: (url) => /proxy\/(proxy-handler|path-guard|services)\.js|shared\/http\/request-context\.js|gateway\/http\//.test(url),
  },
  { name: 'fastify', test: (url) => /node_modules\/(fastify|@fastify|find-my-way|avvio|light-my-request)\//.test(url) },
];
const NODE = 'Node HTTP server, streams, timers';
const GC = 'GC';
const OTHER = 'V8/native, no JS frame';
export const ALL_NAMES = [...COMPONENTS.map((c) => c.name), NODE, GC, OTHER];

/**
 * `lastSeconds`: only the samples of the profile's last seconds (the measured runs, without the
 * process's start-up and warm-up).
 */
export function componentsOf(profile, { lastSeconds = Infinity } = {}) {
  // Each sample's time: the profile's start plus the deltas so far (µs).
  const times = [];
  let t = profile.startTime;
  for (const delta of profile.timeDeltas) times.push((t += delta));
  const from = profile.endTime - lastSeconds * 1e6;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const claim = new Map(); // node id -> component name (memoised)
  const claimOf = (id) => {
    if (claim.has(id)) return claim.get(id);
    const node = byId.get(id);
    const { functionName, url } = node.callFrame;
    let name;
    if (functionName === '(garbage collector)') name = GC;
    else if (functionName === '(idle)') name = null;
    else if (functionName === '(program)' || functionName === '(root)') name = OTHER;
    else {
      const own = url ? COMPONENTS.find((c) => c.test(url))?.name : undefined;
      if (own) name = own;
      else {
        const up = parent.get(id);
        const above = up === undefined ? OTHER : claimOf(up);
        // Nothing of the gateway's above: Node's own work (the server parsing, sockets, timers).
        name = above === OTHER || above === null ? NODE : above;
      }
    }
    claim.set(id, name);
    return name;
  };
  const counts = new Map();
  const self = new Map();
  let busy = 0;
  for (let i = 0; i < profile.samples.length; i += 1) {
    if (times[i] < from) continue;
    const id = profile.samples[i];
    const name = claimOf(id);
    if (name === null) continue;
    busy += 1;
    counts.set(name, (counts.get(name) ?? 0) + 1);
    const { functionName, url, lineNumber } = byId.get(id).callFrame;
    const frame = `${functionName || '(anonymous)'} ${url ? `${basename(url)}:${lineNumber + 1}` : ''} [${name}]`;
    self.set(frame, (self.get(frame) ?? 0) + 1);
  }
  const shares = new Map([...counts].map(([name, count]) => [name, count / busy]));
  const top = [...self]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 25)
    .map(([name, count]) => ({ name, share: count / busy }));
  return { shares, top, busy };
}

if (process.argv[1] && import.meta.url.endsWith(basename(process.argv[1]))) {
  const lastSeconds = process.argv[3] === undefined ? Infinity : Number(process.argv[3]);
  const { shares, top, busy } = componentsOf(JSON.parse(readFileSync(process.argv[2], 'utf8')), { lastSeconds });
  process.stdout.write(`${busy} busy samples\n`);
  for (const name of ALL_NAMES) process.stdout.write(`${((shares.get(name) ?? 0) * 100).toFixed(1).padStart(5)}%  ${name}\n`);
  process.stdout.write('\ntop self-time frames:\n');
  for (const { name, share } of top) process.stdout.write(`${(share * 100).toFixed(1).padStart(5)}%  ${name}\n`);
}
