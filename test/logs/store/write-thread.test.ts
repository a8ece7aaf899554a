import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { writerThreadOf } from '../../../src/logs/modules/store/sqlite/threads/write-thread.js';
import { exitWhenWriterStops } from '../../../src/logs/server.js';
import { startTestLogs, type TestLogs } from '../../helpers/logs.js';

/**
 * The logs service's writes run on a thread of their own (src/logs/modules/store/sqlite/threads/write-thread.ts): a batch that
 * waits for the database (here: another process's write lock; in production a large batch's
 * statements and its fsync) does not stop the service from answering a search.
 */
describe('logs service: writes off the event loop [sqlite]', () => {
  const T0 = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 3_600_000;
  const range = { from: new Date(T0).toISOString(), to: new Date(T0 + 3_600_000).toISOString() };
  let logs: TestLogs;
  let headers: Record<string, string>;
  const bulk = (messages: string[]) =>
    logs.request({
      method: 'POST',
      url: '/api/v1/_elastic/_bulk',
      headers,
      payload: messages
        .map((message, i) => `{"index":{}}\n${JSON.stringify({ '@timestamp': new Date(T0 + i).toISOString(), message })}\n`)
        .join(''),
    });
  const search = (query: string) =>
    logs.request({ method: 'POST', url: '/api/v1/logs/list/paginate', headers, payload: { timeRange: range, query, limit: 10 } });

  before(async () => {
    logs = await startTestLogs('sqlite');
    headers = await logs.admin();
    assert.equal((await bulk(['stored before'])).json().errors, false);
  });
  after(async () => logs.close());

  test('a search is answered while a batch waits for the write lock; the batch is stored once the lock is free', async () => {
    const other = new SQLite(logs.url.slice('sqlite:'.length));
    try {
      other.exec('BEGIN IMMEDIATE');
      let stored = false;
      const waiting = bulk(['written after the lock', 'written after the lock too']).then((response) => {
        stored = true;
        return response;
      });
      const during = await search('stored');
      assert.equal(during.statusCode, 200);
      assert.deepEqual(
        during.json().data.map((entry: { message: string }) => entry.message),
        ['stored before'],
      );
      assert.equal(stored, false, 'the batch waits for the lock');
      other.exec('COMMIT');
      const response = await waiting;
      assert.equal(response.statusCode, 200);
      assert.equal(response.json().errors, false);
    } finally {
      if (other.inTransaction) other.exec('ROLLBACK');
      other.close();
    }
    const after = await search('written');
    assert.equal(after.json().total, 2);
  });
});

describe('logs service: a stopped SQLite thread [sqlite]', () => {
  let logs: TestLogs;
  let headers: Record<string, string>;
  before(async () => {
    logs = await startTestLogs('sqlite');
    headers = await logs.admin();
  });
  after(async () => logs.close());

  test('fails /readyz and /healthz and asks the process to exit 1 (to be restarted); writes meanwhile fail with a 500', async () => {
    for (const url of ['/readyz', '/healthz']) assert.equal((await logs.request({ method: 'GET', url })).statusCode, 200);
    const exits: number[] = [];
    exitWhenWriterStops(logs, (code) => exits.push(code));
    await writerThreadOf(logs.database.db)!.stopAbruptly();
    assert.deepEqual(exits, [1]);
    for (const url of ['/readyz', '/healthz']) {
      const probe = await logs.request({ method: 'GET', url });
      assert.equal(probe.statusCode, 503, url);
      assert.equal(probe.json().status, 'unavailable');
    }
    const ready = await logs.request({ method: 'GET', url: '/readyz' });
    assert.deepEqual(
      ready.json().reasons.map((reason: { reason: string }) => reason.reason),
      ['database'],
    );
    const write = await logs.request({
      method: 'POST',
      url: '/api/v1/_elastic/_bulk',
      headers,
      payload: `{"index":{}}\n${JSON.stringify({ '@timestamp': new Date().toISOString(), message: 'after the stop' })}\n`,
    });
    assert.equal(write.statusCode, 500);
    assert.equal(write.json().error.reason, 'internal error', 'no internals in the answer');
  });
});
