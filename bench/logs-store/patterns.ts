/**
 * What the query language's patterns cost (docs/log-search.md, "Wildcards, regular expressions,
 * fuzzy terms"): generated events are appended, then each query is counted over the whole range
 * several times, and the CPU a scanned row costs is printed: the process's (SQLite reads run in its
 * threads) and, for PostgreSQL, that of every `postgres` process of this machine (the server must
 * run here). A word and a prefix, which the index answers, are the baseline.
 *   node --import tsx bench/logs-store/patterns.ts [--dialect sqlite|postgres] [--url ...] [--events 100000] [--runs 3]
 * Prints one JSON line a query.
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { openDatabase } from '../../src/shared/db/database.js';
import { migrateToLatest } from '../../src/shared/db/migrator.js';
import { createLogStore, sqliteThreadDialect } from '../../src/logs/modules/store/index.js';
import { logsMigrations } from '../../src/logs/db/migrations/index.js';
import { searchCondition } from '../../src/logs/modules/query/condition.js';
import { DAY, DAY_START, generateEvents } from './generate.js';

const { values: args } = parseArgs({
  options: {
    dialect: { type: 'string', default: 'sqlite' },
    url: { type: 'string' },
    events: { type: 'string', default: '100000' },
    runs: { type: 'string', default: '3' },
    file: { type: 'string', default: '/tmp/gerbang-bench-patterns.sqlite' },
  },
});
const events = Number(args.events);
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
let batch = [];
for (const entry of generateEvents(events, 42, 1)) {
  batch.push(entry);
  if (batch.length === 5000) {
    await store.append('bench', batch);
    batch = [];
  }
}
if (batch.length > 0) await store.append('bench', batch);

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
  return ticks * 10;
}

const QUERIES = [
  'timeout',
  'time*',
  'ti*ut',
  't?meout',
  'timeout~1',
  'timeout~',
  'connection~',
  'level:err?r',
  'level:/err.*/',
  'service:/[a-c].*-(api|worker)/',
  'service:api*',
];
for (const query of QUERIES) {
  const condition = searchCondition(query);
  const cpu = process.cpuUsage();
  const server = args.dialect === 'postgres' ? postgresCpuMs() : 0;
  const start = performance.now();
  let total = 0;
  for (let run = 0; run < Number(args.runs); run += 1) {
    const result = await store.search({ tenantId: 'bench', condition, from: DAY_START, to: DAY_START + DAY, page: 1, limit: 10 });
    total = result.total;
  }
  const runs = Number(args.runs);
  const wallMs = (performance.now() - start) / runs;
  const used = process.cpuUsage(cpu);
  const processMs = (used.user + used.system) / 1000 / runs;
  const serverMs = args.dialect === 'postgres' ? (postgresCpuMs() - server) / runs : 0;
  const rowNs = ((processMs + serverMs) * 1e6) / events;
  process.stdout.write(
    `${JSON.stringify({ dialect: args.dialect, events, query, total, wallMs: Math.round(wallMs), processCpuMs: Math.round(processMs), serverCpuMs: Math.round(serverMs), cpuNsPerEvent: Math.round(rowNs) })}\n`,
  );
}
await database.close();
