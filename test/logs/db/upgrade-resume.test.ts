/**
 * An upgrade of a large old store, with real processes on both dialects (docs/operations.md,
 * "Upgrade and rollback"): while its data migrations run, the port answers probes (`/healthz` 200,
 * `/readyz` 503 `migrating` with the progress) and every other route 503 with `Retry-After`; killed
 * (SIGKILL) in the middle of one, the next start resumes it where it stopped, not from zero, and
 * afterwards every event is there exactly once.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { watchLines } from '../../helpers/log-watch.js';
import { after, describe, test } from 'node:test';
import { sql } from 'kysely';
import { openDatabase, type DialectName } from '../../../src/shared/db/database.js';
import { logsMigrations } from '../../../src/logs/db/migrations/index.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../../helpers/databases.js';
import { LOGS_ADMIN_PASSWORD } from '../../helpers/logs.js';
import { killHard } from '../../helpers/logs-process.js';
import { closedPort } from '../../helpers/upstream.js';
import { countStoredEvents, insertOldEvents, migrateAsOlderVersion, OLDEST_LOGS_HISTORY } from '../../helpers/oldest-data.js';
import { nodeArgs } from '../../helpers/node-args.js';

/** Large enough that each data migration takes 20 chunks or more. */
const EVENTS = 100_000;

/** `gerbang logs` in a child process, its JSON lines offered to `waitFor` as they come. */
function startLogs(url: string, port: number) {
  const child = spawn(process.execPath, [...nodeArgs('src/cli.ts'), 'logs'], {
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      LOGS_PORT: String(port),
      LOGS_DATABASE_URL: url,
      LOGS_ADMIN_PASSWORD,
      LOGS_MFA_REQUIRED_PERMISSIONS: 'none',
      LOG_LEVEL: 'info',
      LOGS_RETENTION_INTERVAL: '0',
      LOGS_SELF_METRICS_INTERVAL: '0',
      // A progress line after every chunk: the test waits on one.
      LOGS_MIGRATION_PROGRESS_INTERVAL: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return { child, ...watchLines(child) };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}

async function progressRows(url: string) {
  const database = await openDatabase<any>(url);
  try {
    const { rows } = await sql<{
      name: string;
      done: number;
      total: number;
    }>`SELECT name, done, total FROM logs_migration_progress`.execute(database.db);
    return rows.map((row) => ({ name: row.name, done: Number(row.done), total: Number(row.total) }));
  } finally {
    await database.close();
  }
}

for (const dialect of DIALECTS) {
  describe(`an interrupted upgrade resumes [${dialect}]`, { timeout: 600_000 }, () => {
    let testDb: TestDatabase;
    const children: ChildProcess[] = [];
    after(async () => {
      for (const child of children) await killHard(child);
      await testDb?.drop();
    });

    test('probes answer while it runs; killed mid-way, the next start goes on from where it stopped; every event once', async () => {
      testDb = await createTestDatabase(dialect as DialectName);
      const old = await openDatabase<any>(testDb.url);
      await migrateAsOlderVersion(old.db, logsMigrations, 'logs', OLDEST_LOGS_HISTORY);
      await insertOldEvents(old.db, dialect, 'default', EVENTS);
      await old.close();

      const port = await closedPort();
      const first = startLogs(testDb.url, port);
      children.push(first.child);
      const progress = await first.waitFor((line) => line.msg === 'migration progress' && Number(line.done) > 0);
      assert.equal(progress.total, EVENTS);

      const base = `http://127.0.0.1:${port}`;
      const live = await fetch(`${base}/healthz`);
      assert.equal(live.status, 200, 'a liveness probe finds the process alive while it migrates');
      const ready = await fetch(`${base}/readyz`);
      assert.equal(ready.status, 503);
      const readiness = (await ready.json()) as { reasons: { reason: string; migration: string; done: number; total: number }[] };
      const migrating = readiness.reasons.find((reason) => reason.reason === 'migrating')!;
      assert.match(migrating.migration, /^0\d{3}_/);
      assert.ok(migrating.done > 0 && migrating.done <= migrating.total);
      const refused = await fetch(`${base}/api/v1/logs/search?q=disk`);
      assert.equal(refused.status, 503);
      assert.ok(Number(refused.headers.get('retry-after')) > 0);
      assert.deepEqual(await refused.json(), { error: 'migrations are running: retry later' });

      await killHard(first.child);
      const [stopped] = await progressRows(testDb.url);
      assert.ok(stopped, 'a migration was stopped in the middle');
      assert.ok(stopped.done > 0 && stopped.done < stopped.total, `${stopped.done} of ${stopped.total} kept`);

      const second = startLogs(testDb.url, port);
      children.push(second.child);
      const resumed = await second.waitFor(
        (line) => line.migration === stopped.name && /^migration (resumed|started)$/.test(line.msg ?? ''),
      );
      assert.equal(resumed.msg, 'migration resumed');
      assert.equal(resumed.done, stopped.done, 'it goes on from the rows it had done');
      await second.waitFor((line) => line.msg.startsWith('Server listening') === true);
      assert.equal((await fetch(`${base}/readyz`)).status, 200);
      await stop(second.child);

      assert.deepEqual(await progressRows(testDb.url), []);
      const database = await openDatabase<any>(testDb.url);
      try {
        assert.deepEqual(await countStoredEvents(database.db, dialect), { events: EVENTS, distinct: EVENTS });
      } finally {
        await database.close();
      }
    });
  });
}
