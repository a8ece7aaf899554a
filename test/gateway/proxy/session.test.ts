import assert from 'node:assert/strict';
import { inject } from 'light-my-request';
import { once } from 'node:events';
import { after, before, describe, test } from 'node:test';
import { buildGateway, type Gateway } from '../../../src/gateway/app.js';
import { loadGatewayConfig } from '../../../src/gateway/config.js';
import { UNANNOUNCED_TRUST_MS } from '../../../src/gateway/modules/auth/session-cache.js';
import { TestClock } from '../../helpers/clock.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../../helpers/databases.js';
import { ADMIN_PASSWORD } from '../../helpers/gateway.js';
import { startUpstream, type TestUpstream } from '../../helpers/upstream.js';

// The session look-up of the token check is cached briefly (GATEWAY_SESSION_CACHE_TTL): these tests
// pin down that logout, password changes and resets still refuse tokens at once on the instance
// that made them, and for another instance sharing the database: at once on PostgreSQL (LISTEN/
// NOTIFY), within one TTL on SQLite.
for (const dialect of DIALECTS) {
  describe(`proxy token check with the session cache [${dialect}]`, () => {
    let database: TestDatabase;
    let upstream: TestUpstream;
    let a: Gateway;
    let b: Gateway;
    const clock = new TestClock();

    before(async () => {
      database = await createTestDatabase(dialect);
      upstream = await startUpstream((_req, res) => void res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
      const env = {
        GATEWAY_DATABASE_URL: database.url,
        GATEWAY_ADMIN_PASSWORD: ADMIN_PASSWORD,
        LOG_LEVEL: 'silent',
        SERVER_SERVICE_MASTER_DATA: upstream.url,
        GATEWAY_SESSION_CACHE_TTL: '2s',
      };
      a = await buildGateway({ config: loadGatewayConfig(env), now: clock.now });
      b = await buildGateway({ config: loadGatewayConfig(env), now: clock.now });
    });
    after(async () => {
      await a.app.close();
      await b.app.close();
      await upstream.close();
      await database.drop();
    });

    const login = async (gateway: Gateway, noPegawai: string, password: string) => {
      const response = await gateway.app.inject({
        method: 'POST',
        url: '/api/v1/auth/login',
        payload: { no_pegawai: noPegawai, kata_sandi: password },
      });
      assert.equal(response.statusCode, 200, response.body);
      return response.json().data.token as string;
    };
    const proxied = async (gateway: Gateway, token: string) =>
      (await inject(gateway.handle, { method: 'GET', url: '/api/v1/master-data/provinsi', headers: { authorization: token } })).statusCode;
    /** The user of `token` changes their password on `gateway` (which ends their sessions). */
    const changePassword = async (gateway: Gateway, token: string) => {
      const changed = await gateway.app.inject({
        method: 'PUT',
        url: '/api/v1/auth/change-password',
        headers: { authorization: token },
        payload: { kata_sandi_lama: 'Rahasia#123', kata_sandi: 'Baru#12345', konfirmasi_kata_sandi: 'Baru#12345' },
      });
      assert.equal(changed.statusCode, 200, changed.body);
    };
    const newUser = async (suffix: string) => {
      const admin = await login(a, 'admin', ADMIN_PASSWORD);
      const fields = {
        no_pegawai: `1990${process.pid}${suffix}`,
        nama: 'Uji',
        email: `uji${suffix}${process.pid}@example.go.id`,
        kata_sandi: 'Rahasia#123',
        tipe_pegawai: 'pns',
        hak_akses_id: 'pegawai',
      };
      const created = await a.app.inject({ method: 'POST', url: '/api/v1/pengguna', headers: { authorization: admin }, payload: fields });
      assert.equal(created.statusCode, 201, created.body);
      return { id: created.json().data.id as string, admin, noPegawai: fields.no_pegawai };
    };

    test('a password change refuses the old token at once, though its session was just cached', async () => {
      const user = await newUser('1');
      const token = await login(a, user.noPegawai, 'Rahasia#123');
      assert.equal(await proxied(a, token), 200); // session now cached
      await changePassword(a, token);
      const seen = upstream.seen.length;
      assert.equal(await proxied(a, token), 401);
      assert.equal(upstream.seen.length, seen);
    });

    test("an administrator's password reset refuses the user's token at once", async () => {
      const user = await newUser('2');
      const token = await login(a, user.noPegawai, 'Rahasia#123');
      assert.equal(await proxied(a, token), 200);
      const reset = await a.app.inject({
        method: 'POST',
        url: `/api/v1/pengguna/${user.id}/reset-password`,
        headers: { authorization: user.admin },
        payload: { kata_sandi: 'Reset#12345' },
      });
      assert.ok(reset.statusCode < 300, reset.body);
      assert.equal(await proxied(a, token), 401);
    });

    if (dialect === 'postgres') {
      test('another instance sharing PostgreSQL drops the session as soon as the logout is announced', async () => {
        const user = await newUser('3');
        const token = await login(a, user.noPegawai, 'Rahasia#123');
        assert.equal(await proxied(b, token), 200); // cached on B
        const announced = once(b.sessions.events, 'ended-elsewhere');
        const logout = await a.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: { authorization: token } });
        assert.equal(logout.statusCode, 200);
        assert.equal(await proxied(a, token), 401, 'at once where the logout happened');
        await announced;
        assert.equal(await proxied(b, token), 401, 'on the other instance, with no clock moved');
      });

      test('a password change inside a transaction is announced to the other instance on commit', async () => {
        const user = await newUser('4');
        const token = await login(a, user.noPegawai, 'Rahasia#123');
        assert.equal(await proxied(b, token), 200);
        const announced = once(b.sessions.events, 'ended-elsewhere');
        await changePassword(a, token);
        await announced;
        assert.equal(await proxied(b, token), 401);
      });
    } else {
      test('another instance sharing the SQLite file refuses a logged-out token within one cache TTL', async () => {
        const user = await newUser('3');
        const token = await login(a, user.noPegawai, 'Rahasia#123');
        assert.equal(await proxied(b, token), 200); // cached on B
        const logout = await a.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: { authorization: token } });
        assert.equal(logout.statusCode, 200);
        assert.equal(await proxied(a, token), 401, 'at once where the logout happened');
        clock.advance(2_001);
        assert.equal(await proxied(b, token), 401, 'after one TTL on the other instance');
      });

      // No announcements between instances on SQLite: B is told its channel is lost as its
      // PostgreSQL listener would be (test/gateway/auth/instances-on-postgres.test.ts does it for real).
      test('while announcements cannot be heard a cached session is trusted for a second only, and nothing cached then survives their return', async () => {
        const user = await newUser('5');
        const token = await login(a, user.noPegawai, 'Rahasia#123');
        assert.equal(await proxied(b, token), 200); // cached on B for 2 s
        b.sessions.announcementsLost();
        const logout = await a.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: { authorization: token } });
        assert.equal(logout.statusCode, 200);
        clock.advance(UNANNOUNCED_TRUST_MS - 1);
        assert.equal(await proxied(b, token), 200, 'still within its second');
        clock.advance(1);
        assert.equal(await proxied(b, token), 401, 'a second after it was read, though its TTL is 2 s');

        const unheard = await login(a, user.noPegawai, 'Rahasia#123');
        assert.equal(await proxied(b, unheard), 200); // read while nothing can be heard
        const ended = await a.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: { authorization: unheard } });
        assert.equal(ended.statusCode, 200);
        b.sessions.announcementsRestored();
        assert.equal(await proxied(b, unheard), 401, 'at once once back, with no clock moved');
      });
    }
  });
}
