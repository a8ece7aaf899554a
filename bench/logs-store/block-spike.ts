/**
 * A spike, not the store: what keeping entries in compressed blocks (as Loki's chunks and
 * ClickHouse's granules do) would give the SQLite store on its targets (ingest
 * 100,000 events/s, 250 B an event, retention of a day in under a second). Entries keep their
 * time-ordered ids and their words and facets in the same per-hour FTS5 tables as the store; their
 * rows become one row per block of BLOCK entries, deflated (with their ids, as a store needs
 * them). Measures ingest CPU and time, bytes an
 * event, reading a page of 50 entries by id (the block lookups and inflation a search page would
 * do), and removing the day (blocks and hour tables).
 *   node --import tsx bench/logs-store/block-spike.ts --events 10000000 [--block 256] [--level 1]
 * Results go to docs/benchmarks.md by hand ("Issue 15: compressed blocks, a spike").
 */
import { rmSync, statSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { inflateRawSync } from 'node:zlib';
import SQLite from 'better-sqlite3';
import { IDS_PER_SECOND } from '../../src/logs/modules/store/sqlite/time-ids.js';
import { ftsBody } from '../../src/logs/modules/store/indexed-text.js';
import { DAY_START, generateEvents } from './generate.js';
import { deflatedBlock, SpikeFacets, SpikeIds } from './spike-parts.js';

const { values: args } = parseArgs({
  options: {
    events: { type: 'string', default: '1000000' },
    block: { type: 'string', default: '256' },
    level: { type: 'string', default: '1' },
    path: { type: 'string', default: '/tmp/gerbang-block-spike.sqlite' },
  },
});
const EVENTS = Number(args.events);
const BLOCK = Number(args.block);
const LEVEL = Number(args.level);
const HOUR_IDS = 3600 * IDS_PER_SECOND;

for (const suffix of ['', '-wal', '-shm']) rmSync(args.path + suffix, { force: true });
const db = new SQLite(args.path);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.pragma('cache_size = -65536');
db.exec(`CREATE TABLE log_blocks (first_id INTEGER PRIMARY KEY, last_id INTEGER NOT NULL, tenant_id TEXT NOT NULL, data BLOB NOT NULL)`);

const facets = new SpikeFacets('f');

const hourTables = new Set<number>();
const insertBlock = db.prepare('INSERT INTO log_blocks (first_id, last_id, tenant_id, data) VALUES (?, ?, ?, ?)');
const ftsInserts = new Map<number, SQLite.Statement>();
function ftsInsert(hour: number): SQLite.Statement {
  let statement = ftsInserts.get(hour);
  if (!statement) {
    db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS fts_${hour} USING fts5(body, facets, content='', columnsize=0)`);
    hourTables.add(hour);
    statement = db.prepare(`INSERT INTO fts_${hour} (rowid, body, facets) VALUES (?, ?, ?)`);
    ftsInserts.set(hour, statement);
  }
  return statement;
}

const spikeIds = new SpikeIds();
const ids: number[] = [];
let ingestMs = 0;
const cpuBefore = process.cpuUsage();
let batch: ReturnType<typeof generateEvents> extends Iterable<infer T> ? T[] : never = [];
const write = db.transaction((entries: typeof batch) => {
  // Entries arrive in time order here (the generator's); ids as time-ids.ts gives them.
  ids.length = 0;
  for (const entry of entries) ids.push(spikeIds.next(entry.timestamp));
  for (let start = 0; start < entries.length; start += BLOCK) {
    const end = Math.min(entries.length, start + BLOCK);
    insertBlock.run(ids[start], ids[end - 1], 'bench', deflatedBlock(entries.slice(start, end), ids.slice(start, end), LEVEL));
  }
  entries.forEach((entry, index) => {
    ftsInsert(Math.floor(ids[index]! / HOUR_IDS)).run(ids[index], ftsBody(entry.message), facets.of(entry).join(' '));
  });
});

for (const entry of generateEvents(EVENTS, 42, 1)) {
  batch.push(entry);
  if (batch.length === 5000) flush();
}
if (batch.length > 0) flush();
function flush(): void {
  const start = performance.now();
  write(batch);
  ingestMs += performance.now() - start;
  batch = [];
}
const cpu = process.cpuUsage(cpuBefore);
db.pragma('wal_checkpoint(TRUNCATE)');
const bytes = statSync(args.path).size;
const blockBytes = (db.prepare(`SELECT sum(pgsize) AS b FROM dbstat WHERE name = 'log_blocks'`).get() as { b: number }).b;

// A page of 50 entries by id, as a search page reads them: the block of each id, inflated once per page.
const blockOf = db.prepare('SELECT first_id, data FROM log_blocks WHERE first_id <= ? ORDER BY first_id DESC LIMIT 1');
const hourIds = db.prepare(
  `SELECT rowid FROM fts_${Math.floor((DAY_START / 1000 + 12 * 3600) / 3600)} WHERE fts_${Math.floor((DAY_START / 1000 + 12 * 3600) / 3600)} MATCH 'declined' ORDER BY rowid DESC LIMIT 50`,
);
const pageTimes: number[] = [];
for (let run = 0; run < 20; run += 1) {
  const start = performance.now();
  const wanted = hourIds.all().map((row) => (row as { rowid: number }).rowid);
  const blocks = new Map<number, { ts: number[] }>();
  let found = 0;
  for (const id of wanted) {
    const row = blockOf.get(id) as { first_id: number; data: Buffer };
    let columns = blocks.get(row.first_id);
    if (!columns) blocks.set(row.first_id, (columns = JSON.parse(inflateRawSync(row.data).toString()) as { ts: number[] }));
    if (columns.ts.length > 0) found += 1;
  }
  if (found !== wanted.length) throw new Error('an id without its block');
  pageTimes.push(performance.now() - start);
}
pageTimes.sort((a, b) => a - b);

// Retention of the day: its blocks in one range, its hour tables dropped.
const retentionStart = performance.now();
db.transaction(() => {
  db.prepare('DELETE FROM log_blocks WHERE first_id < ?').run((DAY_START / 1000 + 86_400) * IDS_PER_SECOND);
})();
const blocksDeletedMs = performance.now() - retentionStart;
for (const hour of hourTables) db.transaction(() => db.exec(`DROP TABLE fts_${hour}`))();
const retentionMs = performance.now() - retentionStart;

const result = {
  date: new Date().toISOString(),
  events: EVENTS,
  block: BLOCK,
  deflateLevel: LEVEL,
  eventsPerSecond: Math.round(EVENTS / (ingestMs / 1000)),
  cpuMicrosPerEvent: Math.round(((cpu.user + cpu.system) / EVENTS) * 100) / 100,
  bytesPerEvent: Math.round(bytes / EVENTS),
  blockBytesPerEvent: Math.round(blockBytes / EVENTS),
  pageOf50: { p50: Math.round(pageTimes[10]! * 100) / 100, p95: Math.round(pageTimes[18]! * 100) / 100 },
  retention: { blocksMs: Math.round(blocksDeletedMs), totalMs: Math.round(retentionMs), hourTables: hourTables.size },
};
console.log(JSON.stringify(result));
db.close();
