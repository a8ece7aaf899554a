import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Client } from '@elastic/elasticsearch';
import { DIALECTS } from '../../helpers/databases.js';
import { listenOnLoopback } from '../../helpers/listen.js';
import { startTestLogs, uniqueName, type TestLogs } from '../../helpers/logs.js';

const HOUR = 3_600_000;

interface Created {
  id: string;
  api_key: string;
  encoded: string;
  permissions: string[];
  expires_at: string | null;
}

for (const dialect of DIALECTS) {
  describe(`API keys [${dialect}]`, () => {
    let logs: TestLogs;
    let base: string;
    before(async () => {
      logs = await startTestLogs(dialect);
      base = `http://127.0.0.1:${await listenOnLoopback(logs.app)}`;
    });
    after(async () => logs.close());

    const createKey = async (headers: Record<string, string>, payload: object) =>
      logs.request({ method: 'POST', url: '/api/v1/api-keys', headers, payload: { name: uniqueName('key'), ...payload } });
    const apiKey = (created: Created) => ({ authorization: `ApiKey ${created.encoded}` });
    const search = (headers: Record<string, string>, query = '') =>
      logs.request({ method: 'POST', url: '/api/v1/logs/list/paginate', headers, payload: { query, limit: 10 } });
    const bulk = (headers: Record<string, string>, message: string) =>
      logs.request({
        method: 'POST',
        url: '/api/v1/_elastic/_bulk',
        headers: { ...headers, 'content-type': 'application/x-ndjson' },
        payload: `{"index":{}}\n${JSON.stringify({ message, '@timestamp': new Date(logs.clock.now() - 1000).toISOString() })}\n`,
      });

    test('create, use on our API, on ingestion and with the official client, list without the secret, revoke', async () => {
      const owner = await logs.userWith(['logs:read', 'logs:write']);
      const response = await createKey(owner.headers, { permissions: ['logs:read', 'logs:write'] });
      assert.equal(response.statusCode, 201, response.body);
      const created = response.json() as Created;
      assert.match(created.api_key, /^[A-Za-z0-9_-]{43}$/);
      assert.equal(Buffer.from(created.encoded, 'base64').toString(), `${created.id}:${created.api_key}`);

      const marker = uniqueName('keyed').toLowerCase();
      assert.equal((await bulk(apiKey(created), `shipped with a key ${marker}`)).statusCode, 200);
      const found = await search(apiKey(created), marker);
      assert.equal(found.statusCode, 200, found.body);
      assert.equal(found.json().total, 1);
      const es = new Client({ node: `${base}/api/v1/_elastic`, auth: { apiKey: created.encoded }, maxRetries: 0 });
      const hits = await es.search({ index: '*', q: marker });
      assert.deepEqual(hits.hits.total, { value: 1, relation: 'eq' });

      const listed = await logs.request({ method: 'GET', url: '/api/v1/api-keys', headers: owner.headers });
      assert.equal(listed.statusCode, 200);
      const [key] = listed.json().api_keys as Record<string, unknown>[];
      assert.equal(key!.id, created.id);
      assert.ok(!('api_key' in key!) && !('secret_hash' in key!) && !('encoded' in key!), 'the secret is shown once only');
      assert.equal(key!.last_used_at, new Date(logs.clock.now()).toISOString());
      assert.ok(!listed.body.includes(created.api_key));

      const revoked = await logs.request({ method: 'DELETE', url: `/api/v1/api-keys/${created.id}`, headers: owner.headers });
      assert.equal(revoked.statusCode, 200);
      assert.ok(revoked.json().revoked_at);
      const refused = await search(apiKey(created));
      assert.equal(refused.statusCode, 401);
      assert.deepEqual(refused.json(), { error: 'invalid credentials' });
      await assert.rejects(es.search({ index: '*' }), (error: { meta?: { statusCode?: number } }) => error.meta?.statusCode === 401);

      const audited = async (action: string) => {
        const audit = await logs.request({
          method: 'GET',
          url: `/api/v1/log-audit/search?limit=1000&action=${action}`,
          headers: await logs.admin(),
        });
        return (audit.json().data as { target_id: string | null }[]).some((row) => row.target_id === created.id);
      };
      assert.ok(await audited('api_key.create'));
      assert.ok(await audited('api_key.revoke'));
    });

    test('the database holds a SHA-256 of the secret, never the secret itself', async () => {
      const owner = await logs.userWith(['logs:read']);
      const created = (await createKey(owner.headers, { permissions: ['logs:read'] })).json() as Created;
      const row = await logs.database.db.selectFrom('logs_api_keys').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
      assert.equal(row.secret_hash, createHash('sha256').update(created.api_key).digest('hex'));
      for (const [column, value] of Object.entries(row)) {
        assert.ok(!String(value).includes(created.api_key), `${column} does not hold the secret`);
        assert.ok(!String(value).includes(created.encoded), `${column} does not hold the encoded key`);
      }
      assert.equal((await search(apiKey(created))).statusCode, 200, 'the key works, checked against the hash');
    });

    test("a key has at most its creator's permissions, and its owner's current ones", async () => {
      const reader = await logs.userWith(['logs:read']);
      const wider = await createKey(reader.headers, { permissions: ['logs:read', 'logs:write'] });
      assert.equal(wider.statusCode, 403);
      const unknown = await createKey(reader.headers, { permissions: ['logs:everything'] });
      assert.equal(unknown.statusCode, 400);

      const writer = await logs.userWith(['logs:read', 'logs:write']);
      const readOnly = (await createKey(writer.headers, { permissions: ['logs:read'] })).json() as Created;
      assert.equal((await search(apiKey(readOnly))).statusCode, 200);
      assert.equal((await bulk(apiKey(readOnly), 'not allowed')).statusCode, 403, 'narrower than its creator');
      const mint = await createKey(apiKey(readOnly), { permissions: ['logs:read'] });
      assert.equal(mint.statusCode, 403, 'a key cannot create keys');

      // The owner loses logs:read: the key loses it at once.
      const admin = await logs.admin();
      const role = await logs.request({
        method: 'POST',
        url: '/api/roles',
        headers: admin,
        payload: { name: uniqueName('w'), permissions: ['logs:write'] },
      });
      const changed = await logs.request({
        method: 'PUT',
        url: `/api/users/${writer.id}`,
        headers: admin,
        payload: { roles: [role.json().name] },
      });
      assert.equal(changed.statusCode, 200, changed.body);
      assert.equal((await search(apiKey(readOnly))).statusCode, 403);
    });

    test('a users:manage holder manages the keys of users no more powerful than themselves only', async () => {
      const manager = await logs.userWith(['users:manage', 'logs:read']);
      const weaker = await logs.userWith(['logs:read']);
      const stronger = await logs.userWith(['logs:read', 'logs:write', 'alerts:write']);
      const strongersKey = (await createKey(stronger.headers, { permissions: ['logs:read'] })).json() as Created;

      const forWeaker = await createKey(manager.headers, { permissions: ['logs:read'], user_id: weaker.id });
      assert.equal(forWeaker.statusCode, 201, forWeaker.body);
      const revokeWeaker = await logs.request({
        method: 'DELETE',
        url: `/api/v1/api-keys/${forWeaker.json().id}`,
        headers: manager.headers,
      });
      assert.equal(revokeWeaker.statusCode, 200, revokeWeaker.body);

      const forStronger = await createKey(manager.headers, { permissions: ['logs:read'], user_id: stronger.id });
      assert.equal(forStronger.statusCode, 403, 'a key for a user holding permissions the manager lacks');
      const own = await createKey(manager.headers, { permissions: ['logs:read'] });
      assert.equal(own.statusCode, 201, 'their own key is still theirs to make');
      const revokeStronger = await logs.request({ method: 'DELETE', url: `/api/v1/api-keys/${strongersKey.id}`, headers: manager.headers });
      assert.equal(revokeStronger.statusCode, 403, revokeStronger.body);
      assert.equal((await search(apiKey(strongersKey))).statusCode, 200, "the stronger user's key still works");
      const audit = await logs.request({ method: 'GET', url: '/api/v1/api-keys?user_id=' + stronger.id, headers: await logs.admin() });
      assert.equal(audit.json().api_keys.length, 1, 'no key was made for the stronger user');
    });

    test('expiry, another tenant, keys for other users, and malformed headers', async () => {
      const owner = await logs.userWith(['logs:read']);
      const expiring = (
        await createKey(owner.headers, { permissions: ['logs:read'], expires_at: new Date(logs.clock.now() + HOUR).toISOString() })
      ).json() as Created;
      assert.equal((await search(apiKey(expiring))).statusCode, 200);
      assert.equal(
        (await createKey(owner.headers, { permissions: ['logs:read'], expires_at: new Date(logs.clock.now() - 1).toISOString() }))
          .statusCode,
        400,
      );

      const other = await logs.request({
        method: 'POST',
        url: '/api/tenants',
        headers: await logs.admin(),
        payload: { name: uniqueName('t') },
      });
      assert.equal(other.statusCode, 201, other.body);
      const elsewhere = await search({ ...apiKey(expiring), 'x-tenant-id': other.json().id as string });
      assert.equal(elsewhere.statusCode, 403, 'a key stays in its tenant');

      // users:manage may create a key for a user of the tenant; others may not.
      const admin = await logs.admin();
      const forOwner = await createKey(admin, { permissions: ['logs:read'], user_id: owner.id });
      assert.equal(forOwner.statusCode, 201, forOwner.body);
      const listedByAdmin = await logs.request({ method: 'GET', url: `/api/v1/api-keys?user_id=${owner.id}`, headers: admin });
      assert.equal(listedByAdmin.json().api_keys.length, 2);
      const stranger = await logs.userWith(['logs:read']);
      assert.equal((await createKey(stranger.headers, { permissions: ['logs:read'], user_id: owner.id })).statusCode, 403);
      assert.equal(
        (await logs.request({ method: 'GET', url: `/api/v1/api-keys?user_id=${owner.id}`, headers: stranger.headers })).statusCode,
        403,
      );
      assert.equal(
        (await logs.request({ method: 'DELETE', url: `/api/v1/api-keys/${expiring.id}`, headers: stranger.headers })).statusCode,
        404,
      );

      logs.clock.advance(2 * HOUR);
      assert.equal((await search(apiKey(expiring))).statusCode, 401, 'expired');

      for (const value of [
        'ApiKey !!!',
        `ApiKey ${Buffer.from('no-colon').toString('base64')}`,
        `ApiKey ${'A'.repeat(4000)}`,
        `ApiKey ${Buffer.from(`${expiring.id}:`).toString('base64')}`,
      ]) {
        const response = await search({ authorization: value });
        assert.equal(response.statusCode, 401, value.slice(0, 40));
        assert.deepEqual(response.json(), { error: 'invalid credentials' });
      }
    });
  });

  describe(`API keys: wrong keys are rate-limited like logins [${dialect}]`, () => {
    let logs: TestLogs;
    before(async () => {
      logs = await startTestLogs(dialect, { LOGS_LOGIN_RATE_PER_ADDRESS: '3' });
    });
    after(async () => logs.close());

    test('past the login limit an address gets 429 with Retry-After, until the window ends', async () => {
      const wrong = { authorization: `ApiKey ${Buffer.from('nosuchkey:guess').toString('base64')}` };
      const statuses: number[] = [];
      for (let i = 0; i < 5; i += 1) {
        statuses.push((await logs.request({ method: 'POST', url: '/api/v1/logs/list/paginate', headers: wrong, payload: {} })).statusCode);
      }
      assert.deepEqual(statuses, [401, 401, 401, 429, 429]);
      const limited = await logs.request({ method: 'POST', url: '/api/v1/logs/list/paginate', headers: wrong, payload: {} });
      assert.ok(Number(limited.headers['retry-after']) > 0);
      logs.clock.advance(2 * HOUR);
      assert.equal(
        (await logs.request({ method: 'POST', url: '/api/v1/logs/list/paginate', headers: wrong, payload: {} })).statusCode,
        401,
      );
    });
  });
}
