import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { after, describe, test } from 'node:test';
import { logStoreMigrations } from '../../src/logs/modules/store/migrations.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/databases.js';
import { LOGS_ADMIN, LOGS_ADMIN_PASSWORD, uniqueName } from '../helpers/logs.js';

/**
 * Durability: a batch acknowledged by the logs service survives the process being killed (SIGKILL,
 * no shutdown) right after the acknowledgement. Runs the real CLI in a child process on the real
 * store, so it needs the log store (SQLite / PostgreSQL); until the store branch is merged its
 * placeholder has no migrations and there is nothing durable to test.
 */
const STORE_PRESENT = Object.keys(logStoreMigrations).length > 0;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** Starts `gerbang logs` and resolves once it listens (its log line says so). */
async function startLogsProcess(databaseUrl: string, port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'logs'], {
    env: { ...process.env, HOST: '127.0.0.1', LOGS_PORT: String(port), LOGS_DATABASE_URL: databaseUrl, LOGS_ADMIN_PASSWORD, LOG_LEVEL: 'info', LOGS_RETENTION_INTERVAL: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Server listening')) {
        child.stdout!.off('data', onData);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`logs process exited (${code}) before listening:\n${output}`)));
  });
  child.stdout!.resume();
  return child;
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

if (STORE_PRESENT) {
  for (const dialect of DIALECTS) {
    describe(`logs durability [${dialect}]`, () => {
      const cleanup: (() => Promise<void>)[] = [];
      after(async () => {
        for (const step of cleanup.reverse()) await step();
      });

      test('an acknowledged batch is found after the process is killed and restarted on the same database', async () => {
        const database: TestDatabase = await createTestDatabase(dialect);
        cleanup.push(() => database.drop());
        const port = await freePort();
        const base = `http://127.0.0.1:${port}`;
        const basic = `Basic ${Buffer.from(`${LOGS_ADMIN}:${LOGS_ADMIN_PASSWORD}`).toString('base64')}`;
        const marker = uniqueName('durable').toLowerCase();

        const first = await startLogsProcess(database.url, port);
        cleanup.push(() => kill(first));
        const docs = Array.from({ length: 500 }, (_, i) => `{"index":{}}\n${JSON.stringify({ message: `acknowledged ${marker} ${i}` })}`).join('\n');
        const response = await fetch(`${base}/api/v1/_elastic/_bulk`, { method: 'POST', headers: { authorization: basic, 'content-type': 'application/x-ndjson' }, body: `${docs}\n` });
        assert.equal(response.status, 200);
        assert.equal(((await response.json()) as { errors: boolean }).errors, false);
        await kill(first);

        const second = await startLogsProcess(database.url, port);
        cleanup.push(() => kill(second));
        const login = await fetch(`${base}/api/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: LOGS_ADMIN, password: LOGS_ADMIN_PASSWORD }) });
        const { token } = (await login.json()) as { token: { access_token: string } };
        const search = await fetch(`${base}/api/v1/logs/list/paginate`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token.access_token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ query: marker, limit: 1 }),
        });
        assert.equal(search.status, 200);
        assert.equal(((await search.json()) as { total: number }).total, 500);
      });
    });
  }
}
