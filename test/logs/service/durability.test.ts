import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../../helpers/databases.js';
import { LOGS_ADMIN, LOGS_ADMIN_PASSWORD, uniqueName } from '../../helpers/logs.js';
import { killHard, startLogsProcess } from '../../helpers/logs-process.js';
import { closedPort } from '../../helpers/upstream.js';

/**
 * Durability: a batch acknowledged by the logs service survives the process being killed (SIGKILL,
 * no shutdown) right after the acknowledgement. Runs the real CLI in a child process on the real store.
 */
for (const dialect of DIALECTS) {
  describe(`logs durability [${dialect}]`, () => {
    const cleanup: (() => Promise<void>)[] = [];
    after(async () => {
      for (const step of cleanup.reverse()) await step();
    });

    test('an acknowledged batch is found after the process is killed and restarted on the same database', async () => {
      const database: TestDatabase = await createTestDatabase(dialect);
      cleanup.push(() => database.drop());
      const port = await closedPort();
      const base = `http://127.0.0.1:${port}`;
      const basic = `Basic ${Buffer.from(`${LOGS_ADMIN}:${LOGS_ADMIN_PASSWORD}`).toString('base64')}`;
      const marker = uniqueName('durable').toLowerCase();

      const first = await startLogsProcess(database.url, port);
      cleanup.push(() => killHard(first));
      const docs = Array.from(
        { length: 500 },
        (_, i) => `{"index":{}}\n${JSON.stringify({ message: `acknowledged ${marker} ${i}` })}`,
      ).join('\n');
      const response = await fetch(`${base}/api/v1/_elastic/_bulk`, {
        method: 'POST',
        headers: { authorization: basic, 'content-type': 'application/x-ndjson' },
        body: `${docs}\n`,
      });
      assert.equal(response.status, 200);
      assert.equal(((await response.json()) as { errors: boolean }).errors, false);
      await killHard(first);

      const second = await startLogsProcess(database.url, port);
      cleanup.push(() => killHard(second));
      const login = await fetch(`${base}/api/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: LOGS_ADMIN, password: LOGS_ADMIN_PASSWORD }),
      });
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
