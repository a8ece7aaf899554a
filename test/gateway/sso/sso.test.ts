import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { after, before, beforeEach, describe, test } from 'node:test';
import { decodeJwt, exportSPKI, generateKeyPair, importJWK, SignJWT, type CryptoKey, type JWTPayload } from 'jose';
import { buildGateway } from '../../../src/gateway/app.js';
import { loadGatewayConfig } from '../../../src/gateway/config.js';
import { generatedNoPegawai, identityFromClaims } from '../../../src/gateway/modules/sso/claims-mapping.js';
import { tokenHash } from '../../../src/gateway/modules/sso/id-token.js';
import { ConfigError } from '../../../src/shared/config/env.js';
import { unwrapToken } from '../../../src/gateway/modules/auth/token-wrapping.js';
import { createTestDatabase, DIALECTS } from '../../helpers/databases.js';
import { ADMIN_PASSWORD, newUser, startTestGateway, type TestGateway } from '../../helpers/gateway.js';
import {
  CLIENT_ID,
  OTHER_CLIENT_ID,
  PROVIDER_KID,
  startTestProvider,
  type TestAccount,
  type TestProvider,
} from '../../helpers/oidc-provider.js';

// The identity provider is a real oidc-provider on 127.0.0.1; tokens come from its authorization
// code flow. Forged tokens (negative cases) are checked against its real discovery document and JWKS.

let provider: TestProvider;
before(async () => {
  provider = await startTestProvider();
});
after(async () => provider.close());

let sequence = 0;
/** A new account at the provider; its sub is unique across the run. */
function providerAccount(overrides: Partial<TestAccount> = {}): { sub: string; account: TestAccount } {
  sequence += 1;
  const sub = `sub-${process.pid}-${sequence}`;
  const account: TestAccount = {
    email: `sso${process.pid}x${sequence}@example.go.id`,
    email_verified: true,
    name: `Pegawai SSO ${sequence}`,
    ...overrides,
  };
  provider.accounts.set(sub, account);
  return { sub, account };
}

function base64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

for (const dialect of DIALECTS) {
  describe(`sso login [${dialect}]`, () => {
    let gw: TestGateway;
    before(async () => {
      gw = await startTestGateway(dialect, {
        OIDC_ISSUER: provider.issuer,
        OIDC_CLIENT_ID: `${CLIENT_ID},mobile-app`,
        OIDC_CLAIM_ATTRIBUTES: 'department,position',
        GATEWAY_TRUST_PROXY: 'true',
      });
    });
    // The provider signs with the real clock: a suite slower than the gateway's 30 s tolerance (a
    // loaded machine) would otherwise see its tokens as issued in the future.
    beforeEach(() => {
      gw.clock.ms = Date.now();
    });
    after(async () => gw.close());

    const userCount = async () =>
      Number(
        (
          await gw.database.db
            .selectFrom('users')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );

    /** GET /auth/sso-nonce as a browser would: the nonce for the provider and the cookie for the gateway. */
    async function freshNonce(): Promise<string> {
      const response = await gw.request({ method: 'GET', url: '/auth/sso-nonce' });
      assert.equal(response.statusCode, 200);
      const cookie = response.cookies.find((c: { name: string }) => c.name === 'sso_nonce');
      assert.ok(cookie);
      assert.equal(cookie.value, response.json().data.nonce);
      return cookie.value;
    }

    /** The browser flow: nonce from the gateway, authorization at the provider, exchange at the gateway. */
    async function browserLogin(sub: string, extra: { profile?: Record<string, string>; headers?: Record<string, string> } = {}) {
      const nonce = await freshNonce();
      const tokens = await provider.login(sub, { nonce });
      const response = await gw.request({
        method: 'POST',
        url: '/auth/login-sso',
        cookies: { sso_nonce: nonce },
        headers: extra.headers ?? {},
        payload: {
          ...tokens,
          profile: extra.profile ?? { email: provider.accounts.get(sub)!.email, name: provider.accounts.get(sub)!.name, sub },
        },
      });
      return { response, tokens, nonce };
    }

    /** Posts a token and expects a 401 refusal with the reason, nothing created, and an audit row. */
    async function assertRefused(body: object, reason: string, cookies: Record<string, string> = {}) {
      const before = await userCount();
      const identitiesBefore = (await gw.database.db.selectFrom('sso_identities').selectAll().execute()).length;
      const response = await gw.request({ method: 'POST', url: '/auth/login-sso', payload: body, cookies });
      assert.equal(response.statusCode, 401, response.body);
      const envelope = response.json();
      assert.equal(envelope.code, 401);
      assert.equal(envelope.status, false);
      assert.equal(envelope.data.reason, reason);
      assert.ok(envelope.message.length > 0);
      assert.equal(
        response.cookies.find((c: { name: string }) => c.name === 'access_token'),
        undefined,
      );
      assert.equal(await userCount(), before, 'no user created');
      assert.equal(
        (await gw.database.db.selectFrom('sso_identities').selectAll().execute()).length,
        identitiesBefore,
        'no identity linked',
      );
      const audit = await gw.audit.list(5);
      const row = audit.find(
        (entry) => entry.action === 'sso.login' && entry.outcome === 'failure' && entry.request_id === response.headers['x-request-id'],
      );
      assert.ok(row, 'refusal audited');
      assert.equal(JSON.parse(row.details ?? '{}').reason, reason);
    }

    /** Valid claims for a forged token: only the signature or one named claim is wrong. */
    function claimsFor(sub: string, overrides: JWTPayload = {}): JWTPayload {
      const now = Math.floor(gw.clock.now() / 1000);
      const account = provider.accounts.get(sub)!;
      return {
        iss: provider.issuer,
        aud: CLIENT_ID,
        sub,
        iat: now,
        exp: now + 600,
        email: account.email,
        email_verified: account.email_verified,
        name: account.name,
        ...overrides,
      };
    }

    test('a first SSO login creates the user from the token claims and answers exactly spec 2.4', async () => {
      const { sub, account } = providerAccount({
        employee_number: `EMP${process.pid}${dialect}`,
        employee_type: 'PJLP',
        groups: ['staff', 'finance'],
        department: 'Keuangan',
        position: 'Analis',
      });
      const before = await userCount();
      const { response, tokens } = await browserLogin(sub);
      assert.equal(response.statusCode, 200, response.body);
      const body = response.json();
      assert.deepEqual(Object.keys(body).sort(), ['attributes', 'email', 'name', 'token', 'user_groups', 'user_id']);
      assert.equal(body.email, account.email);
      assert.equal(body.name, account.name);
      assert.deepEqual(body.user_groups, ['staff', 'finance']);
      assert.deepEqual(body.attributes, { department: 'Keuangan', position: 'Analis' });
      assert.equal(await userCount(), before + 1);

      const user = await gw.database.db.selectFrom('users').selectAll().where('id', '=', body.user_id).executeTakeFirstOrThrow();
      assert.equal(user.no_pegawai, account.employee_number);
      assert.equal(user.tipe_pegawai, 'pjlp');
      assert.equal(user.hak_akses_id, 'pegawai');
      assert.equal(user.password_hash, null);
      const identity = await gw.database.db.selectFrom('sso_identities').selectAll().where('subject', '=', sub).executeTakeFirstOrThrow();
      assert.equal(identity.issuer, provider.issuer);
      assert.equal(identity.user_id, body.user_id);

      // The application token: a gateway token carrying the spec 2.4 claims, not the provider's.
      const jwt = unwrapToken(body.token)!;
      assert.notEqual(jwt, body.token, 'returned in the wrapped form of spec 2.3');
      const claims = decodeJwt(jwt);
      assert.equal(claims.user_id, body.user_id);
      assert.equal(claims.email, account.email);
      assert.deepEqual(claims.user_groups, ['staff', 'finance']);
      assert.deepEqual(claims.attributes, { department: 'Keuangan', position: 'Analis' });
      assert.equal(claims.iss, 'gerbang');

      const actions = (await gw.audit.list(10))
        .filter((row) => row.target_id === body.user_id)
        .map((row) => `${row.action}:${row.outcome}`);
      assert.ok(actions.includes('sso.create_user:success'));
      assert.ok(actions.includes('sso.login:success'));
      // The provider's tokens are used for the exchange only: nothing in the database holds them.
      const audit = JSON.stringify(await gw.audit.list(1000));
      assert.ok(!audit.includes(tokens.id_token) && !audit.includes(tokens.access_token));
      const used = JSON.stringify(await gw.database.db.selectFrom('sso_used_tokens').selectAll().execute());
      assert.ok(!used.includes(tokens.id_token));
    });

    test('the access_token cookie is HttpOnly, 30 days, Path=/, SameSite=Lax, Secure only over HTTPS', async () => {
      const plain = await browserLogin(providerAccount().sub);
      assert.equal(plain.response.statusCode, 200);
      const cookie = plain.response.cookies.find((c: { name: string }) => c.name === 'access_token');
      assert.ok(cookie);
      assert.equal(cookie.value, plain.response.json().token);
      assert.equal(cookie.httpOnly, true);
      assert.equal(cookie.maxAge, 30 * 24 * 60 * 60);
      assert.equal(cookie.path, '/');
      assert.equal(cookie.sameSite, 'Lax');
      assert.notEqual(cookie.secure, true);
      // The nonce is single-use: the login clears its cookie.
      const nonceCookie = plain.response.cookies.find((c: { name: string }) => c.name === 'sso_nonce');
      assert.ok(nonceCookie && (nonceCookie.value === '' || nonceCookie.maxAge === 0 || nonceCookie.expires! <= new Date()));

      const overHttps = await browserLogin(providerAccount().sub, { headers: { 'x-forwarded-proto': 'https' } });
      assert.equal(overHttps.response.statusCode, 200);
      assert.equal(overHttps.response.cookies.find((c: { name: string }) => c.name === 'access_token')?.secure, true);
    });

    test('claims that break the user-creation rules (NUL, quotes, over-long) are refused with SSO_CLAIMS_INVALID; nothing is created', async () => {
      for (const overrides of [
        { employee_number: 'a\u0000b' },
        { email: 'a"b@ex.com\u0000' },
        { email: 'a"b@example.go.id' },
        { name: 'Ani\u0000' },
        { employee_number: 'x'.repeat(65) },
        { groups: ['staff\u0000'] },
      ] as Partial<TestAccount>[]) {
        const { sub } = providerAccount(overrides);
        const nonce = await freshNonce();
        const tokens = await provider.login(sub, { nonce });
        // assertRefused: 401 with the reason, no user, no linked identity, the refusal audited.
        await assertRefused({ ...tokens, profile: { sub } }, 'SSO_CLAIMS_INVALID', { sso_nonce: nonce });
      }
      // The same values through the REST API are refused too: one rule for both ways in.
      const admin = await gw.login();
      for (const field of [{ no_pegawai: 'a\u0000b' }, { email: 'a"b@example.go.id' }]) {
        const response = await gw.request({
          method: 'POST',
          url: '/api/v1/pengguna',
          headers: { authorization: admin },
          payload: { ...newUser(), ...field },
        });
        assert.equal(response.statusCode, 400, JSON.stringify(field));
      }
    });

    test('an existing user is found by verified e-mail and linked to the identity', async () => {
      const existing = await gw.createUser();
      const { sub } = providerAccount({ email: existing.fields.email.toUpperCase(), name: 'Nama Lain' });
      const before = await userCount();
      const { response } = await browserLogin(sub, { profile: { sub } });
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.json().user_id, existing.id);
      assert.equal(response.json().name, existing.fields.nama, 'the account keeps its own name');
      assert.equal(await userCount(), before);
      const identity = await gw.database.db.selectFrom('sso_identities').selectAll().where('subject', '=', sub).executeTakeFirstOrThrow();
      assert.equal(identity.user_id, existing.id);
    });

    test('an administrator unlinks the identities of an account whose address passed to someone else; the new holder then logs in to it', async () => {
      const existing = await gw.createUser();
      const earlier = providerAccount({ email: existing.fields.email });
      assert.equal((await browserLogin(earlier.sub, { profile: { sub: earlier.sub } })).response.statusCode, 200);
      const holder = providerAccount({ email: existing.fields.email });
      const refused = await browserLogin(holder.sub, { profile: { sub: holder.sub } });
      assert.equal(refused.response.statusCode, 401);
      assert.equal(refused.response.json().data.reason, 'SSO_ACCOUNT_CONFLICT');

      const url = `/api/v1/pengguna/${existing.id}/sso`;
      const other = await gw.createUser();
      const notAdmin = await gw.request({
        method: 'DELETE',
        url,
        headers: { authorization: await gw.login(other.fields.no_pegawai, other.fields.kata_sandi) },
      });
      assert.equal(notAdmin.statusCode, 403);
      const admin = await gw.login();
      const unlinked = await gw.request({ method: 'DELETE', url, headers: { authorization: admin } });
      assert.equal(unlinked.statusCode, 200, unlinked.body);
      assert.deepEqual(unlinked.json().data, { unlinked: 1 });
      const row = (await gw.audit.list(5)).find((entry) => entry.action === 'sso.unlink_identity' && entry.target_id === existing.id);
      assert.ok(row, 'unlink audited');
      assert.deepEqual(JSON.parse(row.details ?? '{}').identities, [{ issuer: provider.issuer, subject: earlier.sub }]);

      const now = await browserLogin(holder.sub, { profile: { sub: holder.sub } });
      assert.equal(now.response.statusCode, 200, now.response.body);
      assert.equal(now.response.json().user_id, existing.id);
      assert.deepEqual(
        (await gw.request({ method: 'DELETE', url: `/api/v1/pengguna/${other.id}/sso`, headers: { authorization: admin } })).json().data,
        { unlinked: 0 },
      );
      assert.equal(
        (
          await gw.request({
            method: 'DELETE',
            url: '/api/v1/pengguna/00000000-0000-4000-8000-000000000000/sso',
            headers: { authorization: admin },
          })
        ).statusCode,
        404,
      );
    });

    test('the user is found again by (issuer, sub) after the provider changes the e-mail', async () => {
      const { sub, account } = providerAccount();
      const first = await browserLogin(sub);
      assert.equal(first.response.statusCode, 200);
      const before = await userCount();
      account.email = `renamed.${account.email}`;
      const second = await browserLogin(sub);
      assert.equal(second.response.statusCode, 200, second.response.body);
      assert.equal(second.response.json().user_id, first.response.json().user_id);
      assert.equal(second.response.json().email, account.email);
      assert.equal(await userCount(), before);
    });

    test('the SSO token works on the profile, in the header and the cookie, refreshes, and dies with logout', async () => {
      const { response } = await browserLogin(providerAccount().sub);
      const { token, user_id } = response.json();
      for (const headers of [{ authorization: token }, { authorization: `Bearer ${unwrapToken(token)}` }]) {
        const profile = await gw.request({ method: 'GET', url: '/api/v1/auth/profile', headers });
        assert.equal(profile.statusCode, 200);
        assert.equal(profile.json().data.id, user_id);
        assert.deepEqual(profile.json().data.hak_akses, { id: 'pegawai', nama: 'Pegawai' });
      }
      const byCookie = await gw.request({ method: 'GET', url: '/api/v1/auth/profile', cookies: { access_token: token } });
      assert.equal(byCookie.statusCode, 200);
      assert.equal(byCookie.json().data.id, user_id);

      const refreshed = await gw.request({ method: 'POST', url: '/api/v1/auth/refresh', headers: { authorization: token } });
      assert.equal(refreshed.statusCode, 200);
      assert.deepEqual(decodeJwt(unwrapToken(refreshed.json().data.token)!).user_groups, decodeJwt(unwrapToken(token)!).user_groups);

      const logout = await gw.request({
        method: 'POST',
        url: '/api/v1/auth/logout',
        headers: { authorization: token },
        cookies: { access_token: token },
      });
      assert.equal(logout.statusCode, 200);
      const cleared = logout.cookies.find((cookie) => cookie.name === 'access_token');
      assert.ok(cleared && cleared.value === '' && cleared.path === '/', 'logout clears the access_token cookie');
      for (const options of [{ headers: { authorization: token } }, { cookies: { access_token: token } }]) {
        const after = await gw.request({ method: 'GET', url: '/api/v1/auth/profile', ...options });
        assert.equal(after.statusCode, 401);
        assert.equal(after.json().status, false);
      }
    });

    test('a state-changing request authenticated only by the cookie must come from the same origin', async () => {
      const { response } = await browserLogin(providerAccount().sub);
      const token = response.json().token as string;
      const cookies = { access_token: token };
      const host = 'gateway.example.go.id';

      for (const headers of [
        { origin: 'https://evil.example' },
        { origin: 'null' },
        { 'sec-fetch-site': 'cross-site' },
        { 'sec-fetch-site': 'same-site' },
      ]) {
        const refused = await gw.request({ method: 'POST', url: '/api/v1/auth/refresh', cookies, headers: { host, ...headers } });
        assert.equal(refused.statusCode, 403, JSON.stringify(headers));
        assert.equal(refused.json().status, false);
      }
      // Reads are not state-changing: a cross-site GET with the cookie is answered.
      const read = await gw.request({
        method: 'GET',
        url: '/api/v1/auth/profile',
        cookies,
        headers: { host, origin: 'https://evil.example' },
      });
      assert.equal(read.statusCode, 200);
      // The header is not a browser's ambient credential: no origin check.
      const withHeader = await gw.request({
        method: 'POST',
        url: '/api/v1/auth/refresh',
        headers: { host, authorization: token, origin: 'https://evil.example' },
      });
      assert.equal(withHeader.statusCode, 200);
      for (const headers of [{ origin: `http://${host}` }, { 'sec-fetch-site': 'same-origin' }, {}]) {
        const allowed = await gw.request({ method: 'POST', url: '/api/v1/auth/refresh', cookies, headers: { host, ...headers } });
        assert.equal(allowed.statusCode, 200, JSON.stringify(headers));
      }
    });

    test('an access token matching the at_hash is accepted', async () => {
      const { sub } = providerAccount();
      const accessToken = 'provider-access-token-abc123';
      const idToken = await provider.forge(claimsFor(sub, { at_hash: tokenHash(accessToken, 'RS256') }));
      const response = await gw.request({
        method: 'POST',
        url: '/auth/login-sso',
        payload: { id_token: idToken, access_token: accessToken },
      });
      assert.equal(response.statusCode, 200, response.body);
    });

    test('several audiences are accepted when azp names one of the configured clients', async () => {
      const { sub } = providerAccount();
      const idToken = await provider.forge(claimsFor(sub, { aud: ['mobile-app', 'https://api.example.go.id'], azp: 'mobile-app' }));
      const response = await gw.request({ method: 'POST', url: '/auth/login-sso', payload: { id_token: idToken } });
      assert.equal(response.statusCode, 200, response.body);
    });

    describe('refusals: 401 with the reason, audited, nothing created', () => {
      test('a token signed by a key outside the provider JWKS', async () => {
        const { sub } = providerAccount();
        const { privateKey } = await generateKeyPair('RS256');
        for (const kid of [PROVIDER_KID, 'attacker-key']) {
          const forged = await new SignJWT(claimsFor(sub)).setProtectedHeader({ alg: 'RS256', kid }).sign(privateKey);
          await assertRefused({ id_token: forged }, 'SSO_SIGNATURE_INVALID');
        }
      });

      test('a token of another issuer', async () => {
        const { sub } = providerAccount();
        await assertRefused({ id_token: await provider.forge(claimsFor(sub, { iss: 'https://idp.evil.example' })) }, 'SSO_ISSUER_MISMATCH');
      });

      test('a token issued to another client (real token from the provider)', async () => {
        const { sub } = providerAccount();
        const tokens = await provider.login(sub, { clientId: OTHER_CLIENT_ID });
        await assertRefused(tokens, 'SSO_AUDIENCE_MISMATCH');
        // Several audiences need an azp naming one of ours.
        await assertRefused(
          { id_token: await provider.forge(claimsFor(sub, { aud: [CLIENT_ID, 'someone-else'] })) },
          'SSO_AUDIENCE_MISMATCH',
        );
        await assertRefused(
          { id_token: await provider.forge(claimsFor(sub, { aud: [CLIENT_ID, 'someone-else'], azp: 'someone-else' })) },
          'SSO_AUDIENCE_MISMATCH',
        );
      });

      test('an expired token and a token older than the allowed age (real tokens, gateway clock moved)', async () => {
        const { sub } = providerAccount();
        const expired = await provider.login(sub, { nonce: 'n-expired' });
        const old = await provider.login(sub, { nonce: 'n-old' });
        const start = gw.clock.ms;
        try {
          gw.clock.advance(2 * 60 * 60_000);
          await assertRefused(expired, 'SSO_TOKEN_EXPIRED', { sso_nonce: 'n-expired' });
          gw.clock.ms = start + 20 * 60_000;
          await assertRefused(old, 'SSO_TOKEN_TOO_OLD', { sso_nonce: 'n-old' });
        } finally {
          gw.clock.ms = start;
        }
      });

      test('alg none', async () => {
        const { sub } = providerAccount();
        const unsigned = `${base64url({ alg: 'none', typ: 'JWT' })}.${base64url(claimsFor(sub))}.`;
        await assertRefused({ id_token: unsigned }, 'SSO_ALGORITHM_REFUSED');
      });

      test('HS256 signed with the provider public key as the secret', async () => {
        const { sub } = providerAccount();
        const pem = await exportSPKI((await importJWK(provider.publicJwk, 'RS256')) as CryptoKey);
        for (const secret of [pem, JSON.stringify(provider.publicJwk)]) {
          const forged = await new SignJWT(claimsFor(sub))
            .setProtectedHeader({ alg: 'HS256', kid: PROVIDER_KID })
            .sign(new TextEncoder().encode(secret));
          await assertRefused({ id_token: forged }, 'SSO_ALGORITHM_REFUSED');
        }
      });

      test('a profile that disagrees with the token', async () => {
        const { sub, account } = providerAccount();
        const nonce = await freshNonce();
        const tokens = await provider.login(sub, { nonce });
        await assertRefused({ ...tokens, profile: { email: `victim.${account.email}`, sub } }, 'SSO_PROFILE_MISMATCH', {
          sso_nonce: nonce,
        });
        const second = await provider.login(sub, { nonce });
        await assertRefused({ ...second, profile: { sub: 'someone-else' } }, 'SSO_PROFILE_MISMATCH', { sso_nonce: nonce });
      });

      test('an e-mail the provider has not verified never links to an existing account', async () => {
        const existing = await gw.createUser();
        const { sub } = providerAccount({ email: existing.fields.email, email_verified: false });
        const nonce = await freshNonce();
        await assertRefused(await provider.login(sub, { nonce }), 'SSO_EMAIL_UNVERIFIED', { sso_nonce: nonce });
        const linked = await gw.database.db.selectFrom('sso_identities').selectAll().where('user_id', '=', existing.id).execute();
        assert.equal(linked.length, 0);
      });

      test('an access token that does not match the at_hash', async () => {
        const { sub } = providerAccount();
        const idToken = await provider.forge(claimsFor(sub, { at_hash: tokenHash('the-real-access-token', 'RS256') }));
        await assertRefused({ id_token: idToken, access_token: 'another-access-token' }, 'SSO_AT_HASH_MISMATCH');
      });

      test('a nonce that does not match the cookie, or no cookie at all', async () => {
        const { sub } = providerAccount();
        const issued = await freshNonce();
        const other = await freshNonce();
        await assertRefused(await provider.login(sub, { nonce: issued }), 'SSO_NONCE_MISMATCH', { sso_nonce: other });
        await assertRefused(await provider.login(sub, { nonce: issued }), 'SSO_NONCE_MISMATCH');
      });

      test('a replayed token', async () => {
        const { sub } = providerAccount();
        const nonce = await freshNonce();
        const tokens = await provider.login(sub, { nonce });
        const first = await gw.request({ method: 'POST', url: '/auth/login-sso', payload: tokens, cookies: { sso_nonce: nonce } });
        assert.equal(first.statusCode, 200);
        await assertRefused(tokens, 'SSO_TOKEN_REPLAYED', { sso_nonce: nonce });
      });

      test('garbage is a clear 4xx, never a 500', async () => {
        await assertRefused({ id_token: 'not-a-jwt' }, 'SSO_TOKEN_MALFORMED');
        const missing = await gw.request({ method: 'POST', url: '/auth/login-sso', payload: { access_token: 'x' } });
        assert.equal(missing.statusCode, 400);
        assert.equal(missing.json().status, false);
      });
    });
  });
}

for (const dialect of DIALECTS)
  describe(`sso login with the provider down [${dialect}]`, () => {
    test('answers 503 in the envelope', async () => {
      // A port that was free a moment ago: nothing answers there.
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const port = (closed.address() as AddressInfo).port;
      await new Promise<void>((resolve) => closed.close(() => resolve()));
      const gw = await startTestGateway(dialect, { OIDC_ISSUER: `http://127.0.0.1:${port}`, OIDC_CLIENT_ID: CLIENT_ID });
      try {
        const response = await gw.request({
          method: 'POST',
          url: '/auth/login-sso',
          payload: { id_token: await provider.forge({ sub: 'x' }) },
        });
        assert.equal(response.statusCode, 503);
        assert.equal(response.json().status, false);
        assert.equal(response.json().code, 503);
      } finally {
        await gw.close();
      }
    });
  });

for (const dialect of DIALECTS)
  describe(`sso login without configuration [${dialect}]`, () => {
    test('answers 503 in the envelope', async () => {
      const gw = await startTestGateway(dialect);
      try {
        for (const [method, url] of [
          ['POST', '/auth/login-sso'],
          ['GET', '/auth/sso-nonce'],
        ] as const) {
          const response = await gw.request({ method, url, ...(method === 'POST' ? { payload: { id_token: 'a.b.c' } } : {}) });
          assert.equal(response.statusCode, 503);
          assert.equal(response.json().code, 503);
          assert.equal(response.json().status, false);
        }
      } finally {
        await gw.close();
      }
    });
  });

for (const dialect of DIALECTS) {
  describe(`sso login rate limit [${dialect}]`, () => {
    test('an address that keeps sending refused tokens gets 429 with Retry-After', async () => {
      const gw = await startTestGateway(dialect, {
        OIDC_ISSUER: provider.issuer,
        OIDC_CLIENT_ID: CLIENT_ID,
        LOGIN_MAX_FAILURES_PER_ADDRESS: '3',
      });
      try {
        for (let i = 0; i < 3; i++) {
          const refused = await gw.request({ method: 'POST', url: '/auth/login-sso', payload: { id_token: 'x.y.z' } });
          assert.equal(refused.statusCode, 401);
        }
        const { sub } = providerAccount();
        const limited = await gw.request({ method: 'POST', url: '/auth/login-sso', payload: await provider.login(sub) });
        assert.equal(limited.statusCode, 429);
        assert.ok(Number(limited.headers['retry-after']) > 0);
        gw.clock.advance(16 * 60_000);
        const later = await gw.request({
          method: 'POST',
          url: '/auth/login-sso',
          payload: {
            id_token: await provider.forge({
              iss: provider.issuer,
              aud: CLIENT_ID,
              sub,
              iat: Math.floor(gw.clock.now() / 1000),
              exp: Math.floor(gw.clock.now() / 1000) + 60,
              email: provider.accounts.get(sub)!.email,
              email_verified: true,
            }),
          },
        });
        assert.equal(later.statusCode, 200, later.body);
      } finally {
        await gw.close();
      }
    });
  });
}

for (const dialect of DIALECTS) {
  describe(`sso login with OIDC_REQUIRED_ACR and OIDC_REQUIRED_AMR [${dialect}]`, () => {
    test('an ID token whose acr is not configured (or that has none, as the provider issues it) is refused; a listed acr signs in', async () => {
      const gw = await startTestGateway(dialect, {
        OIDC_ISSUER: provider.issuer,
        OIDC_CLIENT_ID: CLIENT_ID,
        OIDC_REQUIRED_ACR: 'urn:gerbang:mfa, phr',
      });
      try {
        const { sub } = providerAccount();
        const claims = (acr?: string) => ({
          iss: provider.issuer,
          aud: CLIENT_ID,
          sub,
          iat: Math.floor(gw.clock.now() / 1000),
          exp: Math.floor(gw.clock.now() / 1000) + 60,
          email: provider.accounts.get(sub)!.email,
          email_verified: true,
          ...(acr === undefined ? {} : { acr }),
        });
        const refusals = [
          await provider.login(sub), // the provider's own token: a password login carries no acr
          { id_token: await provider.forge(claims('pwd')) },
          { id_token: await provider.forge(claims()) },
        ];
        for (const body of refusals) {
          const response = await gw.request({ method: 'POST', url: '/auth/login-sso', payload: body });
          assert.equal(response.statusCode, 401, response.body);
          assert.equal(response.json().data.reason, 'SSO_AUTH_CONTEXT_REFUSED');
        }
        assert.equal((await gw.database.db.selectFrom('sessions').selectAll().execute()).length, 0, 'no session');
        const audit = await gw.audit.list(20);
        assert.ok(
          audit.some((row) => row.action === 'sso.login' && row.outcome === 'failure' && row.details?.includes('SSO_AUTH_CONTEXT_REFUSED')),
        );

        const accepted = await gw.request({
          method: 'POST',
          url: '/auth/login-sso',
          payload: { id_token: await provider.forge(claims('phr')) },
        });
        assert.equal(accepted.statusCode, 200, accepted.body);
        const sessions = await gw.request({
          method: 'GET',
          url: '/api/v1/auth/sessions',
          headers: { authorization: accepted.json().token },
        });
        assert.equal(sessions.json().data[0].auth_method, 'sso');
      } finally {
        await gw.close();
      }
    });

    test('OIDC_REQUIRED_AMR: the amr must contain one of the configured methods', async () => {
      const gw = await startTestGateway(dialect, { OIDC_ISSUER: provider.issuer, OIDC_CLIENT_ID: CLIENT_ID, OIDC_REQUIRED_AMR: 'otp,hwk' });
      try {
        const { sub } = providerAccount();
        const token = (amr: unknown) =>
          provider.forge({
            iss: provider.issuer,
            aud: CLIENT_ID,
            sub,
            iat: Math.floor(gw.clock.now() / 1000),
            exp: Math.floor(gw.clock.now() / 1000) + 60,
            email: provider.accounts.get(sub)!.email,
            email_verified: true,
            amr,
          });
        for (const amr of [['pwd'], 'otp', [], null]) {
          const response = await gw.request({ method: 'POST', url: '/auth/login-sso', payload: { id_token: await token(amr) } });
          assert.equal(response.statusCode, 401, JSON.stringify(amr));
          assert.equal(response.json().data.reason, 'SSO_AUTH_CONTEXT_REFUSED');
        }
        const accepted = await gw.request({ method: 'POST', url: '/auth/login-sso', payload: { id_token: await token(['pwd', 'otp']) } });
        assert.equal(accepted.statusCode, 200, accepted.body);
      } finally {
        await gw.close();
      }
    });
  });
}

describe('sso configuration and claim mapping', () => {
  const base = { GATEWAY_DATABASE_URL: 'sqlite::memory:' };

  test('refuses symmetric or unknown algorithms, half a configuration and a plain-http remote issuer', () => {
    const bad: Record<string, string>[] = [
      { OIDC_ISSUER: 'https://idp.example.go.id', OIDC_CLIENT_ID: 'a', OIDC_ALLOWED_ALGORITHMS: 'RS256,HS256' },
      { OIDC_ISSUER: 'https://idp.example.go.id', OIDC_CLIENT_ID: 'a', OIDC_ALLOWED_ALGORITHMS: 'none' },
      { OIDC_ISSUER: 'https://idp.example.go.id' },
      { OIDC_CLIENT_ID: 'a' },
      { OIDC_ISSUER: 'http://idp.example.go.id', OIDC_CLIENT_ID: 'a' },
      { OIDC_ISSUER: 'https://idp.example.go.id', OIDC_CLIENT_ID: 'a', SSO_COOKIE_SECURE: 'sometimes' },
    ];
    for (const env of bad) assert.throws(() => loadGatewayConfig({ ...base, ...env }), ConfigError, JSON.stringify(env));
    assert.equal(loadGatewayConfig(base).sso, undefined);
    const config = loadGatewayConfig({
      ...base,
      OIDC_ISSUER: 'https://idp.example.go.id/realms/pemda',
      OIDC_CLIENT_ID: 'web, mobile',
    }).sso!;
    assert.deepEqual(config.clientIds, ['web', 'mobile']);
    assert.ok(!config.algorithms.some((alg) => alg.startsWith('HS')));
  });

  test('maps nested groups, attribute paths, employee fields and only a boolean email_verified', () => {
    const config = loadGatewayConfig({
      ...base,
      OIDC_ISSUER: 'https://idp.example.go.id',
      OIDC_CLIENT_ID: 'web',
      OIDC_CLAIM_GROUPS: 'realm_access.roles',
      OIDC_CLAIM_ATTRIBUTES: 'department=org.unit,position',
      OIDC_CLAIM_EMPLOYEE_NUMBER: 'nip',
    }).sso!;
    const identity = identityFromClaims(
      {
        iss: 'https://idp.example.go.id',
        sub: 's1',
        email: 'A@Example.go.id',
        email_verified: 'true',
        name: 'Ani',
        nip: 198001012,
        employee_type: 'other',
        realm_access: { roles: ['pegawai', 'admin-keuangan', { bad: 1 }] },
        org: { unit: 'Dinas A' },
        position: ['not', 'text'],
      },
      config,
    );
    assert.equal(identity.email, 'a@example.go.id');
    assert.equal(identity.emailVerified, false);
    assert.equal(identity.noPegawai, '198001012');
    assert.equal(identity.tipePegawai, 'pns');
    assert.deepEqual(identity.groups, ['pegawai', 'admin-keuangan']);
    assert.deepEqual({ ...identity.attributes }, { department: 'Dinas A' });
    assert.match(generatedNoPegawai(), /^sso-[a-z2-7]{12}$/);
  });
});

for (const dialect of DIALECTS) {
  describe(`sso login logs [${dialect}]`, () => {
    test('each refusal is one log line with its reason; no provider or gateway token reaches the log', async () => {
      const database = await createTestDatabase(dialect);
      const stream = new PassThrough();
      const lines: string[] = [];
      stream.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));
      const config = loadGatewayConfig({
        GATEWAY_DATABASE_URL: database.url,
        GATEWAY_ADMIN_PASSWORD: ADMIN_PASSWORD,
        LOG_LEVEL: 'trace',
        OIDC_ISSUER: provider.issuer,
        OIDC_CLIENT_ID: CLIENT_ID,
      });
      const { app } = await buildGateway({ config, logStream: stream });
      try {
        const { sub } = providerAccount();
        const nonce = 'log-test-nonce';
        const tokens = await provider.login(sub, { nonce });
        const ok = await app.inject({ method: 'POST', url: '/auth/login-sso', payload: tokens, cookies: { sso_nonce: nonce } });
        assert.equal(ok.statusCode, 200);
        const replayed = await app.inject({ method: 'POST', url: '/auth/login-sso', payload: tokens, cookies: { sso_nonce: nonce } });
        assert.equal(replayed.statusCode, 401);
        const other = await provider.login(sub, { clientId: OTHER_CLIENT_ID });
        assert.equal((await app.inject({ method: 'POST', url: '/auth/login-sso', payload: other })).statusCode, 401);

        const refusals = lines.map((line) => JSON.parse(line)).filter((entry) => entry.msg === 'sso login refused');
        assert.deepEqual(
          refusals.map((entry) => entry.sso.reason),
          ['SSO_TOKEN_REPLAYED', 'SSO_AUDIENCE_MISMATCH'],
        );
        assert.equal(refusals[0].sso.subject, sub);
        const all = lines.join('\n');
        for (const secret of [tokens.id_token, tokens.access_token, other.id_token, unwrapToken(ok.json().token)!]) {
          assert.ok(!all.includes(secret), `log holds ${secret.slice(0, 12)}…`);
        }
      } finally {
        await app.close();
        await database.drop();
      }
    });
  });
}
