/**
 * FTS5's `automerge` for the SQLite store's hour tables: an hour's worth of entries at 10M a day
 * (420,000, in batches of 5,000, the generated messages' words and six facet tokens each) written
 * into one table per setting, with the CPU per entry, the index's size and a common word's count.
 *   node --import tsx bench/logs-store/fts-merge.ts
 * Results in docs/benchmarks.md ("Issue 15: FTS5 merging").
 */
import { rmSync } from 'node:fs';
import SQLite from 'better-sqlite3';
import { ftsBody } from '../../src/logs/modules/store/indexed-text.js';
import { generateEvents } from './generate.js';

const ENTRIES = 420_000;
const BATCH = 5_000;
const PER_STATEMENT = 1_000;
const PATH = '/tmp/gerbang-fts-merge.sqlite';

const rows: [number, string, string][] = [];
let index = 0;
for (const entry of generateEvents(ENTRIES, 7, 1)) {
  // Six facets of different cardinalities, as level, service, host and attribute values give.
  const facets = [7, 50, 20, 13, 300, 5].map((values, field) => `f${(field * 1000 + (index % values)).toString(36)}`);
  rows.push([index + 1, ftsBody(entry.message), facets.join(' ')]);
  index += 1;
}

for (const automerge of [4, 8, 16, 0]) {
  for (const suffix of ['', '-wal', '-shm']) rmSync(PATH + suffix, { force: true });
  const db = new SQLite(PATH);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('cache_size = -65536');
  db.exec(`CREATE VIRTUAL TABLE f USING fts5(body, facets, content='', columnsize=0)`);
  db.exec(`INSERT INTO f (f, rank) VALUES ('automerge', ${automerge})`);
  const insert = db.prepare(`INSERT INTO f (rowid, body, facets) VALUES ${new Array(PER_STATEMENT).fill('(?,?,?)').join(',')}`);
  const cpuBefore = process.cpuUsage();
  for (let batch = 0; batch < ENTRIES; batch += BATCH) {
    db.transaction(() => {
      for (let start = batch; start < batch + BATCH; start += PER_STATEMENT) insert.run(rows.slice(start, start + PER_STATEMENT).flat());
    })();
  }
  const cpu = process.cpuUsage(cpuBefore);
  const count = db.prepare(`SELECT count(*) AS n FROM f WHERE f MATCH 'completed' AND rowid BETWEEN 100000 AND 300000`);
  const times: number[] = [];
  for (let run = 0; run < 15; run += 1) {
    const start = performance.now();
    count.get();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  const bytes = (db.prepare(`SELECT sum(pgsize) AS b FROM dbstat WHERE name LIKE 'f_%'`).get() as { b: number }).b;
  console.log(
    JSON.stringify({
      automerge,
      cpuMicrosPerEntry: Math.round(((cpu.user + cpu.system) / ENTRIES) * 100) / 100,
      bytesPerEntry: Math.round((bytes / ENTRIES) * 10) / 10,
      commonWordP50Ms: Math.round(times[7]! * 100) / 100,
    }),
  );
  db.close();
}
