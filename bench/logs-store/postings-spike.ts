/**
 * A spike, not the store: what PostgreSQL would give on the store's targets (ingest 60,000
 * events/s, 250 B an event, a full-day histogram of a word under 100 ms) if the entries were kept
 * in compressed blocks (as bench/logs-store/block-spike.ts measured for SQLite) and the word index
 * were our own postings instead of a GIN entry per word of every entry. Per batch of entries, each
 * token's entries are listed by their place in the batch, delta-encoded; the tokens are hashed into
 * BUCKETS groups, and each group of a batch is one bytea row keyed by (tenant, bucket, first id): a
 * word's lookup over a day reads one small row per batch, and a batch writes BUCKETS rows, not one
 * index entry per word of every entry. A batch's row in `batches` turns places into ids (runs of
 * one second's ids: the second, the first sequence number, how many).
 * Facets (field=value, as the store numbers them) are tokens like words. Counts are checked against
 * the generator's own.
 *   node --import tsx bench/logs-store/postings-spike.ts --url postgres://... --events 10000000 [--block 256] [--buckets 256]
 * Results go to docs/benchmarks.md by hand ("Issue 15: PostgreSQL postings, a spike").
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { inflateRawSync } from 'node:zlib';
import pg from 'pg';
import { countOf, encodePostings, groupOf, placesOf } from '../../src/logs/modules/store/postgres/postings.js';
import { IDS_PER_SECOND } from '../../src/logs/modules/store/sqlite/time-ids.js';
import { tokenize } from '../../src/logs/modules/query/tokenize.js';
import { DAY, DAY_START, generateEvents } from './generate.js';
import { deflatedBlock, encodeLayout, idsOfPlaces, SpikeFacets, SpikeIds } from './spike-parts.js';

const { values: args } = parseArgs({
  options: {
    url: { type: 'string' },
    events: { type: 'string', default: '1000000' },
    block: { type: 'string', default: '256' },
    buckets: { type: 'string', default: '256' },
    runs: { type: 'string', default: '20' },
  },
});
if (!args.url) throw new Error('--url postgres://... is required');
const EVENTS = Number(args.events);
const BLOCK = Number(args.block);
const BUCKETS = Number(args.buckets);
const RUNS = Number(args.runs);
const BATCH = 5_000;
const TENANT = 'bench';
const client = new pg.Client({ connectionString: args.url });
await client.connect();
const backendPid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
const serverCpuMs = (): number => {
  const fields = readFileSync(`/proc/${backendPid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10; // utime + stime, ticks of 10 ms
};

await client.query(`DROP SCHEMA IF EXISTS postings_spike CASCADE; CREATE SCHEMA postings_spike; SET search_path = postings_spike`);
await client.query(`CREATE TABLE blocks (tenant_id text NOT NULL, first_id bigint NOT NULL, last_id bigint NOT NULL, data bytea NOT NULL,
  PRIMARY KEY (tenant_id, first_id))`);
await client.query(`CREATE TABLE batches (tenant_id text NOT NULL, first_id bigint NOT NULL, last_id bigint NOT NULL, layout bytea NOT NULL,
  PRIMARY KEY (tenant_id, first_id))`);
await client.query(`CREATE TABLE postings (tenant_id text NOT NULL, bucket int NOT NULL, first_id bigint NOT NULL, last_id bigint NOT NULL,
  data bytea NOT NULL, PRIMARY KEY (tenant_id, bucket, first_id))`);
// Already deflated: PostgreSQL need not try to compress it again.
await client.query(`ALTER TABLE blocks ALTER data SET STORAGE EXTERNAL; ALTER TABLE postings ALTER data SET STORAGE EXTERNAL`);

// ---- encoding -------------------------------------------------------------------------------------
const bucketOf = (token: string): number => groupOf(token, BUCKETS);
const facets = new SpikeFacets('=f');
type Entry = ReturnType<typeof generateEvents> extends Iterable<infer T> ? T : never;
const tokensOf = (entry: Entry): Set<string> => new Set([...tokenize(entry.message), ...facets.of(entry)]);

/** The ids of `token` in a group's value, its places made ids by the batch's layout. */
function idsIn(data: Buffer, layout: Buffer, token: string, into: number[]): void {
  for (const id of idsOfPlaces(layout, placesOf(data, token))) into.push(id);
}

// ---- ingest ---------------------------------------------------------------------------------------
const expected = { declined: 0, completedAtNoon: 0 };
const facetsOf503Error = { status: '', level: '' };
const spikeIds = new SpikeIds();
let ingestMs = 0;
let serverMs = 0;
const cpuBefore = process.cpuUsage();
let batch: Entry[] = [];
// The 1-hour questions ask about 12:00-13:00 of the day.
const NOON = Math.floor(DAY_START / 1000) + 12 * 3600;
const hourIds = { lo: NOON * IDS_PER_SECOND, hi: (NOON + 3600) * IDS_PER_SECOND - 1 };

async function flush(): Promise<void> {
  const start = performance.now();
  const serverBefore = serverCpuMs();
  const ids = batch.map((entry) => spikeIds.next(entry.timestamp));
  const tokens = batch.map((entry) => [...tokensOf(entry)]);
  tokens.forEach((entryTokens, index) => {
    if (entryTokens.includes('declined')) expected.declined += 1;
    if (entryTokens.includes('completed') && ids[index]! >= hourIds.lo && ids[index]! <= hourIds.hi) expected.completedAtNoon += 1;
  });
  const blockFirst: number[] = [];
  const blockLast: number[] = [];
  const blockData: Buffer[] = [];
  for (let start = 0; start < batch.length; start += BLOCK) {
    const end = Math.min(batch.length, start + BLOCK);
    blockFirst.push(ids[start]!);
    blockLast.push(ids[end - 1]!);
    blockData.push(deflatedBlock(batch.slice(start, end), ids.slice(start, end)));
  }
  const groups = encodePostings(tokens, BUCKETS);
  await client.query('BEGIN');
  await client.query(
    `INSERT INTO blocks (tenant_id, first_id, last_id, data) SELECT $1, * FROM unnest($2::bigint[], $3::bigint[], $4::bytea[])`,
    [TENANT, blockFirst, blockLast, blockData],
  );
  await client.query(`INSERT INTO batches (tenant_id, first_id, last_id, layout) VALUES ($1, $2, $3, $4)`, [
    TENANT,
    ids[0],
    ids.at(-1),
    encodeLayout(ids),
  ]);
  await client.query(
    `INSERT INTO postings (tenant_id, bucket, first_id, last_id, data) SELECT $1, b, $2, $3, d FROM unnest($4::int[], $5::bytea[]) AS g(b, d)`,
    [TENANT, ids[0], ids.at(-1), groups.map((group) => group.group), groups.map((group) => group.data)],
  );
  await client.query('COMMIT');
  ingestMs += performance.now() - start;
  serverMs += serverCpuMs() - serverBefore;
  batch = [];
}
for (const entry of generateEvents(EVENTS, 42, 1)) {
  batch.push(entry);
  if (batch.length === BATCH) await flush();
}
if (batch.length > 0) await flush();
const cpu = process.cpuUsage(cpuBefore);
await client.query('VACUUM ANALYZE blocks');
await client.query('VACUUM ANALYZE postings');
await client.query('VACUUM ANALYZE batches');
const sizes = (
  await client.query<{ blocks: string; postings: string }>(
    `SELECT pg_total_relation_size('blocks') AS blocks, pg_total_relation_size('postings') + pg_total_relation_size('batches') AS postings`,
  )
).rows[0]!;
facetsOf503Error.status = facets.token('http.status_code', 503)!;
facetsOf503Error.level = facets.token('level', 'error')!;

// ---- questions ------------------------------------------------------------------------------------
/** The ids of a token in [lo, hi], oldest first. */
async function idsOf(token: string, lo: number, hi: number): Promise<number[]> {
  const { rows } = await client.query<{ data: Buffer; layout: Buffer }>(
    // A batch spans less than an hour of ids here: rows starting more than an hour before `lo` end before it.
    `SELECT p.data, b.layout FROM postings p JOIN batches b USING (tenant_id, first_id)
      WHERE p.tenant_id = $1 AND p.bucket = $2 AND p.first_id BETWEEN $3 AND $5 AND p.last_id >= $4 ORDER BY p.first_id`,
    [TENANT, bucketOf(token), lo - 3600 * IDS_PER_SECOND, lo, hi],
  );
  const ids: number[] = [];
  for (const row of rows) idsIn(row.data, row.layout, token, ids);
  return ids.filter((id) => id >= lo && id <= hi);
}

/** Both lists' common ids (ascending). */
function intersect(a: readonly number[], b: readonly number[]): number[] {
  const out: number[] = [];
  for (let i = 0, j = 0; i < a.length && j < b.length;) {
    if (a[i] === b[j]) {
      out.push(a[i]!);
      i += 1;
      j += 1;
    } else if (a[i]! < b[j]!) i += 1;
    else j += 1;
  }
  return out;
}

/** The entries of the newest 50 ids: their blocks, inflated once each. */
async function newestPage(ids: readonly number[]): Promise<unknown[]> {
  const page = ids.slice(-50).reverse();
  const { rows } = await client.query<{ first_id: string; data: Buffer }>(
    `SELECT DISTINCT b.first_id, b.data FROM unnest($2::bigint[]) AS q(id)
      CROSS JOIN LATERAL (SELECT first_id, data FROM blocks WHERE tenant_id = $1 AND first_id <= q.id ORDER BY first_id DESC LIMIT 1) b`,
    [TENANT, page],
  );
  const byId = new Map<number, unknown>();
  for (const row of rows) {
    const columns = JSON.parse(inflateRawSync(row.data).toString()) as { id: number[]; message: string[] };
    columns.id.forEach((id, index) => byId.set(id, { id, message: columns.message[index] }));
  }
  return page.map((id) => byId.get(id));
}

const day = { lo: Math.floor(DAY_START / 1000) * IDS_PER_SECOND, hi: Math.floor((DAY_START + DAY) / 1000) * IDS_PER_SECOND - 1 };
const INTERVAL_S = Math.round(DAY / 60 / 1000);
const questions: [string, () => Promise<number>][] = [
  [
    'histogram: full day, query "declined" (60 buckets)',
    async () => {
      // A batch within one bucket adds its count; only the few that straddle two decode their places.
      const { rows } = await client.query<{ first_id: string; last_id: string; data: Buffer; layout: Buffer }>(
        `SELECT p.first_id, p.last_id, p.data, b.layout FROM postings p JOIN batches b USING (tenant_id, first_id)
          WHERE p.tenant_id = $1 AND p.bucket = $2 AND p.first_id BETWEEN $3 AND $5 AND p.last_id >= $4`,
        [TENANT, bucketOf('declined'), day.lo - 3600 * IDS_PER_SECOND, day.lo, day.hi],
      );
      const counts = new Map<number, number>();
      const add = (bucket: number, count: number) => counts.set(bucket, (counts.get(bucket) ?? 0) + count);
      const bucketOfId = (id: number) => {
        const second = Math.floor(id / IDS_PER_SECOND);
        return second - (second % INTERVAL_S);
      };
      for (const row of rows) {
        const [first, last] = [Number(row.first_id), Number(row.last_id)];
        if (first >= day.lo && last <= day.hi && bucketOfId(first) === bucketOfId(last)) {
          add(bucketOfId(first), countOf(row.data, 'declined'));
          continue;
        }
        const ids: number[] = [];
        idsIn(row.data, row.layout, 'declined', ids);
        for (const id of ids) if (id >= day.lo && id <= day.hi) add(bucketOfId(id), 1);
      }
      let total = 0;
      for (const count of counts.values()) total += count;
      return total;
    },
  ],
  [
    'search: selective word, full day ("declined"), count + newest 50',
    async () => {
      const ids = await idsOf('declined', day.lo, day.hi);
      const page = await newestPage(ids);
      if (page.some((entry) => entry === undefined)) throw new Error('an id without its entry');
      return ids.length;
    },
  ],
  [
    'search: common word, 1 h ("completed"), count + newest 50',
    async () => {
      const ids = await idsOf('completed', hourIds.lo, hourIds.hi);
      await newestPage(ids);
      return ids.length;
    },
  ],
  [
    'search: attribute, 1 h (http.status_code:503 level:error), count + newest 50',
    async () => {
      const ids = intersect(
        await idsOf(facetsOf503Error.status, hourIds.lo, hourIds.hi),
        await idsOf(facetsOf503Error.level, hourIds.lo, hourIds.hi),
      );
      await newestPage(ids);
      return ids.length;
    },
  ],
];
const measured: Record<string, { p50: number; p95: number; matches: number }> = {};
for (const [name, question] of questions) {
  const times: number[] = [];
  let matches = 0;
  for (let run = 0; run < RUNS; run += 1) {
    const start = performance.now();
    matches = await question();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  const at = (p: number) => Math.round(times[Math.min(times.length - 1, Math.ceil(p * times.length) - 1)]! * 10) / 10;
  measured[name] = { p50: at(0.5), p95: at(0.95), matches };
  process.stderr.write(`${name}: ${JSON.stringify(measured[name])}\n`);
}
const counted = measured['histogram: full day, query "declined" (60 buckets)']!.matches;
if (counted !== expected.declined) throw new Error(`"declined": ${counted} found, ${expected.declined} generated`);
const completed = measured['search: common word, 1 h ("completed"), count + newest 50']!.matches;
if (completed !== expected.completedAtNoon) throw new Error(`"completed": ${completed} found, ${expected.completedAtNoon} generated`);

// Retention of the day: both tables' rows of its ids (a day partition would be a detach instead).
const retentionStart = performance.now();
await client.query('BEGIN');
await client.query('DELETE FROM blocks WHERE tenant_id = $1 AND first_id <= $2', [TENANT, day.hi]);
await client.query('DELETE FROM postings WHERE tenant_id = $1 AND first_id <= $2', [TENANT, day.hi]);
await client.query('DELETE FROM batches WHERE tenant_id = $1 AND first_id <= $2', [TENANT, day.hi]);
await client.query('COMMIT');
const retentionMs = performance.now() - retentionStart;

console.log(
  JSON.stringify({
    date: new Date().toISOString(),
    events: EVENTS,
    block: BLOCK,
    buckets: BUCKETS,
    eventsPerSecond: Math.round(EVENTS / (ingestMs / 1000)),
    clientCpuMicrosPerEvent: Math.round(((cpu.user + cpu.system) / EVENTS) * 100) / 100,
    serverCpuMicrosPerEvent: Math.round(((serverMs * 1000) / EVENTS) * 100) / 100,
    bytesPerEvent: { blocks: Math.round(Number(sizes.blocks) / EVENTS), postings: Math.round(Number(sizes.postings) / EVENTS) },
    questions: measured,
    retentionMs: Math.round(retentionMs),
  }),
);
await client.query('DROP SCHEMA postings_spike CASCADE');
await client.end();
