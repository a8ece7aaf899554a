/**
 * Ingest alone: generated batches are made first, then appended through the LogStore (as run.ts does,
 * without the generator, the NDJSON copy or the queries in the measured time), so that a change to the
 * write path can be compared run against run, before and after. The database is opened as the logs
 * service opens it (SQLite writes on their own thread).
 *   node --max-semi-space-size=64 --import tsx bench/logs-store/ingest.ts [--dialect sqlite|postgres] [--url ...] [--events 500000] [--in-flight 1]
 * The events are as dense as 10M a day (a batch of 5,000 spans about 43 seconds). Prints one JSON line:
 * events/s, µs an event, the longest stall of the event loop, the process's CPU (user and system, ms)
 * and, for PostgreSQL, the CPU of every `postgres` process of this machine (the server must run here,
 * as bench/logs-store/postgres-server.mjs does).
 */
import { asTheService } from './service-runtime.js';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { openDatabase } from '../../src/shared/db/database.js';
import { migrateToLatest } from '../../src/shared/db/migrator.js';
import { createLogStore, sqliteThreadDialect, type LogEntry } from '../../src/logs/modules/store/index.js';
import { logsMigrations } from '../../src/logs/db/migrations/index.js';
import { generateEvents } from './generate.js';

const { values: args } = parseArgs({
  options: {
    dialect: { type: 'string', default: 'sqlite' },
    url: { type: 'string' },
    events: { type: 'string', default: '500000' },
    batch: { type: 'string', default: '5000' },
    file: { type: 'string', default: '/tmp/gerbang-bench-ingest.sqlite' },
    'in-flight': { type: 'string', default: '1' },
  },
});
const events = Number(args.events);
const batchSize = Number(args.batch);
if (args.dialect === 'sqlite') for (const suffix of ['', '-wal', '-shm']) rmSync(args.file + suffix, { force: true });
const url = args.dialect === 'sqlite' ? `sqlite:${args.file}` : args.url;
if (!url) throw new Error('--url postgres://... is required for --dialect postgres');
const database = await openDatabase<any>(url, { sqliteThread: sqliteThreadDialect });
if (args.dialect === 'postgres') {
  await sql`DROP TABLE IF EXISTS log_entries, log_blocks, log_rollups, log_host_rollups, log_rollups_hourly, log_host_rollups_hourly, log_index_rollups, log_index_rollups_hourly, log_fields, log_facet_values, log_unfaceted_fields, log_document_ids, log_retention_floors, log_batches, log_postings, logs_migrations, logs_migrations_lock CASCADE`.execute(
    database.db,
  );
}
await migrateToLatest(database.db, logsMigrations, 'logs');
const store = createLogStore(database.db, database.dialect, {});

const batches: LogEntry[][] = [];
let batch: LogEntry[] = [];
for (const entry of generateEvents(events, 42, events / 10_000_000)) {
  batch.push(entry);
  if (batch.length === batchSize) {
    batches.push(batch);
    batch = [];
  }
}
if (batch.length > 0) batches.push(batch);

/** CPU time (user + system, ms) of this machine's `postgres` processes (Linux /proc). */
function postgresCpuMs(): number {
  let ticks = 0;
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (!stat.includes('(postgres)')) continue;
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // gone meanwhile
    }
  }
  return ticks * 10; // 100 ticks a second
}

/** CPU time (ms) of each thread of this process that used at least 50 ms (Linux /proc): the event loop, the SQLite thread, V8's helpers. */
function threadCpuMs(): Map<string, number> {
  const byThread = new Map<string, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      byThread.set(tid, (Number(fields[11]) + Number(fields[12])) * 10);
    } catch {
      // gone meanwhile
    }
  }
  return byThread;
}

// The longest the event loop went without a turn while batches were written (a 1 ms timer's gaps).
let lastTick = performance.now();
let longestStall = 0;
const ticker = setInterval(() => {
  const now = performance.now();
  longestStall = Math.max(longestStall, now - lastTick);
  lastTick = now;
}, 1);
const start = performance.now();
const cpu = process.cpuUsage();
const threadsBefore = threadCpuMs();
const serverBefore = args.dialect === 'postgres' ? postgresCpuMs() : 0;
// `--in-flight N`: N appends at a time, as N shippers (or one with requests in parallel) send them.
let next = 0;
const appender = async () => {
  while (next < batches.length) {
    await store.append('bench', batches[next++]!);
    // A turn of the event loop between batches, as a service has between requests.
    await new Promise((resolve) => setImmediate(resolve));
  }
};
await Promise.all(Array.from({ length: Number(args['in-flight']) }, appender));
const ms = performance.now() - start;
clearInterval(ticker);
longestStall = Math.max(longestStall, performance.now() - lastTick);
const used = process.cpuUsage(cpu);
// The threads' CPU over the appends, busiest first: the event loop is the one whose id is the process's.
const threads = [...threadCpuMs()]
  .map(([thread, ms]) => ({ thread: thread === String(process.pid) ? 'event loop' : thread, ms: ms - (threadsBefore.get(thread) ?? 0) }))
  .filter((thread) => thread.ms >= 50)
  .sort((a, b) => b.ms - a.ms);
const serverMs = args.dialect === 'postgres' ? postgresCpuMs() - serverBefore : undefined;
process.stdout.write(
  `${JSON.stringify({
    dialect: args.dialect,
    events,
    eventsPerSecond: Math.round(events / (ms / 1000)),
    usPerEvent: Number(((ms * 1000) / events).toFixed(1)),
    inFlight: Number(args['in-flight']),
    asTheService,
    longestStallMs: Math.round(longestStall),
    cpuUserMs: Math.round(used.user / 1000),
    cpuSystemMs: Math.round(used.system / 1000),
    threadCpuMs: Object.fromEntries(threads.map((thread) => [thread.thread, thread.ms])),
    ...(serverMs === undefined ? {} : { serverCpuMs: serverMs, serverUsPerEvent: Number(((serverMs * 1000) / events).toFixed(1)) }),
  })}\n`,
);
await database.close();
