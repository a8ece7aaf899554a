/**
 * The same questions asked through the Elasticsearch-compatible API and through our own search API
 * (issue 40: `_search` and `_msearch` within 1.5x of our own). This process is the client; the logs
 * service is a child process run from source (as bulk-http.ts runs it), filled with `--events`
 * generated events (generate.ts, one day) through `_bulk` first. Each question is asked `--rounds`
 * times, alternating the two forms in blocks of `--block` requests, and the service's CPU (utime +
 * stime of /proc/<pid>/stat, every thread; on PostgreSQL also every `postgres` process's) and the
 * wall time are summed per form. Prints one JSON
 * line per question and a summary line: CPU ms a request (service) and wall ms a request, each form,
 * and their ratios (compatible / own). CPU is what to compare on a shared machine.
 *   node --import tsx bench/logs-store/search-compat.ts [--events 200000] [--rounds 6] [--block 20]
 *     [--url postgres://…] [--cpu-prof DIR] [--port 9413] [--only search,histogram,terms,msearch] [--index logs]
 * `--index`: the index the compatible form names (default `logs`, where the documents are: a filter on
 * the stored `_index`, as a shipper's index is searched); `*` reads every entry, as our own API does.
 * `--url`: the logs service on PostgreSQL (an empty database of its own; the service migrates it).
 * `--cpu-prof DIR`: the service's profile is written into DIR when it stops (profile-top.ts reads it).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DAY, DAY_START, generateEvents } from './generate.js';
import { startBenchService } from './bench-service.js';

const { values: args } = parseArgs({
  options: {
    events: { type: 'string', default: '200000' },
    rounds: { type: 'string', default: '6' },
    block: { type: 'string', default: '20' },
    url: { type: 'string' },
    'cpu-prof': { type: 'string' },
    port: { type: 'string', default: '9413' },
    only: { type: 'string' },
    index: { type: 'string', default: 'logs' },
  },
});
const events = Number(args.events);
const rounds = Number(args.rounds);
const block = Number(args.block);
const port = Number(args.port);
const only = args.only ? new Set(args.only.split(',')) : undefined;
/** The index the compatible form names (every document is stored in `logs`); `*` reads the tenant's entries as our API does. */
const index = args.index;
const ROOT = resolve(import.meta.dirname, '../..');

// ---- the service

const service = await startBenchService({ port, url: args.url, cpuProf: args['cpu-prof'] });
const { send } = service;
const key = await service.apiKey('bench', ['logs:write', 'logs:read']);
// One credential for both APIs, so that authentication costs the same on both sides.
const auth = { authorization: `ApiKey ${key}` };

// ---- the store: flat documents through _bulk, 5,000 a request

let batch: string[] = [];
const flush = async () => {
  if (batch.length === 0) return;
  const answer = await send('POST', '/api/v1/_elastic/_bulk', { ...auth, 'content-type': 'application/x-ndjson' }, batch.join(''));
  if (answer.status !== 200 || answer.text.includes('"errors":true'))
    throw new Error(`bulk: ${answer.status} ${answer.text.slice(0, 300)}`);
  batch = [];
};
for (const entry of generateEvents(events, 42, 1)) {
  const document = {
    '@timestamp': new Date(entry.timestamp).toISOString(),
    message: entry.message,
    level: entry.level,
    service: entry.service,
    host: entry.host,
    ...(entry.trace_id ? { trace_id: entry.trace_id, span_id: entry.span_id } : {}),
    ...entry.attributes,
  };
  batch.push(`{"create":{"_index":"logs"}}\n${JSON.stringify(document)}\n`);
  if (batch.length === 5000) await flush();
}
await flush();

// ---- the questions, each asked both ways

const FROM = DAY_START;
const TO = DAY_START + DAY - 1;
const iso = (ms: number) => new Date(ms).toISOString();
const timeRange = { from: iso(FROM), to: iso(TO) };
const QUERY = 'level:error AND service:payroll';
const range = { range: { '@timestamp': { gte: FROM, lte: TO, format: 'epoch_millis' } } };
const elastic = (path: string) => `/api/v1/_elastic${path}`;

type Call = { method: string; path: string; body: string; type?: string };
interface Question {
  name: string;
  compatible: Call[];
  own: Call[];
}
const post = (path: string, body: unknown, type = 'application/json'): Call => ({
  method: 'POST',
  path,
  body: typeof body === 'string' ? body : JSON.stringify(body),
  type,
});
const grafana = (file: string, query: string) =>
  readFileSync(join(ROOT, 'test/fixtures/grafana', file), 'utf8')
    .replaceAll('$FROM', String(FROM))
    .replaceAll('$TO', String(TO))
    .replace(/"query":"host:h1[^"]*"/, `"query":${JSON.stringify(query)}`)
    .replace('"index":"app-*"', `"index":${JSON.stringify(index)}`);

const questions: Question[] = [
  {
    name: 'search',
    compatible: [
      post(elastic(`/${encodeURIComponent(index)}/_search`), {
        size: 100,
        sort: [{ '@timestamp': 'desc' }],
        query: { bool: { filter: [range, { query_string: { query: QUERY } }] } },
      }),
    ],
    own: [post('/api/v1/logs/list/paginate', { query: QUERY, timeRange, limit: 100, sort: { field: '@timestamp', order: 'desc' } })],
  },
  {
    name: 'histogram',
    compatible: [
      post(elastic(`/${encodeURIComponent(index)}/_search`), {
        size: 0,
        query: { bool: { filter: [range, { query_string: { query: QUERY } }] } },
        aggs: {
          over_time: {
            date_histogram: {
              field: '@timestamp',
              fixed_interval: '10m',
              min_doc_count: 0,
              extended_bounds: { min: FROM, max: TO },
              format: 'epoch_millis',
            },
          },
        },
      }),
    ],
    own: [post('/api/v1/logs/histogram', { query: QUERY, timeRange, interval: '10m' })],
  },
  {
    name: 'terms',
    compatible: [
      post(elastic(`/${encodeURIComponent(index)}/_search`), {
        size: 0,
        track_total_hits: true,
        query: { bool: { filter: [range, { query_string: { query: 'level:error' } }] } },
        aggs: { services: { terms: { field: 'service', size: 10 } } },
      }),
    ],
    own: [post('/api/v1/logs/fields/service/stats', { query: 'level:error', timeRange, size: 10 })],
  },
  {
    name: 'msearch',
    // Grafana's Explore on a log query: the logs-volume request (by level) and the logs request (500 lines and a histogram).
    compatible: [
      post(
        elastic('/_msearch'),
        grafana('logs-volume.ndjson', 'host:node-01') + grafana('logs.ndjson', 'host:node-01'),
        'application/x-ndjson',
      ),
    ],
    own: [
      post('/api/v1/logs/histogram', { query: 'host:node-01', timeRange, interval: '10m', groupBy: 'level' }),
      post('/api/v1/logs/list/paginate', { query: 'host:node-01', timeRange, limit: 500, sort: { field: '@timestamp', order: 'desc' } }),
      post('/api/v1/logs/histogram', { query: 'host:node-01', timeRange, interval: '10m' }),
    ],
  },
];

function ticksOf(statPath: string): number {
  const stat = readFileSync(statPath, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}
/** CPU ticks by process: the service, and on PostgreSQL every `postgres` process of this machine (where the queries run). */
function cpuTicks(): Map<string, number> {
  const ticks = new Map([['service', ticksOf(`/proc/${service.process.pid}/stat`)]]);
  if (args.url) {
    for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
      try {
        if (readFileSync(`/proc/${pid}/stat`, 'utf8').includes('(postgres)')) ticks.set(pid, ticksOf(`/proc/${pid}/stat`));
      } catch {
        // gone meanwhile
      }
    }
  }
  return ticks;
}
/** CPU ms spent since `before` by the processes alive at the end (a process that exited meanwhile is not counted). */
function cpuMsSince(before: Map<string, number>): number {
  let ticks = 0;
  for (const [pid, after] of cpuTicks()) ticks += after - (before.get(pid) ?? 0);
  return ticks * 10;
}

async function ask(calls: Call[]) {
  for (const call of calls) {
    const answer = await send(call.method, call.path, { ...auth, 'content-type': call.type ?? 'application/json' }, call.body);
    if (answer.status !== 200 || answer.text.includes('"status":4')) {
      throw new Error(`${call.path}: ${answer.status} ${answer.text.slice(0, 300)}`);
    }
  }
}

const results = [];
for (const question of questions) {
  if (only && !only.has(question.name)) continue;
  // Warm-up: JIT, prepared statements, the page cache.
  for (let i = 0; i < 3; i += 1) {
    await ask(question.compatible);
    await ask(question.own);
  }
  const spent = { compatible: { cpu: 0, wall: 0 }, own: { cpu: 0, wall: 0 } };
  for (let round = 0; round < rounds; round += 1) {
    for (const form of round % 2 === 0 ? (['compatible', 'own'] as const) : (['own', 'compatible'] as const)) {
      const cpu = cpuTicks();
      const started = performance.now();
      for (let i = 0; i < block; i += 1) await ask(question[form]);
      spent[form].wall += performance.now() - started;
      spent[form].cpu += cpuMsSince(cpu);
    }
  }
  const n = rounds * block;
  const line = {
    question: question.name,
    requests: n,
    compatibleCpuMs: Number((spent.compatible.cpu / n).toFixed(2)),
    ownCpuMs: Number((spent.own.cpu / n).toFixed(2)),
    cpuRatio: Number((spent.compatible.cpu / Math.max(1, spent.own.cpu)).toFixed(2)),
    compatibleWallMs: Number((spent.compatible.wall / n).toFixed(2)),
    ownWallMs: Number((spent.own.wall / n).toFixed(2)),
    wallRatio: Number((spent.compatible.wall / spent.own.wall).toFixed(2)),
  };
  results.push(line);
  process.stdout.write(`${JSON.stringify(line)}\n`);
}
process.stdout.write(
  `${JSON.stringify({
    dialect: args.url ? 'postgres' : 'sqlite',
    index,
    events,
    worstCpuRatio: Math.max(...results.map((line) => line.cpuRatio)),
    worstWallRatio: Math.max(...results.map((line) => line.wallRatio)),
    loadAverage: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
  })}\n`,
);
await service.stop();
