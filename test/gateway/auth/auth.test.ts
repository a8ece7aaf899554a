import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { generateKeyPair, SignJWT, decodeJwt, decodeProtectedHeader } from 'jose';
import { DIALECTS } from '../../helpers/databases.js';
import { ADMIN_NO_PEGAWAI, ADMIN_PASSWORD, startTestGateway, type TestGateway } from '../../helpers/gateway.js';

const LOGIN = '/api/v1/auth/login';
const PROFILE = '/api/v1/auth/profile';
const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

for (const dialect of DIALECTS) {
  describe(`gateway auth [${dialect}]`, () => {
    let gw: TestGateway;
    before(async () => {
      gw = await startTestGateway(dialect, { PASSWORD_MAX_AGE: '90d' });
    });
    after(async () => gw.close());

    const login = (no_pegawai: string, kata_sandi: string, headers: Record<string, string> = {}) =>
      gw.request({ method: 'POST', url: LOGIN, payload: { no_pegawai, kata_sandi }, headers });
    const profile = (authorization: string) => gw.request({ method: 'GET', url: PROFILE, headers: { authorization } });

    test('login returns a wrapped token and the user (spec 4.1)', async () => {
      const response = await login(ADMIN_NO_PEGAWAI, ADMIN_PASSWORD);
      assert.equal(response.statusCode, 200);
      const body = response.json();
      assert.equal(body.code, 200);
      assert.equal(body.status, true);
      assert.equal(typeof body.message, 'string');
      assert.match(body.data.token, /^[A-Za-z0-9]{3}eyJ[\w-]+\.[\w-]+\.[\w-]+[A-Za-z0-9]{5}$/);
      assert.deepEqual(Object.keys(body.data.user).sort(), ['email', 'hak_akses_id', 'id', 'nama', 'no_pegawai', 'tipe_pegawai']);
      assert.equal(body.data.user.no_pegawai, ADMIN_NO_PEGAWAI);
      const jwt = body.data.token.slice(3, -5);
      assert.equal(decodeProtectedHeader(jwt).alg, 'ES256');
      const claims = decodeJwt(jwt);
      assert.equal(claims.user_id, body.data.user.id);
      assert.equal(claims.sub, body.data.user.id);
      assert.equal(typeof claims.sid, 'string');
      assert.equal(claims.exp! - claims.iat!, 24 * 3600);
    });

    test('wrong password and unknown employee number give the same 401', async () => {
      const wrong = await login(ADMIN_NO_PEGAWAI, 'Wrong#Passw0rd');
      const unknown = await login('nobody-here', 'Wrong#Passw0rd');
      assert.equal(wrong.statusCode, 401);
      assert.equal(unknown.statusCode, 401);
      assert.deepEqual(wrong.json(), unknown.json());
      assert.equal(wrong.json().status, false);
      assert.equal(wrong.json().code, 401);
    });

    test('bad login bodies are 400 in the envelope and never 500', async () => {
      const cases = [
        { payload: '{"no_pegawai":', headers: { 'content-type': 'application/json' } },
        { payload: { no_pegawai: 'admin' } },
        { payload: { no_pegawai: 12345, kata_sandi: 'x' } },
        { payload: { no_pegawai: ['admin'], kata_sandi: 'x' } },
        { payload: '', headers: { 'content-type': 'application/json' } },
      ];
      for (const { payload, headers } of cases) {
        const response = await gw.request({ method: 'POST', url: LOGIN, payload, headers });
        assert.equal(response.statusCode, 400, JSON.stringify(payload));
        assert.equal(response.json().status, false);
        assert.equal(response.json().code, 400);
      }
    });

    test('a body over the limit is 413 in the envelope', async () => {
      const response = await gw.request({ method: 'POST', url: LOGIN, payload: { no_pegawai: 'a', kata_sandi: 'x'.repeat(2_000_000) } });
      assert.equal(response.statusCode, 413);
      assert.deepEqual({ code: response.json().code, status: response.json().status }, { code: 413, status: false });
    });

    test('injection strings as credentials are just wrong credentials', async () => {
      for (const value of ["' OR '1'='1", "admin'--", '{"$ne":null}', '\u0000admin']) {
        const response = await login(value, value);
        assert.equal(response.statusCode, value.includes('\u0000') ? 400 : 401, value);
      }
    });

    test('profile (spec 4.1) with the wrapped token, a bare JWT and Bearer', async () => {
      const token = await gw.login();
      const jwt = token.slice(3, -5);
      for (const authorization of [token, jwt, `Bearer ${jwt}`, `Bearer ${token}`]) {
        const response = await profile(authorization);
        assert.equal(response.statusCode, 200, authorization.slice(0, 10));
        const { data } = response.json();
        assert.deepEqual(Object.keys(data).sort(), ['email', 'hak_akses', 'id', 'nama', 'no_pegawai', 'tipe_pegawai']);
        assert.deepEqual(data.hak_akses, { id: 'admin', nama: 'Administrator' });
      }
    });

    test('missing, malformed, tampered and foreign tokens are 401', async () => {
      const token = await gw.login();
      const jwt = token.slice(3, -5);
      const [header, payload, signature] = jwt.split('.') as [string, string, string];
      const claims = decodeJwt(jwt);
      const { privateKey } = await generateKeyPair('ES256');
      const foreign = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'ES256', kid: decodeProtectedHeader(jwt).kid!, typ: 'at+jwt' })
        .sign(privateKey);
      const hmac = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' }).sign(new TextEncoder().encode('secret'));
      const none = `${b64({ alg: 'none', typ: 'at+jwt' })}.${payload}.`;
      const elevated = `${header}.${b64({ ...claims, user_id: '00000000-0000-4000-8000-000000000000' })}.${signature}`;
      const missing = await gw.request({ method: 'GET', url: PROFILE });
      assert.equal(missing.statusCode, 401);
      assert.equal(missing.json().status, false);
      for (const bad of ['garbage', 'Bearer ', `${jwt}x`, foreign, hmac, none, elevated, `abc${none}defgh`]) {
        const response = await profile(bad);
        assert.equal(response.statusCode, 401, bad.slice(0, 20));
        assert.equal(response.json().code, 401);
      }
    });

    test('logout ends the session: its tokens are refused at once', async () => {
      const token = await gw.login();
      const refreshed = (await gw.request({ method: 'POST', url: '/api/v1/auth/refresh', headers: { authorization: token } })).json().data
        .token;
      const other = await gw.login();
      const response = await gw.request({ method: 'POST', url: '/api/v1/auth/logout', headers: { authorization: token } });
      assert.equal(response.statusCode, 200);
      assert.deepEqual(Object.keys(response.json()).sort(), ['code', 'message', 'status']);
      assert.equal((await profile(token)).statusCode, 401);
      assert.equal((await profile(refreshed)).statusCode, 401, 'a refreshed token of the same session');
      assert.equal((await profile(other)).statusCode, 200, 'other sessions live on');
      assert.equal((await gw.request({ method: 'POST', url: '/api/v1/auth/logout', headers: { authorization: token } })).statusCode, 401);
    });

    test('refresh returns a new working token; an expired token is refused', async () => {
      const token = await gw.login();
      gw.clock.advance(23 * 3600 * 1000);
      const response = await gw.request({ method: 'POST', url: '/api/v1/auth/refresh', headers: { authorization: token } });
      assert.equal(response.statusCode, 200);
      const fresh = response.json().data.token as string;
      assert.notEqual(fresh, token);
      assert.deepEqual(Object.keys(response.json().data), ['token']);
      gw.clock.advance(2 * 3600 * 1000);
      assert.equal((await profile(token)).statusCode, 401, 'the old token expired after 24 h');
      assert.equal((await gw.request({ method: 'POST', url: '/api/v1/auth/refresh', headers: { authorization: token } })).statusCode, 401);
      assert.equal((await profile(fresh)).statusCode, 200, 'the refreshed token lives 24 h from refresh');
      gw.clock.advance(23 * 3600 * 1000);
      assert.equal((await profile(fresh)).statusCode, 401);
    });

    test('responses carry a request id, security headers, and English on request', async () => {
      const response = await gw.request({
        method: 'POST',
        url: LOGIN,
        payload: { no_pegawai: 'x', kata_sandi: 'y' },
        headers: { 'x-request-id': 'abc-123', 'accept-language': 'en-US,en;q=0.9,id;q=0.5' },
      });
      assert.equal(response.headers['x-request-id'], 'abc-123');
      assert.equal(response.headers['x-content-type-options'], 'nosniff');
      assert.equal(response.json().message, 'Wrong employee number or password');
      const generated = await gw.request({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'bad id with spaces' } });
      assert.match(String(generated.headers['x-request-id']), /^[0-9a-f-]{36}$/);
      const unknown = await gw.request({ method: 'GET', url: '/api/v1/nothing-here' });
      assert.equal(unknown.statusCode, 404);
      assert.deepEqual(unknown.json(), { code: 404, status: false, message: 'Sumber daya tidak ditemukan' });
    });

    test('health, readiness and the JWKS', async () => {
      assert.equal((await gw.request({ method: 'GET', url: '/healthz' })).statusCode, 200);
      assert.equal((await gw.request({ method: 'GET', url: '/readyz' })).json().data.status, 'ok');
      const jwks = (await gw.request({ method: 'GET', url: '/.well-known/jwks.json' })).json();
      assert.equal(jwks.keys.length, 1);
      assert.equal(jwks.keys[0].alg, 'ES256');
      assert.equal(jwks.keys[0].d, undefined, 'no private part');
    });
  });

  describe(`gateway passwords [${dialect}]`, () => {
    let gw: TestGateway;
    beforeEach(async () => {
      gw = await startTestGateway(dialect, { PASSWORD_MAX_AGE: '30d', LOGIN_MAX_FAILURES_PER_ACCOUNT: '3', LOGIN_LOCKOUT_WINDOW: '10m' });
    });
    const changePassword = (authorization: string, kata_sandi_lama: string, kata_sandi: string, konfirmasi_kata_sandi = kata_sandi) =>
      gw.request({
        method: 'PUT',
        url: '/api/v1/auth/change-password',
        headers: { authorization },
        payload: { kata_sandi_lama, kata_sandi, konfirmasi_kata_sandi },
      });

    test('change-password enforces each rule with a message naming it (spec 2.2)', async () => {
      const { fields } = await gw.createUser();
      const token = await gw.login(fields.no_pegawai, fields.kata_sandi);
      const rules: [string, RegExp][] = [
        ['Ab1!', /minimal 8 karakter/],
        ['ABCDEFG1!', /huruf kecil/],
        ['abcdefg1!', /huruf besar/],
        ['Abcdefgh!', /angka/],
        ['Abcdefgh1', /karakter khusus/],
        [`Aa1!${'x'.repeat(130)}`, /maksimal 128/],
        [fields.kata_sandi, /tidak boleh sama/],
      ];
      for (const [password, message] of rules) {
        const response = await changePassword(token, fields.kata_sandi, password);
        assert.equal(response.statusCode, 400, password);
        assert.match(response.json().message, message);
      }
      assert.equal((await changePassword(token, fields.kata_sandi, 'Baru#Sandi9', 'Lain#Sandi9')).statusCode, 400);
      const wrongOld = await changePassword(token, 'Salah#Sandi9', 'Baru#Sandi9');
      assert.equal(wrongOld.statusCode, 400);
      assert.match(wrongOld.json().message, /lama salah/);
      assert.equal(
        (await gw.request({ method: 'GET', url: PROFILE, headers: { authorization: token } })).statusCode,
        200,
        'refusals change nothing',
      );
      await gw.close();
    });

    test('change-password ends every session and the new password works', async () => {
      const { fields } = await gw.createUser();
      const token = await gw.login(fields.no_pegawai, fields.kata_sandi);
      const other = await gw.login(fields.no_pegawai, fields.kata_sandi);
      const response = await changePassword(token, fields.kata_sandi, 'Baru#Sandi9');
      assert.equal(response.statusCode, 200);
      assert.deepEqual(Object.keys(response.json()).sort(), ['code', 'message', 'status']);
      for (const old of [token, other])
        assert.equal((await gw.request({ method: 'GET', url: PROFILE, headers: { authorization: old } })).statusCode, 401);
      await assert.rejects(gw.login(fields.no_pegawai, fields.kata_sandi));
      await gw.login(fields.no_pegawai, 'Baru#Sandi9');
      await gw.close();
    });

    test('an expired password refuses login with requirePasswordReset, and change-expired-password is the way out', async () => {
      const { fields } = await gw.createUser();
      gw.clock.advance(31 * 24 * 3600 * 1000);
      const response = await gw.request({
        method: 'POST',
        url: LOGIN,
        payload: { no_pegawai: fields.no_pegawai, kata_sandi: fields.kata_sandi },
      });
      assert.equal(response.statusCode, 401);
      assert.equal(response.json().status, false);
      assert.equal(response.json().data.requirePasswordReset, true);
      assert.match(response.json().message, /kedaluwarsa/);
      const wrongPassword = await gw.request({
        method: 'POST',
        url: LOGIN,
        payload: { no_pegawai: fields.no_pegawai, kata_sandi: 'Wrong#Pass1' },
      });
      assert.equal(wrongPassword.json().data, undefined, 'expiry is only told to someone who knows the password');
      const change = (kata_sandi_lama: string, kata_sandi: string) =>
        gw.request({
          method: 'POST',
          url: '/api/v1/auth/change-expired-password',
          payload: { no_pegawai: fields.no_pegawai, kata_sandi_lama, kata_sandi, konfirmasi_kata_sandi: kata_sandi },
        });
      assert.equal((await change('Wrong#Pass1', 'Baru#Sandi9')).statusCode, 401);
      assert.equal((await change(fields.kata_sandi, 'weak')).statusCode, 400);
      assert.equal((await change(fields.kata_sandi, 'Baru#Sandi9')).statusCode, 200);
      await gw.login(fields.no_pegawai, 'Baru#Sandi9');
      await gw.close();
    });

    test('repeated failures lock the account out with 429 and Retry-After, then it opens again', async () => {
      const { fields } = await gw.createUser();
      for (let i = 0; i < 3; i++) {
        assert.equal(
          (await gw.request({ method: 'POST', url: LOGIN, payload: { no_pegawai: fields.no_pegawai, kata_sandi: 'Wrong#Pass1' } }))
            .statusCode,
          401,
        );
      }
      const locked = await gw.request({
        method: 'POST',
        url: LOGIN,
        payload: { no_pegawai: fields.no_pegawai, kata_sandi: fields.kata_sandi },
      });
      assert.equal(locked.statusCode, 429);
      assert.equal(locked.json().code, 429);
      assert.ok(Number(locked.headers['retry-after']) > 0);
      const unknownLocked = [];
      for (let i = 0; i < 4; i++)
        unknownLocked.push(
          (await gw.request({ method: 'POST', url: LOGIN, payload: { no_pegawai: 'ghost', kata_sandi: 'Wrong#Pass1' } })).statusCode,
        );
      assert.deepEqual(unknownLocked, [401, 401, 401, 429], 'unknown accounts lock the same way (no enumeration)');
      gw.clock.advance(10 * 60 * 1000 + 1000);
      await gw.login(fields.no_pegawai, fields.kata_sandi);
      await gw.close();
    });
  });
}
