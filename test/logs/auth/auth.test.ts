import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildLogsService } from '../../../src/logs/app.js';
import { loadLogsConfig } from '../../../src/logs/config.js';
import { createTestDatabase, DIALECTS } from '../../helpers/databases.js';
import { bearer, LOGS_ADMIN, LOGS_ADMIN_PASSWORD, startTestLogs, type TestLogs } from '../../helpers/logs.js';

for (const dialect of DIALECTS) {
  describe(`logs auth [${dialect}]`, () => {
    let logs: TestLogs;
    before(async () => {
      logs = await startTestLogs(dialect);
    });
    after(async () => logs.close());

    test('login answers the spec 2.5 shapes with a 300 s Bearer token', async () => {
      const response = await logs.request({
        method: 'POST',
        url: '/api/login',
        payload: { username: LOGS_ADMIN, password: LOGS_ADMIN_PASSWORD },
      });
      assert.equal(response.statusCode, 200);
      const body = response.json();
      assert.deepEqual(Object.keys(body).sort(), ['token', 'user']);
      assert.deepEqual(Object.keys(body.token).sort(), ['access_token', 'expires_in', 'refresh_token', 'token_type']);
      assert.equal(body.token.expires_in, 300);
      assert.equal(body.token.token_type, 'Bearer');
      assert.match(body.token.access_token, /^eyJ[\w-]+\.[\w-]+\.[\w-]+$/);
      assert.deepEqual(body.user, { username: LOGS_ADMIN, roles: ['admin'], email: 'admin@gerbang.local' });
    });

    test('/api/me returns the current user', async () => {
      const response = await logs.request({ method: 'GET', url: '/api/me', headers: await logs.admin() });
      assert.equal(response.statusCode, 200);
      const me = response.json();
      assert.deepEqual(
        { username: me.username, email: me.email, roles: me.roles, tenant_id: me.tenant_id },
        { username: LOGS_ADMIN, email: 'admin@gerbang.local', roles: ['admin'], tenant_id: 'default' },
      );
      assert.ok(me.permissions.includes('users:manage') && me.permissions.includes('logs:read'), 'the admin holds every permission');
    });

    test('spec 7.2 messages: missing token, invalid token, invalid credentials, invalid json body, not found', async () => {
      const missing = await logs.request({ method: 'GET', url: '/api/me' });
      assert.equal(missing.statusCode, 401);
      assert.deepEqual(missing.json(), { error: 'missing bearer token' });

      const invalid = await logs.request({ method: 'GET', url: '/api/me', headers: bearer('eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln') });
      assert.equal(invalid.statusCode, 401);
      assert.equal(invalid.json().error, 'invalid token');

      const wrong = await logs.request({
        method: 'POST',
        url: '/api/login',
        payload: { username: LOGS_ADMIN, password: 'Wrong#Passw0rd' },
      });
      assert.equal(wrong.statusCode, 401);
      assert.deepEqual(wrong.json(), { error: 'invalid credentials' });
      const unknown = await logs.request({
        method: 'POST',
        url: '/api/login',
        payload: { username: 'nobody-here', password: 'Wrong#Passw0rd' },
      });
      assert.equal(unknown.statusCode, 401);
      assert.deepEqual(unknown.json(), { error: 'invalid credentials' });

      const badJson = await logs.request({
        method: 'POST',
        url: '/api/login',
        headers: { 'content-type': 'application/json' },
        payload: '{"username": ',
      });
      assert.equal(badJson.statusCode, 400);
      assert.equal(badJson.json().error, 'invalid json body');
      const missingField = await logs.request({ method: 'POST', url: '/api/login', payload: { username: LOGS_ADMIN } });
      assert.equal(missingField.statusCode, 400);
      assert.equal(missingField.json().error, 'invalid json body');
      assert.match(missingField.json().detail, /password/);

      const notFound = await logs.request({ method: 'GET', url: '/api/v1/nothing-here' });
      assert.equal(notFound.statusCode, 404);
      assert.deepEqual(notFound.json(), { error: 'not found' });
    });

    test('an access token expires after expires_in seconds', async () => {
      const token = await logs.login();
      logs.clock.advance(301_000);
      const response = await logs.request({ method: 'GET', url: '/api/me', headers: bearer(token.access_token) });
      assert.equal(response.statusCode, 401);
      assert.equal(response.json().error, 'invalid token');
    });

    test('refresh rotates: the new pair works, the old refresh token does not, and its reuse ends the session', async () => {
      const first = await logs.login();
      const refreshed = await logs.request({ method: 'POST', url: '/api/refresh', payload: { refresh_token: first.refresh_token } });
      assert.equal(refreshed.statusCode, 200);
      const second = refreshed.json().token;
      assert.deepEqual(Object.keys(second).sort(), ['access_token', 'expires_in', 'refresh_token', 'token_type']);
      assert.notEqual(second.refresh_token, first.refresh_token);
      assert.equal((await logs.request({ method: 'GET', url: '/api/me', headers: bearer(second.access_token) })).statusCode, 200);

      // The first refresh token again: theft is assumed and the whole family is revoked.
      const reused = await logs.request({ method: 'POST', url: '/api/refresh', payload: { refresh_token: first.refresh_token } });
      assert.equal(reused.statusCode, 401);
      assert.equal(reused.json().error, 'invalid token');
      assert.equal(
        (await logs.request({ method: 'POST', url: '/api/refresh', payload: { refresh_token: second.refresh_token } })).statusCode,
        401,
      );
      assert.equal((await logs.request({ method: 'GET', url: '/api/me', headers: bearer(second.access_token) })).statusCode, 401);

      const audit = await logs.request({
        method: 'GET',
        url: '/api/v1/log-audit/search?action=auth.refresh_reuse',
        headers: await logs.admin(),
      });
      assert.equal(audit.json().total, 1);
    });

    test('an unknown refresh token is 401', async () => {
      const response = await logs.request({ method: 'POST', url: '/api/refresh', payload: { refresh_token: 'not-a-token' } });
      assert.equal(response.statusCode, 401);
    });

    test('logout ends the session: its access and refresh tokens stop working', async () => {
      const token = await logs.login();
      const out = await logs.request({ method: 'POST', url: '/api/logout', headers: bearer(token.access_token) });
      assert.equal(out.statusCode, 200);
      assert.equal((await logs.request({ method: 'GET', url: '/api/me', headers: bearer(token.access_token) })).statusCode, 401);
      assert.equal(
        (await logs.request({ method: 'POST', url: '/api/refresh', payload: { refresh_token: token.refresh_token } })).statusCode,
        401,
      );
    });

    test('logins and failed logins go to the audit trail', async () => {
      await logs.request({ method: 'POST', url: '/api/login', payload: { username: LOGS_ADMIN, password: 'Wrong#Passw0rd1' } });
      const response = await logs.request({
        method: 'GET',
        url: '/api/v1/log-audit/search?action=auth.login',
        headers: await logs.admin(),
      });
      const outcomes = new Set(response.json().data.map((row: { outcome: string }) => row.outcome));
      assert.ok(outcomes.has('success') && outcomes.has('failure'));
      assert.ok(!JSON.stringify(response.json()).includes('Wrong#Passw0rd1'), 'no password in the audit trail');
    });

    test('the OpenAPI description lists every route', async () => {
      const response = await logs.request({ method: 'GET', url: '/openapi.json' });
      assert.equal(response.statusCode, 200);
      const paths = Object.keys(response.json().paths);
      for (const path of [
        '/api/login',
        '/api/me',
        '/api/refresh',
        '/api/logout',
        '/api/tenants',
        '/api/users/{id}',
        '/api/roles',
        '/api/v1/logs/list/paginate',
        '/api/v1/logs/histogram',
        '/api/v1/logs/fields',
        '/api/v1/logs/fields/{field}/distinct',
        '/api/v1/log-audit/search',
        '/api/v1/log-audit/export/csv',
        '/api/v1/log-audit/export/excel',
        '/v1/logs',
        '/api/v1/_elastic/_bulk',
      ]) {
        assert.ok(paths.includes(path), `${path} in ${paths.join(' ')}`);
      }
    });

    test('healthz and readyz', async () => {
      const health = await logs.request({ method: 'GET', url: '/healthz' });
      assert.equal(health.statusCode, 200);
      assert.deepEqual(health.json(), { status: 'ok' });
      const ready = await logs.request({ method: 'GET', url: '/readyz' });
      assert.equal(ready.statusCode, 200);
      assert.deepEqual(ready.json(), { status: 'ok' });
    });
  });

  test(`two logs instances on one database count login failures together [${dialect}]`, async () => {
    const database = await createTestDatabase(dialect);
    const config = loadLogsConfig({
      LOGS_DATABASE_URL: database.url,
      LOGS_ADMIN_PASSWORD: LOGS_ADMIN_PASSWORD,
      LOGS_MFA_REQUIRED_PERMISSIONS: 'none',
      LOG_LEVEL: 'silent',
      LOGS_RETENTION_INTERVAL: '0',
      LOGS_LOGIN_MAX_FAILURES_PER_USERNAME: '4',
    });
    const a = await buildLogsService({ config });
    const b = await buildLogsService({ config });
    try {
      const attempt = (service: typeof a, password: string) =>
        service.app.inject({ method: 'POST', url: '/api/login', payload: { username: LOGS_ADMIN, password } });
      const failures = [];
      for (const service of [a, b, a, b]) failures.push((await attempt(service, 'Wrong#Passw0rd')).statusCode);
      assert.deepEqual(failures, [401, 401, 401, 401]);
      assert.equal(
        (await attempt(a, LOGS_ADMIN_PASSWORD)).statusCode,
        429,
        "locked on A with the right password: B's failures counted too",
      );
      assert.equal((await attempt(b, LOGS_ADMIN_PASSWORD)).statusCode, 429);
    } finally {
      await a.app.close();
      await b.app.close();
      await database.drop();
    }
  });

  describe(`logs rate limits [${dialect}]`, () => {
    let logs: TestLogs;
    before(async () => {
      logs = await startTestLogs(dialect, {
        LOGS_LOGIN_MAX_FAILURES_PER_USERNAME: '3',
        LOGS_LOGIN_RATE_PER_ADDRESS: '8',
        LOGS_API_RATE_PER_USER: '5',
      });
    });
    after(async () => logs.close());

    test('failed logins per username: 429 with Retry-After, even with the right password, until the window passes', async () => {
      for (let i = 0; i < 3; i++) {
        const response = await logs.request({
          method: 'POST',
          url: '/api/login',
          payload: { username: LOGS_ADMIN, password: 'Wrong#Passw0rd' },
        });
        assert.equal(response.statusCode, 401);
      }
      const locked = await logs.request({
        method: 'POST',
        url: '/api/login',
        payload: { username: LOGS_ADMIN, password: LOGS_ADMIN_PASSWORD },
      });
      assert.equal(locked.statusCode, 429);
      assert.deepEqual(locked.json(), { error: 'rate limit exceeded' });
      assert.ok(Number(locked.headers['retry-after']) >= 1);
      logs.clock.advance(15 * 60_000 + 1000);
    });

    test('API calls per user: 429 once the limit is spent', async () => {
      logs.clock.advance(60_000);
      const headers = bearer((await logs.login()).access_token);
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await logs.request({ method: 'GET', url: '/api/me', headers })).statusCode);
      assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429]);
      logs.clock.advance(60_000);
      assert.equal(
        (await logs.request({ method: 'GET', url: '/api/me', headers: bearer((await logs.login()).access_token) })).statusCode,
        200,
      );
    });

    test('login attempts per address: 429 after the limit', async () => {
      logs.clock.advance(60_000);
      const statuses: number[] = [];
      for (let i = 0; i < 9; i++)
        statuses.push(
          (await logs.request({ method: 'POST', url: '/api/login', payload: { username: `someone${i}`, password: 'x' } })).statusCode,
        );
      assert.equal(statuses.at(-1), 429);
      assert.ok(statuses.slice(0, 8).every((status) => status === 401));
    });
  });
}
