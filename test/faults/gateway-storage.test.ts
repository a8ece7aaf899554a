import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startOwnPostgres, type OwnPostgres } from '../helpers/own-postgres.js';
import { ADMIN_NO_PEGAWAI, ADMIN_PASSWORD, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { startUpstream, type TestUpstream } from '../helpers/upstream.js';

describe('gateway faults: its PostgreSQL stopped', () => {
  let postgres: OwnPostgres;
  let gateway: TestGateway;
  let upstream: TestUpstream;
  before(async () => {
    postgres = await startOwnPostgres();
    upstream = await startUpstream((_req, res) => void res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
    // No session cache: every request asks the database, as a revocation check must.
    gateway = await startTestGateway('sqlite', {
      GATEWAY_DATABASE_URL: postgres.url,
      GATEWAY_SESSION_CACHE_TTL: '0',
      SERVER_SERVICE_MASTER_DATA: upstream.url,
    });
  });
  after(async () => {
    await gateway?.close();
    await upstream?.close();
    await postgres?.remove();
  });

  test('logins, account calls and proxied calls answer 503 STORAGE_UNAVAILABLE with Retry-After (never 500, never 401), then work again once it is back', async () => {
    const token = await gateway.login();
    await postgres.stop();

    const login = await gateway.request({
      method: 'POST',
      headers: { 'accept-language': 'en' },
      url: '/api/v1/auth/login',
      payload: { no_pegawai: ADMIN_NO_PEGAWAI, kata_sandi: ADMIN_PASSWORD },
    });
    const profile = await gateway.request({
      method: 'GET',
      url: '/api/v1/auth/profile',
      headers: { authorization: token, 'accept-language': 'en' },
    });
    const users = await gateway.request({
      method: 'GET',
      url: '/api/v1/pengguna',
      headers: { authorization: token, 'accept-language': 'en' },
    });
    const proxied = await gateway.request({
      method: 'GET',
      url: '/api/v1/master-data/x',
      headers: { authorization: token, 'accept-language': 'en' },
    });
    for (const [what, response] of Object.entries({ login, profile, users, proxied })) {
      assert.equal(response.statusCode, 503, `${what}: ${response.body}`);
      assert.equal(response.headers['retry-after'], '30', what);
      assert.deepEqual(response.json(), { code: 503, status: false, message: 'Data storage is unavailable for now: retry later' }, what);
      assert.doesNotMatch(response.body, /ECONNREFUSED|127\.0\.0\.1|postgres/i, `${what}: no address or driver detail`);
    }

    await postgres.start();
    assert.equal(
      (await gateway.request({ method: 'GET', url: '/api/v1/auth/profile', headers: { authorization: token } })).statusCode,
      200,
    );
    assert.ok(await gateway.login());
  });
});
