/**
 * A spike, not the store: PostgreSQL's own engine over blocks of entries (docs/scaling.md, step 3).
 * postings-spike.ts kept a block as deflated columns that only JavaScript can read, so every
 * condition the postings cannot answer would need an evaluator of our own. Here a block is one row
 * of arrays (times, levels, …, attributes as `jsonb[]`), which PostgreSQL compresses itself (TOAST,
 * pglz) once a row passes 2 kB, and SQL reads it through `unnest … WITH ORDINALITY` (the ordinal is
 * the entry's place, as in the postings). Measured: bytes an event, and the 1-hour questions of
 * run.ts that read rows (the newest 50; an attribute filter counted) by unnesting every block of the
 * hour, the newest 50 by reading the newest blocks first, and a page of 50 places of one block (what
 * a page found through the postings reads).
 *   node --import tsx bench/logs-store/array-block-spike.ts --url postgres://... [--events 1000000] [--block 5000]
 * The events are as dense as 10M a day. Results go to docs/benchmarks.md by hand.
 */
import { parseArgs } from 'node:util';
import pg from 'pg';
import { DAY_START, generateEvents } from './generate.js';
import type { LogEntry } from '../../src/logs/modules/store/index.js';

const { values: args } = parseArgs({
  options: {
    url: { type: 'string' },
    events: { type: 'string', default: '1000000' },
    block: { type: 'string', default: '5000' },
    runs: { type: 'string', default: '20' },
  },
});
if (!args.url) throw new Error('--url postgres://... is required');
const EVENTS = Number(args.events);
const BLOCK = Number(args.block);
const RUNS = Number(args.runs);
const HOUR = 3_600_000;
const LEVELS = ['info', 'warn', 'error', 'debug', 'trace', 'fatal'];

const client = new pg.Client({ connectionString: args.url });
await client.connect();
await client.query('DROP SCHEMA IF EXISTS spike_arrays CASCADE');
await client.query('CREATE SCHEMA spike_arrays');
await client.query(`CREATE TABLE spike_arrays.blocks (
  tenant_id text NOT NULL, block bigserial, first_ts bigint NOT NULL, last_ts bigint NOT NULL, entries integer NOT NULL,
  ts bigint[] NOT NULL, level smallint[] NOT NULL, service text[] NOT NULL, host text[] NOT NULL,
  trace_id text[] NOT NULL, span_id text[] NOT NULL, message text[] NOT NULL, attributes jsonb[] NOT NULL,
  PRIMARY KEY (tenant_id, block))`);
await client.query('CREATE INDEX ON spike_arrays.blocks (tenant_id, last_ts)');

async function store(entries: LogEntry[]): Promise<void> {
  const column = <T>(of: (entry: LogEntry) => T) => entries.map(of);
  await client.query(
    `INSERT INTO spike_arrays.blocks (tenant_id, first_ts, last_ts, entries, ts, level, service, host, trace_id, span_id, message, attributes)
     VALUES ('bench', $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
    [
      entries[0]!.timestamp,
      entries.at(-1)!.timestamp,
      entries.length,
      column((entry) => entry.timestamp),
      column((entry) => LEVELS.indexOf(entry.level ?? 'info')),
      column((entry) => entry.service ?? null),
      column((entry) => entry.host ?? null),
      column((entry) => entry.trace_id ?? null),
      column((entry) => entry.span_id ?? null),
      column((entry) => entry.message),
      column((entry) => JSON.stringify(entry.attributes ?? {})),
    ],
  );
}

const started = performance.now();
let block: LogEntry[] = [];
for (const entry of generateEvents(EVENTS, 42, EVENTS / 10_000_000)) {
  // A block is a batch's entries of one hour, as the postings' pieces are.
  if (block.length === BLOCK || (block.length > 0 && Math.floor(entry.timestamp / HOUR) !== Math.floor(block[0]!.timestamp / HOUR))) {
    await store(block);
    block = [];
  }
  block.push(entry);
}
if (block.length > 0) await store(block);
const loadSeconds = (performance.now() - started) / 1000;
await client.query('VACUUM ANALYZE spike_arrays.blocks');
const { rows: sizeRows } = await client.query<{ bytes: string }>(`SELECT pg_total_relation_size('spike_arrays.blocks') AS bytes`);
const bytesPerEvent = Number(sizeRows[0]!.bytes) / EVENTS;

const from = DAY_START + HOUR;
const to = from + HOUR;
const unnested = `FROM spike_arrays.blocks b, unnest(b.ts, b.level, b.service, b.host, b.message, b.attributes)
  WITH ORDINALITY AS e(ts, level, service, host, message, attributes, place)`;
const queries: Record<string, () => Promise<unknown>> = {
  'no query, 1 h, newest 50 (every block of the hour)': () =>
    client.query(
      `SELECT e.ts, e.level, e.service, e.host, e.message, e.attributes ${unnested}
       WHERE b.tenant_id = 'bench' AND b.last_ts >= $1 AND b.first_ts < $2 AND e.ts >= $1 AND e.ts < $2 ORDER BY e.ts DESC LIMIT 50`,
      [from, to],
    ),
  'no query, 1 h, newest 50 (the newest two blocks)': () =>
    client.query(
      `SELECT e.ts, e.level, e.service, e.host, e.message, e.attributes
       FROM (SELECT * FROM spike_arrays.blocks WHERE tenant_id = 'bench' AND last_ts >= $1 AND first_ts < $2 ORDER BY last_ts DESC LIMIT 2) b,
         unnest(b.ts, b.level, b.service, b.host, b.message, b.attributes) WITH ORDINALITY AS e(ts, level, service, host, message, attributes, place)
       WHERE e.ts >= $1 AND e.ts < $2 ORDER BY e.ts DESC LIMIT 50`,
      [from, to],
    ),
  'attribute, 1 h, counted (http.status_code:503 level:error)': () =>
    client.query(
      `SELECT count(*) ${unnested}
       WHERE b.tenant_id = 'bench' AND b.last_ts >= $1 AND b.first_ts < $2 AND e.ts >= $1 AND e.ts < $2
         AND e.level = 2 AND e.attributes ->> 'http.status_code' = '503'`,
      [from, to],
    ),
  'a page of 50 places of one block': () =>
    client.query(
      `SELECT e.ts, e.level, e.service, e.host, e.message, e.attributes ${unnested}
       WHERE b.tenant_id = 'bench' AND b.block = (SELECT block FROM spike_arrays.blocks WHERE last_ts >= $1 ORDER BY last_ts LIMIT 1)
         AND e.place = ANY($2::bigint[])`,
      [from, Array.from({ length: 50 }, (_, k) => 1 + k * 97)],
    ),
};
const timings: Record<string, { p50: number; p95: number }> = {};
for (const [name, run] of Object.entries(queries)) {
  await run();
  const times: number[] = [];
  for (let k = 0; k < RUNS; k += 1) {
    const start = performance.now();
    await run();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => Math.round(times[Math.min(times.length - 1, Math.floor(q * times.length))]! * 100) / 100;
  timings[name] = { p50: at(0.5), p95: at(0.95) };
}
console.log(
  JSON.stringify(
    { events: EVENTS, block: BLOCK, loadSeconds: Math.round(loadSeconds), bytesPerEvent: Math.round(bytesPerEvent * 10) / 10, timings },
    null,
    2,
  ),
);
await client.query('DROP SCHEMA spike_arrays CASCADE');
await client.end();
