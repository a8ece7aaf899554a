import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import pg from 'pg';
import { createTestDatabase, describeOnPostgres } from '../helpers/databases.js';
import { eventually } from '../helpers/eventually.js';
import { killHard, startLogsProcess } from '../helpers/logs-process.js';
import { closedPort } from '../helpers/upstream.js';

/**
 * Node's process warnings (`(node:PID) Warning: ...` on stderr by default) are JSON lines of the
 * service's log (src/shared/process-warnings.ts). The warning here is a real one: PostgreSQL ends
 * the logs service's idle connections (an operator's pg_terminate_backend, a failover), and its pool
 * reports it with process.emitWarning (src/shared/db/postgres-pool.ts).
 */
describeOnPostgres('node process warnings in a running service', () => {
  const cleanup: (() => Promise<void>)[] = [];
  after(async () => {
    for (const step of cleanup.reverse()) await step();
  });

  test('a warning while the logs service runs is a JSON log line, and nothing it writes is a `(node:PID)` line', async () => {
    const database = await createTestDatabase('postgres');
    cleanup.push(() => database.drop());
    const port = await closedPort();
    const child = await startLogsProcess(database.url, port);
    cleanup.push(() => killHard(child));
    const stdout: string[] = [];
    const stderr: string[] = [];
    let pending = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop()!;
      stdout.push(...lines);
    });
    child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));

    // A request leaves the pool's connections idle; then PostgreSQL ends every one of them.
    assert.equal((await fetch(`http://127.0.0.1:${port}/readyz`)).status, 200);
    const admin = new pg.Client(database.url);
    await admin.connect();
    try {
      await admin.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
      );
    } finally {
      await admin.end();
    }

    const warning = await eventually(async () => {
      const found = stdout.filter((line) => line.includes('PostgreSQL idle connection closed'));
      assert.ok(found.length > 0, `the warning in the log; stdout so far:\n${stdout.join('\n')}\nstderr:\n${stderr.join('')}`);
      return JSON.parse(found[0]!) as { level: number; msg: string; warning: { name: string; message: string } };
    });
    assert.equal(warning.level, 40, 'warn');
    assert.equal(warning.warning.name, 'Warning');
    assert.match(warning.warning.message, /^PostgreSQL idle connection closed: /);
    assert.equal((await fetch(`http://127.0.0.1:${port}/readyz`)).status, 200, 'the service lives on');

    const startLines = child.startOutput.split('\n').filter((line) => line.trim() !== '');
    for (const line of [...startLines, ...stdout]) assert.doesNotThrow(() => JSON.parse(line), `not JSON: ${line}`);
    assert.doesNotMatch(stderr.join(''), /\(node:\d+\)/, 'node printed nothing of its own');
  });
});
