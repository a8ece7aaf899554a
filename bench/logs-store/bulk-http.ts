/**
 * Ingest over HTTP, as shippers send it: this process is the sender, the logs service a child process
 * of its own (run from source, with the service's node options). Generated events (generate.ts) are
 * made into request bodies first, `_bulk` NDJSON in Filebeat's shape (nested ECS documents, `create`
 * actions, no `_id`) or OTLP/HTTP protobuf (`--otlp`), then sent with keep-alive, `--in-flight`
 * requests at a time. Prints one JSON line: events/s (wall clock), and the CPU an event (µs) of the
 * service (each busy thread too: the event loop, the SQLite writer), of the sender and, for
 * PostgreSQL, of the server's `postgres` processes (those of the URL's port; every one of the machine
 * when that server is not found), read from /proc: steady when the machine
 * is shared. `quiet2CoreEventsPerSecond` turns those into what a quiet 2-core machine would reach with
 * the sender on the same two cores: the lesser of 2 cores over all the CPU an event and 1 core over
 * the busiest thread's. `eventLoopBusy`: the event loop's CPU over the wall clock, how well the
 * pipeline to the writer keeps it fed (docs/benchmarks.md, "the fourth pass").
 *   node --import tsx bench/logs-store/bulk-http.ts [--events 1000000] [--batch 5000] [--in-flight 4]
 *     [--otlp] [--url postgres://…] [--cpu-prof DIR] [--port 9412] [--node-option=--flag …]
 * `--url`: the logs service on PostgreSQL; give it an empty database of its own (the service migrates it).
 * `--cpu-prof DIR`: the service runs with `--cpu-prof` and writes its profile into DIR when it stops
 * (bench/logs-store/profile-top.ts prints the functions that cost the most). BENCH_SERVICE_STDOUT=1
 * shows the service's stdout (with `--node-option=--trace-gc`, its collections).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { generateEvents } from './generate.js';
import { startBenchService } from './bench-service.js';
import { root as otlpRoot } from '../../src/logs/modules/ingest/otlp-proto.js';
import type { LogEntry } from '../../src/logs/modules/store/log-store.js';

const { values: args } = parseArgs({
  options: {
    events: { type: 'string', default: '1000000' },
    batch: { type: 'string', default: '5000' },
    'in-flight': { type: 'string', default: '4' },
    otlp: { type: 'boolean', default: false },
    url: { type: 'string' },
    'cpu-prof': { type: 'string' },
    port: { type: 'string', default: '9412' },
    'node-option': { type: 'string', multiple: true, default: [] },
  },
});
const events = Number(args.events);
const batchSize = Number(args.batch);
const inFlight = Number(args['in-flight']);
const port = Number(args.port);

// ---- the bodies, made before anything is measured

function ecsDocument(entry: LogEntry): unknown {
  const a = entry.attributes!;
  return {
    '@timestamp': new Date(entry.timestamp).toISOString(),
    message: entry.message,
    log: { level: entry.level },
    service: { name: entry.service },
    host: { name: entry.host },
    ...(entry.trace_id ? { trace: { id: entry.trace_id }, span: { id: entry.span_id } } : {}),
    http: { request: { method: a['http.method'] }, route: a['http.route'], response: { status_code: a['http.status_code'] } },
    kubernetes: { pod: { name: a['k8s.pod.name'] } },
    event: { duration: a.duration_ms },
  };
}

const Logs = otlpRoot.lookupType('otlp.ExportLogsServiceRequest');
const SEVERITY: Record<string, number> = { trace: 1, debug: 5, info: 9, warn: 13, error: 17, fatal: 21 };
const str = (value: unknown) => ({ stringValue: String(value) });

function otlpBody(batch: LogEntry[]): Buffer {
  // One resource per service and host, as an SDK or the Collector groups records.
  const byResource = new Map<string, LogEntry[]>();
  for (const entry of batch) {
    const key = `${entry.service}\u0000${entry.host}`;
    byResource.set(key, [...(byResource.get(key) ?? []), entry]);
  }
  const resourceLogs = [...byResource.values()].map((entries) => ({
    resource: {
      attributes: [
        { key: 'service.name', value: str(entries[0]!.service) },
        { key: 'host.name', value: str(entries[0]!.host) },
      ],
    },
    scopeLogs: [
      {
        scope: { name: 'bench' },
        logRecords: entries.map((entry) => ({
          timeUnixNano: String(BigInt(entry.timestamp) * 1_000_000n),
          severityNumber: SEVERITY[entry.level!] ?? 9,
          severityText: entry.level!.toUpperCase(),
          body: str(entry.message),
          attributes: Object.entries(entry.attributes!).map(([key, value]) => ({
            key,
            value: typeof value === 'number' ? { intValue: value } : str(value),
          })),
          ...(entry.trace_id ? { traceId: Buffer.from(entry.trace_id, 'hex'), spanId: Buffer.from(entry.span_id!, 'hex') } : {}),
        })),
      },
    ],
  }));
  return Buffer.from(Logs.encode(Logs.fromObject({ resourceLogs })).finish());
}

const bodies: Buffer[] = [];
let batch: LogEntry[] = [];
const flush = () => {
  if (batch.length === 0) return;
  bodies.push(
    args.otlp
      ? otlpBody(batch)
      : Buffer.from(batch.map((entry) => `{"create":{"_index":"logs"}}\n${JSON.stringify(ecsDocument(entry))}\n`).join('')),
  );
  batch = [];
};
for (const entry of generateEvents(events, 42, events / 10_000_000)) {
  batch.push(entry);
  if (batch.length === batchSize) flush();
}
flush();
const bodyBytes = bodies.reduce((sum, body) => sum + body.length, 0);

// ---- the service

const service = await startBenchService({
  port,
  url: args.url,
  nodeArgs: args['node-option'],
  cpuProf: args['cpu-prof'],
  bodyLimit: Math.max(16_777_216, ...bodies.map((body) => body.length + 1)),
  sockets: inFlight,
  stdout: Boolean(process.env.BENCH_SERVICE_STDOUT),
});
const { send } = service;
const key = await service.apiKey('bench shipper', ['logs:write']);
const headers = args.otlp
  ? { authorization: `ApiKey ${key}`, 'content-type': 'application/x-protobuf' }
  : { authorization: `ApiKey ${key}`, 'content-type': 'application/x-ndjson' };
const path = args.otlp ? '/v1/logs' : '/api/v1/_elastic/_bulk';

// ---- CPU from /proc

function ticksOf(statPath: string): number {
  const stat = readFileSync(statPath, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}
function threadMs(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      out.set(tid === String(pid) ? 'event loop' : `${name} ${tid}`, ticksOf(`/proc/${pid}/task/${tid}/stat`) * 10);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}
/**
 * The `postgres` processes counted: those of the server on the URL's port (its postmaster, found by
 * `-p PORT` on its command line, and its children) when there is one, so that another server of a
 * shared machine is left out; else every `postgres` process of the machine.
 */
function postgresPids(): { pids: string[]; scope: string } {
  const all: { pid: string; ppid: string; command: string }[] = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (!stat.includes('(postgres)')) continue;
      const ppid = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]!;
      all.push({ pid, ppid, command: readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ') });
    } catch {
      // gone meanwhile
    }
  }
  const port = args.url ? new URL(args.url).port || '5432' : '';
  const postmasters = new Set(
    all.filter((process) => new RegExp(`(^| )-p ?${port}( |$)`).test(process.command)).map((process) => process.pid),
  );
  if (postmasters.size === 0) return { pids: all.map((process) => process.pid), scope: 'machine' };
  return {
    pids: all.filter((process) => postmasters.has(process.pid) || postmasters.has(process.ppid)).map((process) => process.pid),
    scope: `port ${port}`,
  };
}
function postgresMs(): number {
  let ticks = 0;
  for (const pid of postgresPids().pids) {
    try {
      ticks += ticksOf(`/proc/${pid}/stat`);
    } catch {
      // gone meanwhile
    }
  }
  return ticks * 10;
}

// A warm-up of a few batches (JIT, statements prepared, first hour tables), not counted.
for (const body of bodies.slice(0, Math.min(4, bodies.length))) {
  const answer = await send('POST', path, headers, body);
  if (answer.status !== 200) throw new Error(`warm-up: ${answer.status} ${answer.text.slice(0, 500)}`);
}
const measured = bodies.slice(Math.min(4, bodies.length));
const measuredEvents = Math.max(0, events - Math.min(4, bodies.length) * batchSize);

const serviceBefore = threadMs(service.process.pid!);
const postgresBefore = args.url ? postgresMs() : 0;
const senderBefore = process.cpuUsage();
const started = performance.now();
let next = 0;
let failures = 0;
const sender = async () => {
  while (next < measured.length) {
    const answer = await send('POST', path, headers, measured[next++]!);
    if (answer.status !== 200 || (!args.otlp && answer.text.includes('"errors":true'))) {
      failures += 1;
      if (failures === 1) process.stderr.write(`a batch failed: ${answer.status} ${answer.text.slice(0, 500)}\n`);
    }
  }
};
await Promise.all(Array.from({ length: inFlight }, sender));
const ms = performance.now() - started;
const senderUsed = process.cpuUsage(senderBefore);
const serviceAfter = threadMs(service.process.pid!);
const postgresUsed = args.url ? postgresMs() - postgresBefore : 0;

const threads = [...serviceAfter]
  .map(([name, after]) => ({ name, ms: after - (serviceBefore.get(name) ?? 0) }))
  .filter((thread) => thread.ms >= 50)
  .sort((a, b) => b.ms - a.ms);
const serviceMs = threads.reduce((sum, thread) => sum + thread.ms, 0);
const senderMs = (senderUsed.user + senderUsed.system) / 1000;
const us = (cpuMs: number) => Number(((cpuMs * 1000) / measuredEvents).toFixed(2));
const totalUs = us(serviceMs + senderMs + postgresUsed);
const busiestUs = Math.max(...threads.map((thread) => us(thread.ms)));
process.stdout.write(
  `${JSON.stringify({
    path,
    dialect: args.url ? 'postgres' : 'sqlite',
    events: measuredEvents,
    batch: batchSize,
    inFlight,
    bytesAnEvent: Math.round(bodyBytes / events),
    failures,
    eventsPerSecond: Math.round(measuredEvents / (ms / 1000)),
    serviceUsPerEvent: us(serviceMs),
    serviceThreadsUsPerEvent: Object.fromEntries(threads.map((thread) => [thread.name, us(thread.ms)])),
    senderUsPerEvent: us(senderMs),
    ...(args.url ? { postgresUsPerEvent: us(postgresUsed), postgresCounted: postgresPids().scope } : {}),
    quiet2CoreEventsPerSecond: Math.round(Math.min(2e6 / totalUs, 1e6 / busiestUs)),
    // The event loop's busy share of the wall clock: how well the pipeline keeps it fed, which the
    // VM's speed (it swings by a third from minute to minute) moves far less than events/s.
    eventLoopBusy: Number(((threads.find((thread) => thread.name === 'event loop')?.ms ?? 0) / ms).toFixed(2)),
    loadAverage: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
  })}\n`,
);
await service.stop();
