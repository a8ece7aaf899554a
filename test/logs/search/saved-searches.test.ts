import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DIALECTS } from '../../helpers/databases.js';
import { startTestLogs, uniqueName, type TestLogs } from '../../helpers/logs.js';

const URL = '/api/v1/logs/saved-searches';

for (const dialect of DIALECTS) {
  describe(`saved searches [${dialect}]`, () => {
    let logs: TestLogs;
    let admin: Record<string, string>;
    before(async () => {
      logs = await startTestLogs(dialect);
      admin = await logs.admin();
    });
    after(async () => logs.close());

    const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, headers: Record<string, string>, payload?: object) =>
      logs.request({ method, url, headers, ...(payload ? { payload } : {}) });

    test('saved, listed by name, opened, renamed and deleted; shared with the tenant’s readers', async () => {
      const alice = await logs.userWith(['logs:read']);
      const bob = await logs.userWith(['logs:read']);
      const created = await call('POST', URL, alice.headers, {
        name: 'Checkout errors',
        query: 'service:checkout level:error',
        range: { relative: 'now-15m' },
        columns: ['service', 'http.status'],
        sort: 'asc',
      });
      assert.equal(created.statusCode, 201, created.body);
      const saved = created.json();
      assert.equal(saved.name, 'Checkout errors');
      assert.deepEqual(saved.range, { relative: 'now-15m' });
      assert.deepEqual(saved.columns, ['service', 'http.status']);
      assert.equal(saved.sort, 'asc');
      assert.deepEqual(saved.owner, { id: alice.id, username: alice.username });
      assert.equal(saved.can_edit, true);
      const defaults = (await call('POST', URL, alice.headers, { name: 'All of it' })).json();
      assert.deepEqual([defaults.query, defaults.range, defaults.columns, defaults.sort], ['', { relative: 'now-1h' }, [], 'desc']);

      // Bob reads the tenant's searches, by name; he may not change Alice's.
      const listed = (await call('GET', URL, bob.headers)).json().data;
      assert.deepEqual(
        listed.map((entry: { name: string }) => entry.name),
        ['All of it', 'Checkout errors'],
      );
      assert.equal(listed[1].can_edit, false);
      const opened = await call('GET', `${URL}/${saved.id}`, bob.headers);
      assert.equal(opened.json().query, 'service:checkout level:error');
      assert.equal((await call('PUT', `${URL}/${saved.id}`, bob.headers, { name: 'Mine now' })).statusCode, 403);
      assert.equal((await call('DELETE', `${URL}/${saved.id}`, bob.headers)).statusCode, 403);

      // The owner renames it and changes its range; the admin (users:manage) may delete anyone's.
      const renamed = await call('PUT', `${URL}/${saved.id}`, alice.headers, {
        name: 'Checkout errors (abs)',
        range: { from: '2026-11-20T00:00:00.000Z', to: '2026-11-21T00:00:00.000Z' },
      });
      assert.equal(renamed.statusCode, 200, renamed.body);
      assert.equal(renamed.json().name, 'Checkout errors (abs)');
      assert.equal(renamed.json().query, 'service:checkout level:error', 'fields not given stay');
      assert.deepEqual(renamed.json().range, { from: '2026-11-20T00:00:00.000Z', to: '2026-11-21T00:00:00.000Z' });
      assert.equal((await call('GET', `${URL}/${saved.id}`, admin)).json().can_edit, true);
      assert.equal((await call('DELETE', `${URL}/${saved.id}`, admin)).statusCode, 204);
      assert.equal((await call('GET', `${URL}/${saved.id}`, alice.headers)).statusCode, 404);
      assert.equal((await call('DELETE', `${URL}/${saved.id}`, alice.headers)).statusCode, 404);

      const audit = (await call('GET', '/api/v1/log-audit/search?action=saved_search.delete', admin)).json();
      assert.equal(audit.data[0].target_id, saved.id);
    });

    test('names are unique in a tenant; bad ranges, names and fields are a clear 400', async () => {
      const name = uniqueName('dup');
      assert.equal((await call('POST', URL, admin, { name })).statusCode, 201);
      const again = await call('POST', URL, admin, { name: ` ${name} ` });
      assert.equal(again.statusCode, 400);
      assert.equal(again.json().detail, `saved search "${name}" already exists`);
      const other = (await call('POST', URL, admin, { name: uniqueName('other') })).json();
      const clash = await call('PUT', `${URL}/${other.id}`, admin, { name });
      assert.equal(clash.statusCode, 400);
      assert.match(clash.json().detail, /already exists/);

      for (const body of [
        { name: '' },
        { name: '   ' },
        { name: 'x', range: { relative: 'yesterday' } },
        { name: 'x', range: { from: '2026-11-21T00:00:00Z', to: '2026-11-20T00:00:00Z' } },
        { name: 'x', columns: Array.from({ length: 51 }, (_, i) => `f${i}`) },
        { name: 'x', sort: 'sideways' },
      ]) {
        const refused = await call('POST', URL, admin, body);
        assert.equal(refused.statusCode, 400, JSON.stringify(body));
        assert.equal(refused.json().error, 'invalid json body');
      }
      assert.equal((await call('PUT', `${URL}/${other.id}`, admin, {})).statusCode, 400);
    });

    test('tenancy: another tenant sees none of them; logs:read is needed', async () => {
      const tenant = (await call('POST', '/api/tenants', admin, { name: uniqueName('t') })).json();
      const mine = (await call('POST', URL, admin, { name: uniqueName('mine') })).json();
      const theirs = await call('GET', URL, { ...admin, 'x-tenant-id': tenant.id });
      assert.deepEqual(theirs.json().data, []);
      assert.equal((await call('GET', `${URL}/${mine.id}`, { ...admin, 'x-tenant-id': tenant.id })).statusCode, 404);
      assert.equal((await call('DELETE', `${URL}/${mine.id}`, { ...admin, 'x-tenant-id': tenant.id })).statusCode, 404);
      const reader = await logs.userWith(['logs:read'], { tenantId: tenant.id });
      const same = (await call('POST', URL, reader.headers, { name: mine.name })).json();
      assert.equal(same.name, mine.name, 'names are unique per tenant only');
      assert.deepEqual(
        (await call('GET', URL, reader.headers)).json().data.map((entry: { id: string }) => entry.id),
        [same.id],
      );
      const stranger = await logs.userWith(['alerts:read']);
      assert.equal((await call('GET', URL, stranger.headers)).statusCode, 403);
      assert.equal((await call('POST', URL, stranger.headers, { name: 'no' })).statusCode, 403);
    });
  });
}
