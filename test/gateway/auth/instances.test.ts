import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildGateway } from '../../../src/gateway/app.js';
import { loadGatewayConfig } from '../../../src/gateway/config.js';
import { createTestDatabase, DIALECTS } from '../../helpers/databases.js';
import { ADMIN_PASSWORD } from '../../helpers/gateway.js';

for (const dialect of DIALECTS) {
  describe(`two gateway instances on one database [${dialect}]`, () => {
    test('share the signing key and the sessions: a logout on one is refused on the other at once', async () => {
      const database = await createTestDatabase(dialect);
      const config = loadGatewayConfig({ GATEWAY_DATABASE_URL: database.url, GATEWAY_ADMIN_PASSWORD: ADMIN_PASSWORD, LOG_LEVEL: 'silent' });
      const [a, b] = await Promise.all([buildGateway({ config }), buildGateway({ config })]);
      try {
        const login = await a.app.inject({
          method: 'POST',
          url: '/api/v1/auth/login',
          payload: { no_pegawai: 'admin', kata_sandi: ADMIN_PASSWORD },
        });
        const token = login.json().data.token as string;
        const jwksA = (await a.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json();
        const jwksB = (await b.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json();
        assert.deepEqual(jwksA, jwksB);
        const profile = (app: typeof a.app) =>
          app.inject({ method: 'GET', url: '/api/v1/auth/profile', headers: { authorization: token } });
        assert.equal((await profile(b.app)).statusCode, 200, 'a token from A works on B');
        assert.equal(
          (await b.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: { authorization: token } })).statusCode,
          200,
        );
        assert.equal((await profile(a.app)).statusCode, 401, 'logout on B is refused on A');
        const users = await a.app.inject({
          method: 'GET',
          url: '/api/v1/pengguna',
          headers: {
            authorization: (
              await a.app.inject({
                method: 'POST',
                url: '/api/v1/auth/login',
                payload: { no_pegawai: 'admin', kata_sandi: ADMIN_PASSWORD },
              })
            ).json().data.token,
          },
        });
        assert.equal(users.json().info.total, 1, 'concurrent starts seeded one administrator');
      } finally {
        await a.app.close();
        await b.app.close();
        await database.drop();
      }
    });

    test('count login failures together: an account locked through one instance is locked on the other', async () => {
      const database = await createTestDatabase(dialect);
      const config = loadGatewayConfig({
        GATEWAY_DATABASE_URL: database.url,
        GATEWAY_ADMIN_PASSWORD: ADMIN_PASSWORD,
        LOG_LEVEL: 'silent',
        LOGIN_MAX_FAILURES_PER_ACCOUNT: '4',
      });
      const [a, b] = await Promise.all([buildGateway({ config }), buildGateway({ config })]);
      try {
        const attempt = (gateway: typeof a, password: string) =>
          gateway.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { no_pegawai: 'admin', kata_sandi: password } });
        // Four failures, spread over both instances: with per-process counters neither would lock.
        const failures = [];
        for (const gateway of [a, b, a, b]) failures.push((await attempt(gateway, 'Wrong#Passw0rd')).statusCode);
        assert.deepEqual(failures, [401, 401, 401, 401]);
        const onA = await attempt(a, ADMIN_PASSWORD);
        const onB = await attempt(b, ADMIN_PASSWORD);
        assert.equal(onA.statusCode, 429, 'locked on A, even with the right password');
        assert.equal(onB.statusCode, 429, 'and on B');
        assert.ok(Number(onB.headers['retry-after']) > 0);
      } finally {
        await a.app.close();
        await b.app.close();
        await database.drop();
      }
    });
  });
}
