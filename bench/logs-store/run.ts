/**
 * Log store benchmark: ingest N generated events through the LogStore (as the ingestion routes do),
 * then measure search, histogram and distinct latency, and ripgrep over the same data as NDJSON.
 *   node --max-semi-space-size=64 --import tsx bench/logs-store/run.ts --dialect sqlite --events 1000000 [--url ...] [--dir /tmp/x]
 *     [--days 10] [--retention [--neighbour]] [--concurrency 2] [--queries-only] [--read-pool] [--no-ndjson]
 * Prints a JSON result and appends it to bench/logs-store/results.ndjson.
 */
import { asTheService } from './service-runtime.js';
import { execFileSync } from 'node:child_process';
import { appendFileSync, createWriteStream, mkdirSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openDatabase } from '../../src/shared/db/database.js';
import { migrateToLatest } from '../../src/shared/db/migrator.js';
import {
  createLogStore,
  DEFAULT_TRACK_TOTAL,
  openStoreReads,
  sqliteThreadDialect,
  type LogEntry,
  type LogStore,
} from '../../src/logs/modules/store/index.js';
import { logsMigrations } from '../../src/logs/db/migrations/index.js';
import { DAY, DAY_START, generateEvents } from './generate.js';
import { searchCondition } from '../../src/logs/modules/query/condition.js';

const { values: args } = parseArgs({
  options: {
    dialect: { type: 'string', default: 'sqlite' },
    events: { type: 'string', default: '1000000' },
    batch: { type: 'string', default: '5000' },
    url: { type: 'string' },
    dir: { type: 'string', default: '/tmp/gerbang-bench-logs' },
    runs: { type: 'string', default: '40' },
    keep: { type: 'boolean', default: false },
    // Re-measure the queries on the store a previous run left (SQLite file / PostgreSQL tables).
    'queries-only': { type: 'boolean', default: false },
    // Passes over the whole query set; the last one is reported (earlier ones warm the page cache
    // for every 1-hour window the runs use, as steady use of recent hours would).
    passes: { type: 'string', default: '2' },
    // Reads as the logs service runs them: worker-thread pool (SQLite) / statement_timeout pool (PostgreSQL), 30 s budget.
    'read-pool': { type: 'boolean', default: false },
    // The events spread over this many days (10M events a day for ten days: --events 100000000 --days 10);
    // the queries ask about the last day.
    days: { type: 'string', default: '1' },
    // After the queries: remove the first day by retention while batches keep arriving, and time both.
    retention: { type: 'boolean', default: false },
    // With --retention: another tenant logs one entry an hour on every day, so that the removed day's
    // hours are shared (PostgreSQL then deletes the tenant's rows partition by partition).
    neighbour: { type: 'boolean', default: false },
    // Batches in flight at once, as several shippers send them to the logs service (PostgreSQL
    // writes them on several connections; SQLite's one writer takes them in turn).
    concurrency: { type: 'string', default: '1' },
    // Without the NDJSON copy (and ripgrep): its 3.3 GB a day, written back beside the store, slowed
    // SQLite's fsync'd commits after about 5M events (docs/benchmarks.md, "Issue 15: SQLite at 10M").
    'no-ndjson': { type: 'boolean', default: false },
  },
});
const dialect = args.dialect as 'sqlite' | 'postgres';
const events = Number(args.events);
const batchSize = Number(args.batch);
const days = Number(args.days);
const runs = Number(args.runs);
const HOUR = 3_600_000;
const TENANT = 'bench';

mkdirSync(args.dir!, { recursive: true });
const sqlitePath = join(args.dir!, `logs-${events}.sqlite`);
const ndjsonPath = join(args.dir!, `logs-${events}.ndjson`);
const queriesOnly = args['queries-only'];
if (dialect === 'sqlite' && !queriesOnly) for (const suffix of ['', '-wal', '-shm']) rmSync(sqlitePath + suffix, { force: true });
const url = dialect === 'sqlite' ? `sqlite:${sqlitePath}` : args.url;
if (!url) throw new Error('--url postgres://... is required for --dialect postgres');

// As the logs service opens it: SQLite's writes on their own thread (docs/log-store.md, "The SQLite
// thread"), reads on the event loop's connection.
const database = await openDatabase<any>(url, { sqliteThread: sqliteThreadDialect });
if (dialect === 'postgres' && !queriesOnly) {
  // A clean slate in the given database.
  const { sql } = await import('kysely');
  await sql`DROP TABLE IF EXISTS log_entries, log_blocks, log_rollups, log_host_rollups, log_rollups_hourly, log_host_rollups_hourly, log_index_rollups, log_index_rollups_hourly, log_fields, log_facet_values, log_unfaceted_fields, log_document_ids, log_retention_floors, log_batches, log_postings, logs_migrations, logs_migrations_lock CASCADE`.execute(
    database.db,
  );
}
await migrateToLatest(database.db, logsMigrations, 'logs');
const reads = args['read-pool'] ? await openStoreReads(url, database.db, { timeoutMs: 30_000, workers: 2 }) : undefined;
const store: LogStore = createLogStore(database.db, database.dialect, reads ? { reads: reads.db, readTimeoutMs: 30_000 } : {});

// ---- ingest -------------------------------------------------------------------------------------
// The NDJSON copy is ripgrep's input: one day only (with more days it would only fill the disk).
const writesNdjson = !queriesOnly && days === 1 && !args['no-ndjson'];
const ndjson = createWriteStream(writesNdjson ? ndjsonPath : '/dev/null');
let batch: LogEntry[] = [];
let ingestMs = 0;
const loadBefore = loadavg()[0];
const cpuBefore = process.cpuUsage();
let generated = 0;
const concurrency = Number(args.concurrency);
const appending = new Set<Promise<void>>();
const GENERATED_PER_TURN = 500;
// The store's busy time: while at least one batch is in flight (with one at a time, the sum of the appends).
let busySince = 0;
for (const entry of queriesOnly ? [] : generateEvents(events, 42, days)) {
  batch.push(entry);
  if (batch.length === batchSize) {
    await flush();
  } else if (concurrency > 1 && batch.length % GENERATED_PER_TURN === 0) {
    // With batches in flight the generator runs while they are written: in slices, as a service parses
    // requests between turns of the event loop, so that it does not hold the SQLite thread's replies
    // for a whole batch's making (8–9 ms).
    await new Promise((resolve) => setImmediate(resolve));
  }
}
if (batch.length > 0) await flush();
await Promise.all(appending);
if (queriesOnly) generated = events;
await new Promise<void>((resolve) => ndjson.end(resolve));
const loadAfterIngest = loadavg()[0];

async function flush(): Promise<void> {
  const entries = batch;
  batch = [];
  // The NDJSON copy for ripgrep, written before the batch is handed over: with one batch at a time it
  // stays outside the measured time.
  if (writesNdjson) {
    const lines = entries
      .map((entry) => JSON.stringify({ '@timestamp': new Date(entry.timestamp).toISOString(), ...entry, timestamp: undefined }))
      .join('\n');
    if (!ndjson.write(`${lines}\n`)) await new Promise<void>((resolve) => ndjson.once('drain', () => resolve()));
  }
  if (appending.size === 0) busySince = performance.now();
  const append = store.append(TENANT, entries).then(() => {
    appending.delete(append);
    if (appending.size === 0) ingestMs += performance.now() - busySince;
    generated += entries.length;
    if (generated % 1_000_000 === 0) {
      // With batches still in flight, the busy time so far includes the current stretch.
      const busyMs = ingestMs + (appending.size > 0 ? performance.now() - busySince : 0);
      process.stderr.write(`ingested ${generated} (${Math.round(generated / (busyMs / 1000))} events/s)\n`);
    }
  });
  appending.add(append);
  if (appending.size >= concurrency) await Promise.race(appending);
}

// ---- queries ------------------------------------------------------------------------------------
if (dialect === 'postgres') {
  // Fresh hour partitions have no statistics until autovacuum analyzes them (within about a minute
  // of filling, in steady state); without them the planner guesses a handful of rows per partition.
  const { sql } = await import('kysely');
  const start = performance.now();
  await sql`ANALYZE log_blocks, log_batches, log_postings`.execute(database.db);
  process.stderr.write(`ANALYZE log_blocks: ${Math.round(performance.now() - start)} ms\n`);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function measure(
  name: string,
  run: (i: number) => Promise<unknown>,
): Promise<{ name: string; p50: number; p95: number; sample: unknown }> {
  let sample: unknown;
  await run(0); // warm-up
  const times: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    const start = performance.now();
    sample = await run(i);
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  const result = { name, p50: round(percentile(times, 50)), p95: round(percentile(times, 95)), sample };
  process.stderr.write(`${name}: p50 ${result.p50} ms, p95 ${result.p95} ms\n`);
  return result;
}

const round = (ms: number): number => Math.round(ms * 100) / 100;
// A different 1-hour window each run, inside the day.
const LAST_DAY = DAY_START + (days - 1) * DAY;
const hourWindow = (i: number): { from: number; to: number } => {
  const from = LAST_DAY + ((i * 7) % 23) * HOUR + 13 * 60_000;
  return { from, to: from + HOUR - 1 };
};
const fullDay = { from: LAST_DAY, to: LAST_DAY + DAY - 1 };
const autoInterval = 24 * 60_000; // about 60 buckets over a day

let results: Awaited<ReturnType<typeof measure>>[] = [];
for (let passNumber = 1; passNumber <= Number(args.passes); passNumber += 1) {
  process.stderr.write(`-- pass ${passNumber}\n`);
  const pass: Awaited<ReturnType<typeof measure>>[] = [];
  pass.push(
    await measure(
      'search: selective word, 1 h ("declined")',
      async (i) =>
        (
          await store.search({
            tenantId: TENANT,
            condition: searchCondition('declined'),
            ...hourWindow(i),
            page: 1,
            limit: 50,
            trackTotal: DEFAULT_TRACK_TOTAL,
          })
        ).total,
    ),
  );
  pass.push(
    await measure(
      'search: phrase + field, 1 h ("connection timeout" service:gateway)',
      async (i) =>
        (
          await store.search({
            tenantId: TENANT,
            condition: searchCondition('"connection timeout" service:gateway'),
            ...hourWindow(i),
            page: 1,
            limit: 50,
            trackTotal: DEFAULT_TRACK_TOTAL,
          })
        ).total,
    ),
  );
  pass.push(
    await measure(
      'search: common word, 1 h ("completed")',
      async (i) =>
        (
          await store.search({
            tenantId: TENANT,
            condition: searchCondition('completed'),
            ...hourWindow(i),
            page: 1,
            limit: 50,
            trackTotal: DEFAULT_TRACK_TOTAL,
          })
        ).total,
    ),
  );
  pass.push(
    await measure(
      'search: prefix, 1 h ("declin*")',
      async (i) =>
        (
          await store.search({
            tenantId: TENANT,
            condition: searchCondition('declin*'),
            ...hourWindow(i),
            page: 1,
            limit: 50,
            trackTotal: DEFAULT_TRACK_TOTAL,
          })
        ).total,
    ),
  );
  pass.push(
    await measure(
      'search: prefix, full day ("declin*")',
      async () =>
        (
          await store.search({
            tenantId: TENANT,
            condition: searchCondition('declin*'),
            ...fullDay,
            page: 1,
            limit: 50,
            trackTotal: DEFAULT_TRACK_TOTAL,
          })
        ).total,
    ),
  );
  pass.push(
    await measure(
      'search: no query, 1 h, newest 50',
      async (i) => (await store.search({ tenantId: TENANT, ...hourWindow(i), page: 1, limit: 50, trackTotal: DEFAULT_TRACK_TOTAL })).total,
    ),
  );
  pass.push(
    await measure(
      'search: attribute, 1 h (http.status_code:503 level:error)',
      async (i) =>
        (
          await store.search({
            tenantId: TENANT,
            condition: searchCondition('http.status_code:503 level:error'),
            ...hourWindow(i),
            page: 1,
            limit: 50,
            trackTotal: DEFAULT_TRACK_TOTAL,
          })
        ).total,
    ),
  );
  pass.push(
    await measure(
      'search: selective word, full day ("declined")',
      async () =>
        (
          await store.search({
            tenantId: TENANT,
            condition: searchCondition('declined'),
            ...fullDay,
            page: 1,
            limit: 50,
            trackTotal: DEFAULT_TRACK_TOTAL,
          })
        ).total,
    ),
  );
  pass.push(
    await measure(
      'search: common word, full day ("completed")',
      async () =>
        (
          await store.search({
            tenantId: TENANT,
            condition: searchCondition('completed'),
            ...fullDay,
            page: 1,
            limit: 50,
            trackTotal: DEFAULT_TRACK_TOTAL,
          })
        ).total,
    ),
  );
  pass.push(
    await measure(
      'histogram: full day, ~60 buckets',
      async () => (await store.histogram({ tenantId: TENANT, ...fullDay, intervalMs: autoInterval })).length,
    ),
  );
  pass.push(
    await measure(
      'histogram: full day, groupBy level',
      async () => (await store.histogram({ tenantId: TENANT, ...fullDay, intervalMs: autoInterval, groupBy: 'level' })).length,
    ),
  );
  pass.push(
    await measure(
      'histogram: full day, query "declined"',
      async () =>
        (await store.histogram({ tenantId: TENANT, condition: searchCondition('declined'), ...fullDay, intervalMs: autoInterval })).length,
    ),
  );
  pass.push(
    await measure(
      'histogram: full day, query "completed"',
      async () =>
        (await store.histogram({ tenantId: TENANT, condition: searchCondition('completed'), ...fullDay, intervalMs: autoInterval })).length,
    ),
  );
  pass.push(
    await measure(
      'histogram: full day, phrase ("connection timeout")',
      async () =>
        (
          await store.histogram({
            tenantId: TENANT,
            condition: searchCondition('"connection timeout"'),
            ...fullDay,
            intervalMs: autoInterval,
          })
        ).length,
    ),
  );
  const { sql } = await import('kysely');
  const hasGin =
    dialect === 'postgres' &&
    (await sql`SELECT 1 FROM pg_indexes WHERE indexname = 'log_entries_search'`.execute(database.db)).rows.length > 0;
  if (hasGin) {
    // The same two histograms counted from the rows the GIN index finds (a store without postings),
    // measured here, on the same tables, in the same sitting.
    for (const word of ['declined', 'completed']) {
      pass.push(
        await measure(
          `histogram: full day, query "${word}", from the rows (GIN)`,
          async () =>
            (
              await sql`SELECT l.ts - (((l.ts % ${autoInterval}::bigint) + ${autoInterval}::bigint) % ${autoInterval}::bigint) AS bucket, count(*) AS n
                FROM log_entries l WHERE l.tenant_id = ${TENANT} AND l.ts >= ${fullDay.from}::bigint AND l.ts < ${fullDay.to + 1}::bigint
                  AND (l.search @@ ${`'${word}'`}::tsquery) GROUP BY 1`.execute(database.db)
            ).rows.length,
        ),
      );
    }
  }
  pass.push(
    await measure('distinct: level, all time', async () => (await store.distinct({ tenantId: TENANT, field: 'level', limit: 10 })).length),
  );
  pass.push(
    await measure(
      'distinct: service, all time, q="pay"',
      async () => (await store.distinct({ tenantId: TENANT, field: 'service', q: 'pay', limit: 10 })).length,
    ),
  );
  pass.push(
    await measure(
      'distinct: host, 1 h',
      async (i) => (await store.distinct({ tenantId: TENANT, field: 'host', ...hourWindow(i), limit: 10 })).length,
    ),
  );
  results = pass;
}

// ---- ripgrep over the same data -----------------------------------------------------------------
function ripgrep(pattern: string): { name: string; ms: number; matches: number } | null {
  try {
    const start = performance.now();
    let out = '0';
    try {
      out = execFileSync('rg', ['-c', pattern, ndjsonPath], { encoding: 'utf8' });
    } catch (error) {
      if ((error as { status?: number }).status !== 1) throw error;
    }
    const ms = round(performance.now() - start);
    process.stderr.write(`rg ${pattern}: ${ms} ms\n`);
    return { name: `rg -c ${pattern}`, ms, matches: Number(out.trim()) };
  } catch {
    return null;
  }
}
// Over the same day's events only: with more days the NDJSON holds them all.
const rg = !writesNdjson ? [] : [ripgrep('declined'), ripgrep('declined'), ripgrep('"level":"error"')].filter(Boolean);

// PostgreSQL's postings (log_batches, log_postings), also in sizeBytes.
const postingsBytes =
  dialect === 'sqlite'
    ? 0
    : Number(
        (
          await (
            await import('kysely')
          ).sql<{ n: string }>`SELECT (coalesce(pg_total_relation_size(to_regclass('log_batches')), 0)
            + coalesce(pg_total_relation_size(to_regclass('log_postings')), 0))::text AS n`.execute(database.db)
        ).rows[0]?.n ?? 0,
      );
const sizeBytes =
  dialect === 'sqlite'
    ? statSync(sqlitePath).size
    : Number(
        (
          await (
            await import('kysely')
          ).sql<{
            n: number;
          }>`SELECT ((SELECT sum(pg_total_relation_size(c.oid)) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
              WHERE i.inhparent IN (to_regclass('log_entries'), to_regclass('log_blocks'))) + ${postingsBytes}::bigint)::bigint AS n`.execute(
            database.db,
          )
        ).rows[0]?.n ?? 0,
      );

// ---- retention while ingesting ------------------------------------------------------------------
async function retentionWhileIngesting(): Promise<{
  removed: number;
  removeMs: number;
  goneMs: number | null;
  batches: number;
  worstBatchMs: number;
}> {
  let removing = true;
  const latencies: number[] = [];
  const ingest = (async () => {
    let n = 0;
    while (removing) {
      const start = performance.now();
      await store.append(
        TENANT,
        Array.from({ length: 100 }, (_, k) => ({
          timestamp: LAST_DAY + DAY - 1000 + (n % 1000),
          message: `arriving ${n}-${k}`,
          level: 'info',
        })),
      );
      latencies.push(performance.now() - start);
      n += 1;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  // When a search stops finding the removed day's entries (what a user sees: a word in 12 % of them,
  // found through the index, not counted from the rollups), apart from the whole call (which goes on
  // with the day's counts and, on PostgreSQL, with returning the detached tables' space).
  let goneMs: number | null = null;
  const start = performance.now();
  const watch = (async () => {
    while (removing && goneMs === null) {
      const { total } = await store.search({
        tenantId: TENANT,
        condition: searchCondition('completed'),
        from: DAY_START,
        to: DAY_START + DAY - 1,
        page: 1,
        limit: 0,
        trackTotal: 1,
      });
      if (total === 0) goneMs = performance.now() - start;
      else await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  const removed = await store.removeOlderThan(TENANT, DAY_START + DAY);
  const removeMs = performance.now() - start;
  removing = false;
  await Promise.all([ingest, watch]);
  const result = {
    removed,
    removeMs: round(removeMs),
    goneMs: goneMs === null ? null : round(goneMs),
    batches: latencies.length,
    worstBatchMs: round(Math.max(0, ...latencies)),
  };
  process.stderr.write(`retention: ${JSON.stringify(result)}\n`);
  return result;
}
if (args.retention && args.neighbour) {
  await store.append(
    'neighbour',
    Array.from({ length: days * 24 }, (_, hour) => ({ timestamp: DAY_START + hour * HOUR + 1, message: 'another tenant' })),
  );
}
const retention = args.retention ? await retentionWhileIngesting() : undefined;

const summary = {
  date: new Date().toISOString(),
  dialect,
  events: generated,
  batchSize,
  concurrency,
  ingestSeconds: round(ingestMs / 1000),
  eventsPerSecond: Math.round(generated / (ingestMs / 1000)),
  storeBytes: sizeBytes,
  postingsBytes,
  ndjsonBytes: writesNdjson ? statSync(ndjsonPath).size : 0,
  queriesOnly,
  days,
  queries: results,
  ripgrep: rg,
  retention,
  neighbour: args.neighbour,
  // Other jobs share this machine: the 1-minute load average before/after ingest and at the end.
  loadAverage: [loadBefore, loadAfterIngest, loadavg()[0]].map((value) => Math.round((value ?? 0) * 100) / 100),
  processCpuSecondsTotal: round((process.cpuUsage(cpuBefore).user + process.cpuUsage(cpuBefore).system) / 1e6),
  // Node's young generation as the logs service's (service-runtime.ts): without it, ingest is 10–25 % slower.
  asTheService,
  machine: { cpus: cpus().length, cpu: cpus()[0]?.model, memoryGb: Math.round(totalmem() / 2 ** 30), node: process.version },
};
console.log(JSON.stringify(summary, null, 2));
appendFileSync(new URL('./results.ndjson', import.meta.url), `${JSON.stringify(summary)}\n`);
await reads?.close();
await database.close();
if (!args.keep && writesNdjson) rmSync(ndjsonPath, { force: true });
