/**
 * Questions the postings do not narrow, timed on a store `run.ts` left behind (it drops the tables
 * when it starts, not when it ends): a numeric range, a substring, a sort by a field, an aggregation
 * of every entry of an hour. Not among the store's targets; measured to show what blocks cost
 * (docs/benchmarks.md, "Issue 15: PostgreSQL blocks").
 *
 *   node --max-semi-space-size=64 --import tsx bench/logs-store/unindexed.ts --url postgres://… [--runs 10]
 */
import { parseArgs } from 'node:util';
import { openDatabase } from '../../src/shared/db/database.js';
import { createLogStore } from '../../src/logs/modules/store/index.js';
import { DAY_START } from './generate.js';
import { searchCondition } from '../../src/logs/modules/query/condition.js';

const { values: args } = parseArgs({
  options: {
    url: { type: 'string' },
    runs: { type: 'string', default: '10' },
    hours: { type: 'string', default: '24' },
  },
});
if (!args.url) throw new Error('--url of the store run.ts left behind');
const runs = Number(args.runs);
const database = await openDatabase<any>(args.url);
const store = createLogStore(database.db, database.dialect);
const TENANT = 'bench';
const HOUR = 3_600_000;
// A different hour of the day each run, as run.ts does.
const hourWindow = (i: number) => {
  const from = DAY_START + ((7 + i * 5) % Number(args.hours)) * HOUR;
  return { from, to: from + HOUR - 1 };
};

const shapes: [string, (i: number) => Promise<unknown>][] = [
  [
    'range on a number, 1 h, page (duration_ms:>1990)',
    (i) => store.search({ tenantId: TENANT, condition: searchCondition('duration_ms:>1990'), ...hourWindow(i), page: 1, limit: 50 }),
  ],
  [
    'substring, 1 h, page (message:*ORD-99*)',
    (i) => store.search({ tenantId: TENANT, condition: searchCondition('message:*ORD-99*'), ...hourWindow(i), page: 1, limit: 50 }),
  ],
  [
    'sort by a field, 1 h (duration_ms desc, level:error)',
    (i) =>
      store.search({
        tenantId: TENANT,
        condition: searchCondition('level:error'),
        ...hourWindow(i),
        page: 1,
        limit: 50,
        sort: { field: 'duration_ms', order: 'desc' },
      }),
  ],
  [
    'average of a number by service, 1 h',
    (i) =>
      store.aggregate({
        tenantId: TENANT,
        condition: searchCondition(''),
        ...hourWindow(i),
        groups: [{ kind: 'field', field: 'service' }],
        metrics: [{ kind: 'avg', field: 'duration_ms' }],
        maxGroups: 100,
      }),
  ],
];

/** The p-th percentile of ascending `sorted` (as run.ts reports them). */
const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
const results = [];
for (const [name, run] of shapes) {
  const times: number[] = [];
  await run(runs); // warm-up
  for (let i = 0; i < runs; i += 1) {
    const start = performance.now();
    await run(i);
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  results.push({ name, p50: Math.round(percentile(times, 50) * 10) / 10, p95: Math.round(percentile(times, 95) * 10) / 10 });
}
process.stdout.write(`${JSON.stringify({ dialect: database.dialect, runs, results }, null, 2)}\n`);
await database.close();
