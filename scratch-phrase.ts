import { openDatabase } from './src/shared/db/database.js';
import { createLogStore } from './src/logs/modules/store/index.js';
import { postingsCounts } from './src/logs/modules/store/postgres-postings.js';
import { DAY_START } from './bench/logs-store/generate.js';
const database = await openDatabase<any>(process.env.TEST_POSTGRES_URL!);
const store = createLogStore(database.db, 'postgres');
const from = DAY_START, to = DAY_START + 86_400_000 - 1;
for (let i = 0; i < 5; i++) {
  let t = performance.now();
  const found = await postingsCounts(database.db, 'bench', from, to + 1, { kind: 'phrase', tokens: ['connection', 'timeout'] }, 1_440_000, Infinity, 200_000);
  const p = performance.now() - t;
  t = performance.now();
  await store.histogram({ tenantId: 'bench', query: '"connection timeout"', from, to, intervalMs: 1_440_000 });
  const h = performance.now() - t;
  const blocks = new Set(found!.candidates.map((c) => c.id - ((c.id % 65536) % 128)));
  console.log({ postings: Math.round(p), histogram: Math.round(h), candidates: found!.candidates.length, blocks: blocks.size });
}
await database.close();
