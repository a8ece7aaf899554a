/**
 * The store's reads behind the console's slow interactions, timed one by one at the store (no HTTP, no
 * browser) on the store bench/console-interactions.ts built: wall time, this process's CPU and the
 * database server's CPU for each (PostgreSQL: the one read connection's backend, from /proc; SQLite:
 * the reads run in this process). For judging a change on a shared machine by CPU rather than by
 * wall-clock time (docs/benchmarks.md, "Console at 10M events: issue 41").
 *
 *   node --import tsx bench/logs-store/console-reads.ts [--url postgres://…] [--what stats,histogram,page] [--repeat 5]
 *     [--fields http.route,http.method] [--queries 'declined,logged in'] [--sample 10000 (0: every match)] [--print-sql]
 */
import '../../src/shared/runtime-flags.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { CONSOLE_QUERIES } from './console-queries.js';
import { openDatabase } from '../../src/shared/db/database.js';
import { createLogStore, openStoreReads, sqliteThreadDialect } from '../../src/logs/modules/store/index.js';
import { searchCondition } from '../../src/logs/modules/query/condition.js';
import { DAY_START } from './generate.js';
import { DEFAULT_FIELD_STATS_SAMPLE } from '../../src/logs/modules/search/search.schemas.js';

const { values: args } = parseArgs({
  options: {
    url: { type: 'string' },
    what: { type: 'string', default: 'stats' },
    repeat: { type: 'string', default: '5' },
    fields: { type: 'string', default: 'http.route,http.method' },
    queries: { type: 'string' },
    events: { type: 'string', default: '10000000' },
    'print-sql': { type: 'boolean', default: false },
    /** The route's sample (DEFAULT_FIELD_STATS_SAMPLE); 0: every match. */
    sample: { type: 'string', default: String(DEFAULT_FIELD_STATS_SAMPLE) },
  },
});
const HOUR = 3_600_000;
const MINUTE = 60_000;
const QUERIES = args.queries?.split(',') ?? CONSOLE_QUERIES;
const dialect = args.url ? 'postgres' : 'sqlite';
const url =
  args.url ?? `sqlite:${join(process.env.BENCH_CONSOLE_DIR || '/tmp/gerbang-bench-console', `sqlite-${args.events}`, 'logs.sqlite')}`;
const database = await openDatabase<any>(url, { sqliteThread: sqliteThreadDialect });
const reads = await openStoreReads(url, database.db, { timeoutMs: 60_000, workers: 1 });
// --print-sql: every statement of the reads with its parameters and time (for EXPLAIN ANALYZE by hand).
const readDb = args['print-sql']
  ? new Kysely<any>({
      dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }),
      log: (event) => {
        process.stderr.write(
          `-- ${Math.round(event.queryDurationMillis)} ms\n${event.query.sql}\n-- ${JSON.stringify(event.query.parameters).slice(0, 2000)}\n`,
        );
      },
    })
  : reads.db;
const store = createLogStore(database.db, database.dialect, { reads: readDb });

/** The server's CPU ms of the read connection (PostgreSQL), else 0. */
let backendPid: number | null = null;
if (dialect === 'postgres') {
  const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(readDb);
  backendPid = rows[0]!.pid;
}
const ticks = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10; // utime + stime, 100 Hz
};
const serverCpu = () => (backendPid === null ? 0 : ticks(backendPid));

async function measure(run: () => Promise<unknown>): Promise<{ wall: number; cpu: number; server: number }> {
  const [cpu0, server0, t0] = [process.cpuUsage(), serverCpu(), performance.now()];
  await run();
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return { wall, cpu: (cpu.user + cpu.system) / 1000, server: serverCpu() - server0 };
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const hour = (i: number) => {
  const from = DAY_START + ((i * 7) % 23) * HOUR + 13 * MINUTE;
  return { from, to: from + HOUR - 1 };
};
const repeat = Number(args.repeat);
const what = args.what.split(',');
const rows: Record<string, string | number>[] = [];
for (const [i, query] of QUERIES.entries()) {
  const { from, to } = hour(i);
  const condition = searchCondition(query);
  const base = { tenantId: 'default', condition, from, to };
  const jobs: [string, () => Promise<unknown>][] = [];
  if (what.includes('stats'))
    for (const field of args.fields.split(','))
      jobs.push([`stats ${field}`, () => store.fieldStats({ ...base, field, limit: 10, sample: Number(args.sample) || undefined })]);
  if (what.includes('histogram'))
    jobs.push([`histogram by level`, () => store.histogram({ ...base, intervalMs: MINUTE, groupBy: 'level' })]);
  if (what.includes('page')) jobs.push([`page`, () => store.search({ ...base, page: 1, limit: 500, trackTotal: 10_000 })]);
  for (const [name, job] of jobs) {
    await job(); // warm
    const runs = [];
    for (let n = 0; n < repeat; n += 1) runs.push(await measure(job));
    const row = {
      query,
      read: name,
      'wall ms': Math.round(median(runs.map((r) => r.wall))),
      'node cpu ms': Math.round(median(runs.map((r) => r.cpu))),
      'server cpu ms': Math.round(median(runs.map((r) => r.server))),
    };
    rows.push(row);
    process.stderr.write(`${JSON.stringify(row)}\n`);
  }
}
console.table(rows);
await reads.close();
await database.close();
