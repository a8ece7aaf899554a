import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { DIALECTS, createTestDatabase } from '../../helpers/databases.js';
import { DAY, T0, openTestStoreAt } from './helpers.js';
import { searchCondition } from '../../../src/logs/modules/query/condition.js';
import { nodeArgs } from '../../helpers/node-args.js';

// The writer is killed with SIGKILL right after append() resolved: no close(), no flush. On SQLite
// this is the WAL + synchronous=FULL commit; on PostgreSQL, the committed transaction (the test
// server runs with fsync=off, so this proves the acknowledgement follows COMMIT, not disk behaviour).

const child = fileURLToPath(new URL('./fixtures/append-then-wait.ts', import.meta.url));

for (const dialect of DIALECTS) {
  describe(`log store durability [${dialect}]`, () => {
    test('a batch acknowledged just before the process is killed is there after restart', async () => {
      const testDb = await createTestDatabase(dialect);
      try {
        const proc = spawn(process.execPath, [...nodeArgs(child), testDb.url, 'zqxdurable'], {
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        let output = '';
        proc.stdout.setEncoding('utf8');
        const acknowledged = new Promise<void>((resolve, reject) => {
          proc.stdout.on('data', (chunk: string) => {
            output += chunk;
            if (output.includes('acknowledged')) resolve();
          });
          proc.once('exit', (code) => reject(new Error(`child exited (${code}) before acknowledging`)));
        });
        await acknowledged;
        const exited = once(proc, 'exit');
        proc.kill('SIGKILL');
        await exited;

        const reopened = await openTestStoreAt(testDb.url);
        try {
          const result = await reopened.store.search({
            tenantId: 'durable',
            condition: searchCondition('zqxdurable'),
            from: T0,
            to: T0 + DAY,
            page: 1,
            limit: 1,
          });
          assert.equal(result.total, 500);
          // The restarted writer knows no hour's index table yet: a batch of the same hour finds it there.
          const timestamp = Date.UTC(2026, 10, 20, 12, 30);
          await reopened.store.append('durable', [{ timestamp, message: 'zqxafter restart', level: 'info' }]);
          const both = await reopened.store.search({
            tenantId: 'durable',
            condition: searchCondition('zqxdurable OR zqxafter'),
            from: T0,
            to: T0 + DAY,
            page: 1,
            limit: 1,
          });
          assert.deepEqual([both.total, both.entries[0]?.message], [501, 'zqxafter restart']);
        } finally {
          await reopened.close();
        }
      } finally {
        await testDb.drop();
      }
    });
  });
}
