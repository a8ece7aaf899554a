import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestLogs, type TestLogs } from '../../helpers/logs.js';

// `LOGS_DATABASE_URL=sqlite::memory:` runs without a write thread (a memory database is one
// connection's): its connection must still carry the functions the store's SQL calls.
describe('the logs service on a memory database', () => {
  let logs: TestLogs;
  before(async () => {
    logs = await startTestLogs('sqlite', { LOGS_DATABASE_URL: 'sqlite::memory:' });
  });
  after(() => logs.close());

  test('answers wildcard, regular-expression and fuzzy queries', async () => {
    const headers = await logs.admin();
    const now = Math.floor(Date.now() / 60_000) * 60_000;
    const docs = [
      { '@timestamp': new Date(now).toISOString(), level: 'error', service: 'alpha', message: 'database timeout' },
      { '@timestamp': new Date(now).toISOString(), level: 'info', service: 'beta', message: 'all good' },
    ];
    const payload = docs.map((doc) => `{"create":{}}\n${JSON.stringify(doc)}\n`).join('');
    const stored = await logs.request({ method: 'POST', url: '/api/v1/_elastic/_bulk', headers, payload });
    assert.equal(stored.json().errors, false, stored.body);
    for (const query of ['level:err?r', 'service:/alp.*/', 'timeuot~']) {
      const response = await logs.request({
        method: 'POST',
        url: '/api/v1/logs/list/paginate',
        headers,
        payload: { timeRange: { from: new Date(now - 60_000).toISOString(), to: new Date(now + 60_000).toISOString() }, query },
      });
      assert.equal(response.statusCode, 200, `${query}: ${response.body}`);
      assert.equal(response.json().total, 1, query);
    }
  });
});
