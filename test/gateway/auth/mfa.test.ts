import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, describe, test } from 'node:test';
import { inject } from 'light-my-request';
import { buildGateway } from '../../../src/gateway/app.js';
import { loadGatewayConfig } from '../../../src/gateway/config.js';
import { LAST_USED_RESOLUTION_MS } from '../../../src/gateway/modules/auth/tokens.js';
import { MfaRepository } from '../../../src/gateway/modules/mfa/mfa.repository.js';
import { passwordWork } from '../../../src/shared/auth/passwords.js';
import { recoveryCodeDigest } from '../../../src/shared/mfa/recovery-codes.js';
import { totpCode, TOTP_STEP_SECONDS } from '../../../src/shared/mfa/totp.js';
import { describeOnPostgres, DIALECTS } from '../../helpers/databases.js';
import { eventually } from '../../helpers/eventually.js';
import { ADMIN_NO_PEGAWAI, ADMIN_PASSWORD, newUser, startTestGateway, type TestGateway } from '../../helpers/gateway.js';

// The gateway's second factor (TOTP and recovery codes) and sessions, through the HTTP API with an
// injected clock: codes come from totpCode at the clock's time, as an authenticator app shows them.

const LOGIN = '/api/v1/auth/login';
const VERIFY = '/api/v1/auth/mfa/verify';
const MFA = '/api/v1/auth/mfa';
const SESSIONS = '/api/v1/auth/sessions';
const STEP_MS = TOTP_STEP_SECONDS * 1000;
const JWT_SHAPE = /eyJ[\w-]+\.[\w-]+\.[\w-]+/;

/** The gateway's calls a person makes, with the clock the codes are read at. */
function client(gw: TestGateway) {
  const login = (no_pegawai: string, kata_sandi: string, headers: Record<string, string> = {}) =>
    gw.request({ method: 'POST', url: LOGIN, payload: { no_pegawai, kata_sandi }, headers });
  const verify = (challenge: string, code: string, headers: Record<string, string> = {}) =>
    gw.request({ method: 'POST', url: VERIFY, payload: { challenge, code }, headers });
  const call = (method: 'GET' | 'POST' | 'DELETE', url: string, authorization: string, payload?: object) =>
    gw.request({ method, url, headers: { authorization }, ...(payload ? { payload } : {}) });
  /** The code the app shows now; the clock first moves to the next step, since each step signs in once. */
  const nextCode = (secret: string) => {
    gw.clock.advance(STEP_MS);
    return totpCode(secret, gw.clock.now());
  };
  /** Starts and confirms enrolment; the secret and the recovery codes. */
  const enrol = async (authorization: string) => {
    const started = await call('POST', `${MFA}/totp`, authorization);
    assert.equal(started.statusCode, 200, started.body);
    const { secret } = started.json().data;
    const confirmed = await call('POST', `${MFA}/totp/confirm`, authorization, { code: nextCode(secret) });
    assert.equal(confirmed.statusCode, 200, confirmed.body);
    return { secret: secret as string, recoveryCodes: confirmed.json().data.recovery_codes as string[] };
  };
  /** Password then code: the wrapped token. */
  const loginWithCode = async (noPegawai: string, password: string, secret: string, headers: Record<string, string> = {}) => {
    const first = await login(noPegawai, password, headers);
    assert.equal(first.statusCode, 401, first.body);
    const answer = await verify(first.json().data.challenge, nextCode(secret), headers);
    assert.equal(answer.statusCode, 200, answer.body);
    return answer.json().data.token as string;
  };
  return { login, verify, call, nextCode, enrol, loginWithCode };
}

async function auditActions(gw: TestGateway, limit = 50) {
  return (await gw.audit.list(limit)).map((row) => ({ ...row, details: JSON.parse(row.details ?? '{}') as Record<string, unknown> }));
}

for (const dialect of DIALECTS) {
  describe(`gateway second factor [${dialect}]`, () => {
    let gw: TestGateway;
    let api: ReturnType<typeof client>;
    before(async () => {
      gw = await startTestGateway(dialect);
      api = client(gw);
    });
    after(async () => gw.close());

    /** A new user, signed in with the password: fields and token. */
    async function signedInUser() {
      const { id, fields } = await gw.createUser();
      return { id, fields, token: await gw.login(fields.no_pegawai, fields.kata_sandi) };
    }

    test('enrolment: a secret and otpauth URI pending until a first code confirms it; ten recovery codes shown once, stored as digests', async () => {
      const { id, fields, token } = await signedInUser();
      assert.deepEqual((await api.call('GET', MFA, token)).json().data, {
        enrolled: false,
        pending: false,
        confirmed_at: null,
        recovery_codes_left: 0,
      });
      assert.equal((await api.call('POST', `${MFA}/totp/confirm`, token, { code: '123456' })).json().code, 400, 'nothing to confirm yet');
      const started = await api.call('POST', `${MFA}/totp`, token);
      assert.equal(started.statusCode, 200);
      assert.equal(started.headers['cache-control'], 'no-store');
      const { secret, otpauth_uri } = started.json().data;
      assert.match(secret, /^[A-Z2-7]{32}$/);
      const uri = new URL(otpauth_uri);
      assert.equal(uri.protocol, 'otpauth:');
      assert.equal(uri.searchParams.get('secret'), secret);
      assert.ok(decodeURIComponent(uri.pathname).endsWith(fields.no_pegawai));
      assert.equal((await api.call('GET', MFA, token)).json().data.pending, true);
      // Pending: the password alone still signs in.
      assert.equal((await api.login(fields.no_pegawai, fields.kata_sandi)).statusCode, 200);

      const wrong = await api.call('POST', `${MFA}/totp/confirm`, token, { code: totpCode(secret, gw.clock.now() + 10 * STEP_MS) });
      assert.equal(wrong.statusCode, 400);
      assert.equal(wrong.json().status, false);
      const confirmed = await api.call('POST', `${MFA}/totp/confirm`, token, { code: api.nextCode(secret) });
      assert.equal(confirmed.statusCode, 200, confirmed.body);
      const codes: string[] = confirmed.json().data.recovery_codes;
      assert.equal(codes.length, 10);
      assert.equal(new Set(codes).size, 10);
      for (const code of codes) assert.match(code, /^[0-9A-Z]{5}-[0-9A-Z]{5}$/);
      const status = (await api.call('GET', MFA, token)).json().data;
      assert.equal(status.enrolled, true);
      assert.equal(status.recovery_codes_left, 10);
      const stored = await gw.database.db.selectFrom('user_recovery_codes').select('digest').where('user_id', '=', id).execute();
      assert.equal(stored.length, 10);
      for (const { digest } of stored) assert.ok(!codes.some((code) => digest.includes(code.replace('-', ''))), 'digests, not the codes');
      assert.equal((await api.call('POST', `${MFA}/totp`, token)).statusCode, 409, 'one authenticator: remove it to enrol again');

      const audit = await auditActions(gw);
      assert.ok(audit.some((row) => row.action === 'auth.mfa_enrol' && row.outcome === 'success' && row.actor_id === id));
      assert.ok(audit.some((row) => row.action === 'auth.mfa_enrol' && row.outcome === 'failure' && row.details.reason === 'code_invalid'));
      assert.ok(!JSON.stringify(audit).includes(secret), 'the secret is never in the audit trail');
    });

    test('login of an enrolled user: 401 requireMfa with a single-use challenge (not a token); the code answers as login does', async () => {
      const { fields, token } = await signedInUser();
      const { secret } = await api.enrol(token);
      const first = await api.login(fields.no_pegawai, fields.kata_sandi);
      assert.equal(first.statusCode, 401);
      const body = first.json();
      assert.equal(body.status, false);
      assert.equal(body.data.requireMfa, true);
      assert.equal(body.data.expires_in, 300);
      const { challenge } = body.data;
      assert.ok(!JWT_SHAPE.test(challenge), 'the challenge is no application token');
      assert.equal(
        (await gw.request({ method: 'GET', url: '/api/v1/auth/profile', headers: { authorization: challenge } })).statusCode,
        401,
      );
      const stored = await gw.database.db.selectFrom('mfa_challenges').select('digest').execute();
      assert.ok(!stored.some((row) => row.digest === challenge), 'only its digest is stored');

      const answer = await api.verify(challenge, api.nextCode(secret), { 'user-agent': 'authenticator-test' });
      assert.equal(answer.statusCode, 200, answer.body);
      // The spec's login answer, the same shape as a login without a second factor.
      const plain = await signedInUser();
      const plainLogin = (await api.login(plain.fields.no_pegawai, plain.fields.kata_sandi)).json();
      const verified = answer.json();
      assert.deepEqual(Object.keys(verified).sort(), Object.keys(plainLogin).sort());
      assert.deepEqual(Object.keys(verified.data).sort(), Object.keys(plainLogin.data).sort());
      assert.deepEqual(Object.keys(verified.data.user).sort(), Object.keys(plainLogin.data.user).sort());
      assert.equal(verified.message, plainLogin.message);
      assert.equal(verified.data.user.no_pegawai, fields.no_pegawai);
      const profile = await gw.request({ method: 'GET', url: '/api/v1/auth/profile', headers: { authorization: verified.data.token } });
      assert.equal(profile.statusCode, 200);

      const again = await api.verify(challenge, api.nextCode(secret));
      assert.equal(again.statusCode, 401, 'the challenge was used');
      assert.equal(again.json().message, 'Sesi verifikasi tidak valid atau kedaluwarsa, silakan login kembali');

      const expired = (await api.login(fields.no_pegawai, fields.kata_sandi)).json().data.challenge;
      gw.clock.advance(5 * 60_000 + 1_000);
      assert.equal((await api.verify(expired, totpCode(secret, gw.clock.now()))).statusCode, 401, 'expired after five minutes');

      const listed = (await api.call('GET', SESSIONS, verified.data.token)).json().data;
      assert.equal(listed.find((session: { current: boolean }) => session.current).auth_method, 'password+totp');
      assert.equal(listed.find((session: { current: boolean }) => session.current).user_agent, 'authenticator-test');
    });

    test('a code is accepted once: the same code again is refused, and of two concurrent verifies with one code only one wins', async () => {
      const { fields, token } = await signedInUser();
      const { secret } = await api.enrol(token);
      const challengeOf = async () => (await api.login(fields.no_pegawai, fields.kata_sandi)).json().data.challenge as string;
      const code = api.nextCode(secret);
      assert.equal((await api.verify(await challengeOf(), code)).statusCode, 200);
      const replayed = await api.verify(await challengeOf(), code);
      assert.equal(replayed.statusCode, 401);
      assert.equal(replayed.json().message, 'Kode autentikasi salah');
      // An older code of the drift window is refused too, once a newer step was used.
      assert.equal((await api.verify(await challengeOf(), totpCode(secret, gw.clock.now() - STEP_MS))).statusCode, 401);

      const racing = api.nextCode(secret);
      const challenges = await Promise.all([1, 2, 3, 4].map(() => challengeOf()));
      const answers = await Promise.all(challenges.map((challenge) => api.verify(challenge, racing)));
      assert.deepEqual(answers.map((answer) => answer.statusCode).sort(), [200, 401, 401, 401]);
      // What makes that hold whatever the interleaving: each use is a conditional write that only one request can make.
      const repository = new MfaRepository(gw.database.db);
      const step = Math.floor(gw.clock.now() / STEP_MS) + 5;
      const { id } = await gw.database.db
        .selectFrom('users')
        .select('id')
        .where('no_pegawai', '=', fields.no_pegawai)
        .executeTakeFirstOrThrow();
      assert.deepEqual(
        (await Promise.all([repository.useStep(id, step, gw.database.db), repository.useStep(id, step, gw.database.db)])).sort(),
        [false, true],
      );
      const loose = (await api.login(fields.no_pegawai, fields.kata_sandi)).json().data.challenge;
      const digest = (
        await gw.database.db.selectFrom('mfa_challenges').select('digest').where('user_id', '=', id).executeTakeFirstOrThrow()
      ).digest;
      assert.ok(loose);
      assert.deepEqual((await Promise.all([repository.consumeChallenge(digest), repository.consumeChallenge(digest)])).sort(), [
        false,
        true,
      ]);
      const audit = await auditActions(gw);
      assert.ok(
        audit.some((row) => row.action === 'auth.mfa_verify' && row.outcome === 'failure' && row.details.reason === 'code_replayed'),
      );
      // Failures above were counted: a success forgets them, as a good password does without a second factor.
      gw.clock.advance(5 * STEP_MS);
      await api.loginWithCode(fields.no_pegawai, fields.kata_sandi, secret);
    });

    test('recovery codes: each signs in once, is audited as used, and the count left goes down', async () => {
      const { id, fields, token } = await signedInUser();
      const { recoveryCodes } = await api.enrol(token);
      const challengeOf = async () => (await api.login(fields.no_pegawai, fields.kata_sandi)).json().data.challenge as string;
      const used = recoveryCodes[3]!;
      const answer = await api.verify(await challengeOf(), used.toLowerCase().replace('-', ' '));
      assert.equal(answer.statusCode, 200, 'typed in lower case with a space: still the code');
      const sessions = (await api.call('GET', SESSIONS, answer.json().data.token)).json().data;
      assert.equal(sessions.find((session: { current: boolean }) => session.current).auth_method, 'recovery_code');
      assert.equal((await api.verify(await challengeOf(), used)).statusCode, 401, 'used once');
      assert.equal((await api.call('GET', MFA, token)).json().data.recovery_codes_left, 9);
      assert.equal((await api.verify(await challengeOf(), recoveryCodes[4]!)).statusCode, 200, 'another still works');
      const audit = await auditActions(gw);
      const usedRows = audit.filter((row) => row.action === 'auth.mfa_recovery_code_used' && row.actor_id === id);
      assert.deepEqual(usedRows.map((row) => row.details.remaining).sort(), [8, 9]);
      assert.ok(!JSON.stringify(audit).includes(used), 'never the code itself');
      // Two requests with one code: the delete of its row is what only one of them makes.
      const repository = new MfaRepository(gw.database.db);
      const digest = recoveryCodeDigest(recoveryCodes[5]!);
      assert.deepEqual(
        (
          await Promise.all([
            repository.useRecoveryCode(id, digest, gw.database.db),
            repository.useRecoveryCode(id, digest, gw.database.db),
          ])
        ).sort(),
        [false, true],
      );
    });

    test('wrong codes count toward the account lockout, and a right password does not forget them', async () => {
      const { fields, token } = await signedInUser();
      const { secret } = await api.enrol(token);
      const wrongCode = () => totpCode(secret, gw.clock.now() + 20 * STEP_MS);
      const first = (await api.login(fields.no_pegawai, fields.kata_sandi)).json().data.challenge;
      for (let i = 0; i < 3; i++) assert.equal((await api.verify(first, wrongCode())).statusCode, 401);
      // The password again (right): the three failures stay.
      const second = (await api.login(fields.no_pegawai, fields.kata_sandi)).json().data.challenge;
      for (let i = 0; i < 2; i++) assert.equal((await api.verify(second, wrongCode())).statusCode, 401);
      const locked = await api.verify(second, api.nextCode(secret));
      assert.equal(locked.statusCode, 429, 'five failures: even the right code waits');
      assert.ok(Number(locked.headers['retry-after']) > 0);
      assert.equal((await api.login(fields.no_pegawai, fields.kata_sandi)).statusCode, 429, 'and so does the password');
      const audit = await auditActions(gw);
      assert.equal(
        audit.filter((row) => row.action === 'auth.mfa_verify' && row.details.reason === 'code_invalid' && row.actor === fields.no_pegawai)
          .length,
        5,
      );
      gw.clock.advance(16 * 60_000);
      await api.loginWithCode(fields.no_pegawai, fields.kata_sandi, secret);
    });

    test('a challenge takes five wrong codes, then it is gone', async () => {
      const { fields, token } = await signedInUser();
      const { secret } = await api.enrol(token);
      const challenge = (await api.login(fields.no_pegawai, fields.kata_sandi)).json().data.challenge;
      await gw.database.db.deleteFrom('login_failures').execute(); // only the challenge's own limit counts here
      for (let i = 0; i < 5; i++) assert.equal((await api.verify(challenge, '000000')).json().message, 'Kode autentikasi salah');
      await gw.database.db.deleteFrom('login_failures').execute();
      const after = await api.verify(challenge, api.nextCode(secret));
      assert.equal(after.statusCode, 401);
      assert.equal(after.json().message, 'Sesi verifikasi tidak valid atau kedaluwarsa, silakan login kembali');
    });

    test('removal: by the person with a current code (a wrong one refused and counted), or by an administrator; both audited', async () => {
      const admin = await gw.login();
      const own = await signedInUser();
      const { secret } = await api.enrol(own.token);
      const wrong = await gw.request({ method: 'DELETE', url: MFA, headers: { authorization: own.token }, payload: { code: '000000' } });
      assert.equal(wrong.statusCode, 400);
      assert.equal((await api.call('GET', MFA, own.token)).json().data.enrolled, true);
      const removed = await gw.request({
        method: 'DELETE',
        url: MFA,
        headers: { authorization: own.token },
        payload: { code: api.nextCode(secret) },
      });
      assert.equal(removed.statusCode, 200, removed.body);
      assert.equal((await api.call('GET', MFA, own.token)).json().data.enrolled, false);
      assert.equal((await api.login(own.fields.no_pegawai, own.fields.kata_sandi)).statusCode, 200, 'the password alone again');
      assert.equal((await gw.database.db.selectFrom('user_recovery_codes').where('user_id', '=', own.id).selectAll().execute()).length, 0);

      const other = await signedInUser();
      await api.enrol(other.token);
      assert.equal((await api.call('DELETE', `/api/v1/pengguna/${other.id}/mfa`, own.token)).statusCode, 403, 'not an administrator');
      assert.equal((await api.call('GET', `/api/v1/pengguna/${other.id}/mfa`, admin)).json().data.enrolled, true);
      assert.equal((await api.call('DELETE', `/api/v1/pengguna/${other.id}/mfa`, admin)).statusCode, 200);
      assert.equal((await api.call('DELETE', `/api/v1/pengguna/${other.id}/mfa`, admin)).statusCode, 404, 'nothing left to remove');
      assert.equal((await api.login(other.fields.no_pegawai, other.fields.kata_sandi)).statusCode, 200);

      const audit = await auditActions(gw);
      const removals = audit.filter((row) => row.action === 'auth.mfa_remove');
      assert.ok(removals.some((row) => row.outcome === 'failure' && row.target_id === own.id && row.details.reason === 'code_invalid'));
      assert.ok(removals.some((row) => row.outcome === 'success' && row.target_id === own.id && row.details.by === 'self'));
      assert.ok(
        removals.some(
          (row) =>
            row.outcome === 'success' && row.target_id === other.id && row.details.by === 'administrator' && row.actor === ADMIN_NO_PEGAWAI,
        ),
      );
    });

    test('recovery codes regenerated with a current TOTP code: ten new ones sign in, the old ones no longer do; a wrong code or a recovery code refused; audited', async () => {
      const own = await signedInUser();
      const { secret, recoveryCodes: old } = await api.enrol(own.token);
      const notEnrolled = await signedInUser();
      assert.equal((await api.call('POST', `${MFA}/recovery-codes`, notEnrolled.token, { code: '123456' })).statusCode, 404);
      const wrong = await api.call('POST', `${MFA}/recovery-codes`, own.token, { code: '000000' });
      assert.equal(wrong.statusCode, 400);
      assert.equal(
        (await api.call('POST', `${MFA}/recovery-codes`, own.token, { code: old[0]! })).statusCode,
        400,
        'a TOTP code, not a recovery code',
      );
      const code = api.nextCode(secret);
      const renewed = await api.call('POST', `${MFA}/recovery-codes`, own.token, { code });
      assert.equal(renewed.statusCode, 200, renewed.body);
      assert.equal(renewed.headers['cache-control'], 'no-store');
      const fresh: string[] = renewed.json().data.recovery_codes;
      assert.equal(fresh.length, 10);
      assert.ok(!fresh.some((c) => old.includes(c)));
      assert.equal(
        (await api.call('POST', `${MFA}/recovery-codes`, own.token, { code })).statusCode,
        400,
        'the same code is not taken twice',
      );
      assert.equal((await api.call('GET', MFA, own.token)).json().data.recovery_codes_left, 10);

      const withOld = await api.login(own.fields.no_pegawai, own.fields.kata_sandi);
      assert.equal((await api.verify(withOld.json().data.challenge, old[1]!)).statusCode, 401, 'an old code no longer signs in');
      const withNew = await api.login(own.fields.no_pegawai, own.fields.kata_sandi);
      assert.equal((await api.verify(withNew.json().data.challenge, fresh[0]!)).statusCode, 200, 'a new one does');

      const audit = (await auditActions(gw)).filter((row) => row.action === 'auth.mfa_recovery_codes' && row.target_id === own.id);
      assert.ok(audit.some((row) => row.outcome === 'success' && row.actor_id === own.id));
      assert.ok(audit.some((row) => row.outcome === 'failure' && row.details.reason === 'code_invalid'));
    });

    test('before the password is verified nothing differs: the same argon2 work and the same 401 whether the account exists or has a second factor', async () => {
      const enrolled = await signedInUser();
      await api.enrol(enrolled.token);
      const plain = await signedInUser();
      const cases = [
        { name: 'unknown account', no: 'nobody-at-all', password: 'Wrong#Passw0rd' },
        { name: 'wrong password, second factor', no: enrolled.fields.no_pegawai, password: 'Wrong#Passw0rd' },
        { name: 'wrong password, none', no: plain.fields.no_pegawai, password: 'Wrong#Passw0rd' },
        { name: 'right password, second factor', no: enrolled.fields.no_pegawai, password: enrolled.fields.kata_sandi },
        { name: 'right password, none', no: plain.fields.no_pegawai, password: plain.fields.kata_sandi },
      ];
      const answers = new Map<string, { status: number; body: Record<string, unknown>; verifications: number }>();
      for (const { name, no, password } of cases) {
        const before = passwordWork.verifications;
        const response = await api.login(no, password);
        answers.set(name, { status: response.statusCode, body: response.json(), verifications: passwordWork.verifications - before });
      }
      for (const [name, answer] of answers) assert.equal(answer.verifications, 1, `${name}: one password verification`);
      const wrongEnrolled = answers.get('wrong password, second factor')!;
      assert.deepEqual(wrongEnrolled.body, answers.get('wrong password, none')!.body, 'a wrong password says nothing of the second factor');
      assert.deepEqual(wrongEnrolled.body, answers.get('unknown account')!.body);
      assert.equal(answers.get('right password, second factor')!.status, 401);
      assert.equal(answers.get('right password, none')!.status, 200);
    });

    test('sessions: listed with when, where and how; one ended, then all others; refused at once; an administrator does the same; audited', async () => {
      const { id, fields, token: first } = await signedInUser();
      await api.call('POST', '/api/v1/auth/logout', first);
      const phone = (await api.login(fields.no_pegawai, fields.kata_sandi, { 'user-agent': 'Phone/1.0' })).json().data.token as string;
      const laptop = (await api.login(fields.no_pegawai, fields.kata_sandi, { 'user-agent': 'Laptop/2.0' })).json().data.token as string;
      const tablet = (await api.login(fields.no_pegawai, fields.kata_sandi, { 'user-agent': 'Tablet/3.0' })).json().data.token as string;
      const listed = await api.call('GET', SESSIONS, laptop);
      assert.equal(listed.statusCode, 200);
      const rows: Array<Record<string, unknown>> = listed.json().data;
      const byAgent = new Map(rows.map((row) => [row.user_agent, row]));
      for (const agent of ['Phone/1.0', 'Laptop/2.0', 'Tablet/3.0']) {
        const row = byAgent.get(agent)!;
        assert.ok(row, agent);
        assert.equal(row.auth_method, 'password');
        assert.equal(row.ip, '127.0.0.1');
        assert.equal(typeof row.created_at, 'string');
        assert.equal(row.last_used_at, row.created_at);
        assert.equal(row.current, agent === 'Laptop/2.0');
      }

      // Last used: written once a minute at most, not on every request.
      const phoneId = byAgent.get('Phone/1.0')!.id as string;
      const lastUsed = async () =>
        (await gw.database.db.selectFrom('sessions').select('last_used_at').where('id', '=', phoneId).executeTakeFirstOrThrow())
          .last_used_at;
      const created = await lastUsed();
      gw.clock.advance(LAST_USED_RESOLUTION_MS / 2);
      await api.call('GET', '/api/v1/auth/profile', phone);
      assert.equal(await lastUsed(), created, 'within the minute: no write');
      gw.clock.advance(LAST_USED_RESOLUTION_MS / 2);
      await api.call('GET', '/api/v1/auth/profile', phone);
      const usedAt = new Date(gw.clock.now()).toISOString();
      await eventually(async () => assert.equal(await lastUsed(), usedAt));

      // Someone else's session is not found through one's own list.
      const stranger = await signedInUser();
      const strangerSession = (await api.call('GET', SESSIONS, stranger.token)).json().data[0].id;
      assert.equal((await api.call('DELETE', `${SESSIONS}/${strangerSession}`, laptop)).statusCode, 404);
      assert.equal((await api.call('GET', '/api/v1/auth/profile', stranger.token)).statusCode, 200);

      const ended = await api.call('DELETE', `${SESSIONS}/${phoneId}`, laptop);
      assert.equal(ended.statusCode, 200, ended.body);
      assert.equal((await api.call('GET', '/api/v1/auth/profile', phone)).statusCode, 401, 'refused at once');
      assert.equal((await api.call('GET', SESSIONS, laptop)).json().data.length, 2);

      const others = await api.call('DELETE', SESSIONS, laptop);
      assert.deepEqual(others.json().data, { ended: 1 });
      assert.equal((await api.call('GET', '/api/v1/auth/profile', tablet)).statusCode, 401);
      assert.equal((await api.call('GET', '/api/v1/auth/profile', laptop)).statusCode, 200, 'this one stays');

      // An administrator: list, end one, end all.
      const admin = await gw.login();
      assert.equal((await api.call('GET', `/api/v1/pengguna/${id}/sessions`, laptop)).statusCode, 403);
      const second = (await api.login(fields.no_pegawai, fields.kata_sandi)).json().data.token as string;
      const adminView = await api.call('GET', `/api/v1/pengguna/${id}/sessions`, admin);
      assert.equal(adminView.json().data.length, 2);
      assert.ok(adminView.json().data.every((row: { current: boolean }) => !row.current));
      const secondId = adminView
        .json()
        .data.find((row: { id: string }) => row.id !== rows.find((r) => r.user_agent === 'Laptop/2.0')!.id).id;
      assert.equal((await api.call('DELETE', `/api/v1/pengguna/${id}/sessions/${secondId}`, admin)).statusCode, 200);
      assert.equal((await api.call('GET', '/api/v1/auth/profile', second)).statusCode, 401);
      assert.deepEqual((await api.call('DELETE', `/api/v1/pengguna/${id}/sessions`, admin)).json().data, { ended: 1 });
      assert.equal((await api.call('GET', '/api/v1/auth/profile', laptop)).statusCode, 401);
      assert.equal((await api.call('GET', `/api/v1/pengguna/${id}/sessions`, admin)).json().data.length, 0);

      const audit = await auditActions(gw, 200);
      assert.ok(
        audit.some(
          (row) => row.action === 'auth.session_end' && row.target_id === phoneId && row.details.by === 'self' && row.actor_id === id,
        ),
      );
      assert.ok(audit.some((row) => row.action === 'auth.session_end' && row.target_id === secondId && row.details.by === 'administrator'));
      assert.ok(audit.some((row) => row.action === 'auth.sessions_end' && row.target_id === id && row.details.by === 'administrator'));
      assert.ok(audit.some((row) => row.action === 'auth.sessions_end' && row.target_id === id && row.details.by === 'self'));
    });

    // Last in this block: it moves the clock past every password's age.
    test('an expired password of an account with a second factor is changed only with a code as well', async () => {
      const { fields, token } = await signedInUser();
      const { secret } = await api.enrol(token);
      gw.clock.advance(91 * 24 * 3600_000);
      const expired = await api.login(fields.no_pegawai, fields.kata_sandi);
      assert.equal(expired.statusCode, 401);
      assert.equal(expired.json().data.requirePasswordReset, true);
      const change = (extra: object) =>
        gw.request({
          method: 'POST',
          url: '/api/v1/auth/change-expired-password',
          payload: {
            no_pegawai: fields.no_pegawai,
            kata_sandi_lama: fields.kata_sandi,
            kata_sandi: 'Baru#Rahasia456',
            konfirmasi_kata_sandi: 'Baru#Rahasia456',
            ...extra,
          },
        });
      const withoutCode = await change({});
      assert.equal(withoutCode.statusCode, 401);
      assert.equal(withoutCode.json().data.requireMfa, true);
      assert.equal((await change({ code: '000000' })).statusCode, 401);
      assert.equal((await api.login(fields.no_pegawai, 'Baru#Rahasia456')).statusCode, 401, 'not changed');
      assert.equal((await change({ code: api.nextCode(secret) })).statusCode, 200);
      await api.loginWithCode(fields.no_pegawai, 'Baru#Rahasia456', secret);
    });
  });

  describe(`GATEWAY_MFA_REQUIRED_FOR [${dialect}]`, () => {
    let gw: TestGateway;
    let api: ReturnType<typeof client>;
    before(async () => {
      gw = await startTestGateway(dialect, { GATEWAY_MFA_REQUIRED_FOR: 'admin' });
      api = client(gw);
    });
    after(async () => gw.close());

    test('an administrator without a second factor gets an enrolment-only token, which opens the enrolment routes only; once enrolled, login asks for the code', async () => {
      const first = await api.login(ADMIN_NO_PEGAWAI, ADMIN_PASSWORD);
      assert.equal(first.statusCode, 401);
      assert.equal(first.json().data.requireMfaEnrolment, true);
      assert.equal(first.json().data.requireMfa, undefined);
      const enrolment: string = first.json().data.enrolment_token;
      assert.ok(!JWT_SHAPE.test(enrolment));
      for (const [method, url] of [
        ['GET', '/api/v1/auth/profile'],
        ['GET', '/api/v1/pengguna'],
        ['GET', SESSIONS],
        ['POST', '/api/v1/auth/refresh'],
      ] as const) {
        assert.equal((await api.call(method, url, enrolment)).statusCode, 401, `${method} ${url}`);
        assert.equal((await api.call(method, url, `Bearer ${enrolment}`)).statusCode, 401, `${method} ${url}`);
      }
      assert.equal(
        (await gw.request({ method: 'DELETE', url: MFA, headers: { authorization: enrolment }, payload: { code: '123456' } })).statusCode,
        401,
      );
      assert.equal((await api.call('GET', MFA, enrolment)).json().data.enrolled, false);
      const { secret } = await api.enrol(`Bearer ${enrolment}`);
      assert.equal((await api.call('GET', MFA, enrolment)).statusCode, 401, 'used up by the confirmation');

      const admin = await api.loginWithCode(ADMIN_NO_PEGAWAI, ADMIN_PASSWORD, secret);
      // Holders of other rights sign in with the password alone.
      const fields = newUser();
      assert.equal(
        (await gw.request({ method: 'POST', url: '/api/v1/pengguna', headers: { authorization: admin }, payload: fields })).statusCode,
        201,
      );
      assert.equal((await api.login(fields.no_pegawai, fields.kata_sandi)).statusCode, 200);
      const audit = await auditActions(gw);
      assert.ok(audit.some((row) => row.action === 'auth.login' && row.details.reason === 'mfa_enrolment_required'));
    });
  });
}

describeOnPostgres('ended sessions on another instance', () => {
  test('a session ended through one gateway is refused at once by another that had it cached for 30 s', async () => {
    const gw = await startTestGateway('postgres', { GATEWAY_SESSION_CACHE_TTL: '30s' });
    const other = await buildGateway({
      config: loadGatewayConfig({
        GATEWAY_DATABASE_URL: gw.databaseUrl,
        GATEWAY_ADMIN_PASSWORD: ADMIN_PASSWORD,
        GATEWAY_SESSION_CACHE_TTL: '30s',
        LOG_LEVEL: 'silent',
      }),
      now: gw.clock.now,
    });
    try {
      await other.app.ready();
      const profileOnOther = (authorization: string) =>
        inject(other.handle, { method: 'GET', url: '/api/v1/auth/profile', headers: { authorization } });
      const { fields } = await gw.createUser();
      const kept = await gw.login(fields.no_pegawai, fields.kata_sandi);
      const ended = await gw.login(fields.no_pegawai, fields.kata_sandi);
      assert.equal((await profileOnOther(ended)).statusCode, 200, 'now cached on the other instance');
      const heard = once(other.sessions.events, 'ended-elsewhere');
      const response = await gw.request({ method: 'DELETE', url: SESSIONS, headers: { authorization: kept } });
      assert.deepEqual(response.json().data, { ended: 1 });
      await heard;
      assert.equal((await profileOnOther(ended)).statusCode, 401);
      assert.equal((await profileOnOther(kept)).statusCode, 200);
    } finally {
      await other.app.close();
      await gw.close();
    }
  });
});
