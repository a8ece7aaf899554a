import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { passwordWork } from '../../../src/shared/auth/passwords.js';
import { totpCode } from '../../../src/shared/mfa/totp.js';
import { DIALECTS } from '../../helpers/databases.js';
import { bearer, LOGS_ADMIN, LOGS_ADMIN_PASSWORD, PASSWORD, startTestLogs, type TestLogs } from '../../helpers/logs.js';

const STEP_MS = 30_000;

/** Enrols the signed-in user; returns the secret and the recovery codes. */
async function enrol(logs: TestLogs, headers: Record<string, string>) {
  const start = await logs.request({ method: 'POST', url: '/api/mfa/totp/start', headers });
  assert.equal(start.statusCode, 200, start.body);
  const { secret, otpauth_uri: uri } = start.json();
  const confirm = await logs.request({
    method: 'POST',
    url: '/api/mfa/totp/confirm',
    headers,
    payload: { code: totpCode(secret, logs.clock.ms) },
  });
  assert.equal(confirm.statusCode, 200, confirm.body);
  // The confirming code's step is spent: the next code comes from the next step.
  logs.clock.advance(STEP_MS);
  return { secret: secret as string, uri: uri as string, recoveryCodes: confirm.json().recovery_codes as string[] };
}

async function passwordStep(logs: TestLogs, username: string, password = PASSWORD) {
  return logs.request({ method: 'POST', url: '/api/login', payload: { username, password }, headers: { 'user-agent': 'test-agent/1' } });
}

async function codeStep(logs: TestLogs, challenge: string, code: string) {
  return logs.request({ method: 'POST', url: '/api/login/mfa', payload: { challenge, code } });
}

async function auditActions(logs: TestLogs, action: string) {
  const response = await logs.request({
    method: 'GET',
    url: `/api/v1/log-audit/search?action=${action}&limit=100`,
    headers: await logs.admin(),
  });
  assert.equal(response.statusCode, 200, response.body);
  return response.json().data as { action: string; outcome: string; actor: string; details: unknown; target_id: string | null }[];
}

for (const dialect of DIALECTS) {
  describe(`logs second factor (TOTP) [${dialect}]`, () => {
    let logs: TestLogs;
    before(async () => {
      logs = await startTestLogs(dialect, { LOGS_LOGIN_MAX_FAILURES_PER_USERNAME: '5' });
    });
    after(async () => logs.close());

    test('enrolment: a secret and otpauth URI, confirmed by a first code, ten recovery codes shown once', async () => {
      const user = await logs.userWith(['logs:read']);
      const status = await logs.request({ method: 'GET', url: '/api/mfa', headers: user.headers });
      assert.deepEqual(status.json(), { totp: false, recovery_codes_left: 0, required: false });
      const start = await logs.request({ method: 'POST', url: '/api/mfa/totp/start', headers: user.headers });
      const { secret, otpauth_uri: uri } = start.json();
      assert.match(secret, /^[A-Z2-7]{32}$/);
      assert.ok(uri.startsWith(`otpauth://totp/Gerbang%20Logs:${user.username}?secret=${secret}`), uri);
      const wrong = await logs.request({
        method: 'POST',
        url: '/api/mfa/totp/confirm',
        headers: user.headers,
        payload: { code: '000000' },
      });
      assert.equal(wrong.statusCode, 401);
      const good = await logs.request({
        method: 'POST',
        url: '/api/mfa/totp/confirm',
        headers: user.headers,
        payload: { code: totpCode(secret, logs.clock.ms) },
      });
      assert.equal(good.statusCode, 200, good.body);
      const codes = good.json().recovery_codes as string[];
      assert.equal(codes.length, 10);
      assert.equal(new Set(codes).size, 10);
      assert.equal(good.json().login, undefined, 'a signed-in enrolment gets no new session');
      const again = await logs.request({ method: 'POST', url: '/api/mfa/totp/start', headers: user.headers });
      assert.equal(again.statusCode, 409, 'a confirmed factor is not replaced by starting over');
      const after = await logs.request({ method: 'GET', url: '/api/mfa', headers: user.headers });
      assert.deepEqual(after.json(), { totp: true, recovery_codes_left: 10, required: false });
      const enrolled = await auditActions(logs, 'auth.mfa_enrol');
      assert.ok(enrolled.some((row) => row.actor === user.username && row.outcome === 'success'));
      assert.ok(enrolled.some((row) => row.actor === user.username && row.outcome === 'failure'));
    });

    test('login of an enrolled user: a 401 with a challenge (never a token), then a code gives the login answer', async () => {
      const user = await logs.userWith(['logs:read']);
      const { secret } = await enrol(logs, user.headers);
      const first = await passwordStep(logs, user.username);
      assert.equal(first.statusCode, 401);
      const body = first.json();
      assert.equal(body.error, 'second factor required');
      assert.deepEqual(body.mfa.methods, ['totp', 'recovery_code']);
      assert.equal(body.mfa.expires_in, 300);
      assert.equal(body.token, undefined);
      assert.doesNotMatch(first.body, /eyJ/, 'no JWT in the answer');
      const me = await logs.request({ method: 'GET', url: '/api/me', headers: bearer(body.mfa.challenge) });
      assert.equal(me.statusCode, 401, 'the challenge is no access token');

      const wrong = await codeStep(logs, body.mfa.challenge, totpCode(secret, logs.clock.ms + 10 * STEP_MS));
      assert.deepEqual([wrong.statusCode, wrong.json()], [401, { error: 'invalid credentials' }]);
      const done = await codeStep(logs, body.mfa.challenge, totpCode(secret, logs.clock.ms));
      assert.equal(done.statusCode, 200, done.body);
      assert.deepEqual(Object.keys(done.json()).sort(), ['token', 'user']);
      const mine = await logs.request({ method: 'GET', url: '/api/me', headers: bearer(done.json().token.access_token) });
      assert.equal(mine.json().username, user.username);

      const reused = await codeStep(logs, body.mfa.challenge, totpCode(secret, logs.clock.ms + STEP_MS));
      assert.equal(reused.statusCode, 401, 'a challenge is single-use');
      assert.equal(reused.json().error, 'invalid token');

      const failed = await auditActions(logs, 'auth.mfa_verify');
      assert.ok(failed.some((row) => row.actor === user.username && row.outcome === 'failure'));
      const logins = await auditActions(logs, 'auth.login');
      assert.ok(logins.some((row) => row.actor === user.username && JSON.stringify(row.details).includes('password+totp')));
    });

    test('a code signs in once: replayed on a new challenge it is refused; concurrent uses, one wins', async () => {
      const user = await logs.userWith(['logs:read']);
      const { secret } = await enrol(logs, user.headers);
      const code = totpCode(secret, logs.clock.ms);
      const challenge1 = (await passwordStep(logs, user.username)).json().mfa.challenge;
      assert.equal((await codeStep(logs, challenge1, code)).statusCode, 200);
      const challenge2 = (await passwordStep(logs, user.username)).json().mfa.challenge;
      assert.equal((await codeStep(logs, challenge2, code)).statusCode, 401, 'the same code again');

      logs.clock.advance(STEP_MS);
      const next = totpCode(secret, logs.clock.ms);
      const challenges = [(await passwordStep(logs, user.username)).json().mfa.challenge, challenge2];
      const answers = await Promise.all(challenges.map((challenge) => codeStep(logs, challenge, next)));
      assert.deepEqual(answers.map((answer) => answer.statusCode).sort(), [200, 401]);
    });

    test('recovery codes: each signs in once, and its use is audited', async () => {
      const user = await logs.userWith(['logs:read']);
      const { recoveryCodes } = await enrol(logs, user.headers);
      const challenge = (await passwordStep(logs, user.username)).json().mfa.challenge;
      const used = await codeStep(logs, challenge, recoveryCodes[3]!.toLowerCase());
      assert.equal(used.statusCode, 200, used.body);
      const again = await codeStep(logs, (await passwordStep(logs, user.username)).json().mfa.challenge, recoveryCodes[3]!);
      assert.equal(again.statusCode, 401);
      const status = await logs.request({ method: 'GET', url: '/api/mfa', headers: bearer(used.json().token.access_token) });
      assert.equal(status.json().recovery_codes_left, 9);
      const audit = await auditActions(logs, 'auth.mfa_recovery_code_used');
      assert.ok(audit.some((row) => row.actor === user.username));
    });

    test('recovery codes regenerated with a current code: ten new ones sign in, the old ones no longer do; a wrong code or a recovery code refused; audited', async () => {
      const user = await logs.userWith(['logs:read']);
      const plain = await logs.userWith(['logs:read']);
      const regenerate = (headers: Record<string, string>, code: string) =>
        logs.request({ method: 'POST', url: '/api/mfa/recovery-codes', headers, payload: { code } });
      assert.equal((await regenerate(plain.headers, '123456')).statusCode, 409, 'nothing enrolled');
      const { secret, recoveryCodes: old } = await enrol(logs, user.headers);
      assert.equal((await regenerate(user.headers, '000000')).statusCode, 401);
      assert.equal((await regenerate(user.headers, old[0]!)).statusCode, 401, 'a code from the app, not a recovery code');
      const code = totpCode(secret, logs.clock.ms);
      const renewed = await regenerate(user.headers, code);
      assert.equal(renewed.statusCode, 200, renewed.body);
      assert.equal(renewed.headers['cache-control'], 'no-store');
      const fresh: string[] = renewed.json().recovery_codes;
      assert.equal(fresh.length, 10);
      assert.ok(!fresh.some((c) => old.includes(c)));
      assert.equal((await regenerate(user.headers, code)).statusCode, 401, 'the same code is not taken twice');
      const withOld = await codeStep(logs, (await passwordStep(logs, user.username)).json().mfa.challenge, old[1]!);
      assert.equal(withOld.statusCode, 401, 'an old code no longer signs in');
      const withNew = await codeStep(logs, (await passwordStep(logs, user.username)).json().mfa.challenge, fresh[0]!);
      assert.equal(withNew.statusCode, 200, withNew.body);
      const audit = (await auditActions(logs, 'auth.mfa_recovery_codes')).filter((row) => row.target_id === user.id);
      assert.ok(audit.some((row) => row.outcome === 'success' && row.actor === user.username));
      assert.ok(audit.some((row) => row.outcome === 'failure'));
    });

    test('wrong codes count toward the lockout, and a right password again does not reset them', async () => {
      const user = await logs.userWith(['logs:read']);
      const { secret } = await enrol(logs, user.headers);
      for (let attempt = 0; attempt < 5; attempt++) {
        const challenge = (await passwordStep(logs, user.username)).json().mfa?.challenge;
        assert.ok(challenge, `attempt ${attempt}: the password step still answers`);
        assert.equal((await codeStep(logs, challenge, '999999')).statusCode, 401);
      }
      const locked = await passwordStep(logs, user.username);
      assert.equal(locked.statusCode, 429);
      assert.ok(Number(locked.headers['retry-after']) > 0);
      logs.clock.advance(16 * 60_000);
      const challenge = (await passwordStep(logs, user.username)).json().mfa.challenge;
      assert.equal((await codeStep(logs, challenge, totpCode(secret, logs.clock.ms))).statusCode, 200, 'open again after the window');
    });

    test('a wrong password says the same for an enrolled, a plain and an unknown user (nothing about the second factor); every login verifies one password', async () => {
      const enrolled = await logs.userWith(['logs:read']);
      await enrol(logs, enrolled.headers);
      const plain = await logs.userWith(['logs:read']);
      // The work before an answer: one password verification (a dummy hash for an unknown user), so
      // that neither the time nor the answer says whether an account exists or has a second factor.
      const withWork = async (username: string, password: string) => {
        const before = passwordWork.verifications;
        const answer = await passwordStep(logs, username, password);
        return { answer, verifications: passwordWork.verifications - before };
      };
      const answers = [];
      for (const username of [enrolled.username, plain.username, 'nobody-here']) answers.push(await withWork(username, 'Wrong#Passw0rd1'));
      for (const { answer, verifications } of answers) {
        assert.equal(answer.statusCode, 401);
        assert.deepEqual(answer.json(), { error: 'invalid credentials' });
        assert.equal(answer.headers['content-length'], answers[0]!.answer.headers['content-length']);
        assert.equal(verifications, 1);
      }
      const challenged = await withWork(enrolled.username, PASSWORD);
      assert.equal(challenged.answer.statusCode, 401);
      assert.equal(challenged.verifications, 1);
      const signedIn = await withWork(plain.username, PASSWORD);
      assert.equal(signedIn.answer.statusCode, 200);
      assert.equal(signedIn.verifications, 1);
    });

    test('HTTP Basic: a password alone no longer stands for an account with a second factor (an API key does)', async () => {
      const user = await logs.userWith(['logs:write']);
      const bulk = (username: string, password: string) =>
        logs.request({
          method: 'POST',
          url: '/api/v1/_elastic/_bulk',
          headers: {
            authorization: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`,
            'content-type': 'application/x-ndjson',
          },
          payload: '{"index":{}}\n{"message":"hello"}\n',
        });
      assert.equal((await bulk(user.username, PASSWORD)).statusCode, 200, 'before enrolment');
      await enrol(logs, user.headers);
      logs.clock.advance(120_000); // past the verified-credential cache
      const refused = await bulk(user.username, PASSWORD);
      assert.equal(refused.statusCode, 401);
      assert.equal(refused.json().error.type, 'security_exception');
      // The answer of a wrong password: nothing tells whoever tries that this one is right.
      const wrong = await bulk(user.username, 'not-the-password');
      assert.equal(wrong.statusCode, 401);
      assert.deepEqual(refused.json(), wrong.json());
      const audited = (await auditActions(logs, 'ingest.basic_auth')).filter((row) => row.actor === user.username);
      assert.deepEqual(audited.map((row) => (row.details as { reason: string }).reason).sort(), [
        'invalid_credentials',
        'second_factor_required',
      ]);
      // Each refusal counts toward the Basic credential's lockout (limit 5 here), not the console login's.
      for (let attempt = 3; attempt <= 5; attempt += 1) assert.equal((await bulk(user.username, PASSWORD)).statusCode, 401);
      const locked = await bulk(user.username, PASSWORD);
      assert.equal(locked.statusCode, 429);
      const login = await passwordStep(logs, user.username);
      assert.equal(login.statusCode, 401, login.body);
      assert.ok(login.json().mfa.challenge, 'the console login still reaches its second step');
    });

    test('removal: by the user with a current code, or by an administrator; both audited', async () => {
      const user = await logs.userWith(['logs:read']);
      const { secret } = await enrol(logs, user.headers);
      const wrong = await logs.request({ method: 'DELETE', url: '/api/mfa/totp', headers: user.headers, payload: { code: '123456' } });
      assert.equal(wrong.statusCode, 401);
      const removed = await logs.request({
        method: 'DELETE',
        url: '/api/mfa/totp',
        headers: user.headers,
        payload: { code: totpCode(secret, logs.clock.ms) },
      });
      assert.equal(removed.statusCode, 200, removed.body);
      assert.equal((await passwordStep(logs, user.username)).statusCode, 200, 'a password alone again');

      await enrol(logs, user.headers);
      const viewer = await logs.userWith(['logs:read']);
      const denied = await logs.request({ method: 'DELETE', url: `/api/users/${user.id}/mfa`, headers: viewer.headers });
      assert.equal(denied.statusCode, 403);
      const byAdmin = await logs.request({ method: 'DELETE', url: `/api/users/${user.id}/mfa`, headers: await logs.admin() });
      assert.equal(byAdmin.statusCode, 200, byAdmin.body);
      assert.equal((await passwordStep(logs, user.username)).statusCode, 200);
      const none = await logs.request({ method: 'DELETE', url: `/api/users/${user.id}/mfa`, headers: await logs.admin() });
      assert.equal(none.statusCode, 409);
      const audit = await auditActions(logs, 'auth.mfa_remove');
      const mine = audit.filter((row) => row.target_id === user.id && row.outcome === 'success');
      assert.ok(mine.some((row) => row.actor === user.username && JSON.stringify(row.details).includes('self')));
      assert.ok(mine.some((row) => row.actor === LOGS_ADMIN && JSON.stringify(row.details).includes('administrator')));
    });
  });

  describe(`logs second factor enforcement [${dialect}]`, () => {
    let logs: TestLogs;
    let adminHeaders: Record<string, string> | undefined;
    before(async () => {
      logs = await startTestLogs(dialect, { LOGS_MFA_REQUIRED_PERMISSIONS: 'users:manage' });
    });
    after(async () => logs.close());

    test('a holder of a chosen permission gets an enrolment-only credential, and a session only once enrolled', async () => {
      const first = await passwordStep(logs, LOGS_ADMIN, LOGS_ADMIN_PASSWORD);
      assert.equal(first.statusCode, 401);
      assert.equal(first.json().error, 'second factor enrolment required');
      const enrolment = first.json().mfa.enrolment_token as string;
      assert.equal(first.json().token, undefined);
      const headers = bearer(enrolment);
      const me = await logs.request({ method: 'GET', url: '/api/me', headers });
      assert.equal(me.statusCode, 401, 'the enrolment credential opens nothing else');
      const users = await logs.request({ method: 'GET', url: '/api/users', headers });
      assert.equal(users.statusCode, 401);

      const start = await logs.request({ method: 'POST', url: '/api/mfa/totp/start', headers });
      assert.equal(start.statusCode, 200, start.body);
      const secret = start.json().secret as string;
      const confirm = await logs.request({
        method: 'POST',
        url: '/api/mfa/totp/confirm',
        headers,
        payload: { code: totpCode(secret, logs.clock.ms) },
      });
      assert.equal(confirm.statusCode, 200, confirm.body);
      assert.equal(confirm.json().recovery_codes.length, 10);
      const token = confirm.json().login.token.access_token as string;
      assert.equal((await logs.request({ method: 'GET', url: '/api/me', headers: bearer(token) })).statusCode, 200);
      adminHeaders = bearer(token);
      const reused = await logs.request({ method: 'POST', url: '/api/mfa/totp/start', headers });
      assert.equal(reused.statusCode, 401, 'the enrolment credential is spent');

      logs.clock.advance(STEP_MS);
      const next = await passwordStep(logs, LOGS_ADMIN, LOGS_ADMIN_PASSWORD);
      assert.equal(next.json().error, 'second factor required');
    });

    test('a user without such a permission signs in with a password alone, the answer unchanged', async () => {
      assert.ok(adminHeaders, 'the administrator enrolled in the test before');
      const role = await logs.request({
        method: 'POST',
        url: '/api/roles',
        headers: adminHeaders,
        payload: { name: 'readers', permissions: ['logs:read'] },
      });
      assert.equal(role.statusCode, 201, role.body);
      const created = await logs.request({
        method: 'POST',
        url: '/api/users',
        headers: adminHeaders,
        payload: { username: 'reader', email: 'reader@example.go.id', password: PASSWORD, roles: ['readers'] },
      });
      assert.equal(created.statusCode, 201, created.body);
      const login = await passwordStep(logs, 'reader');
      assert.equal(login.statusCode, 200);
      assert.deepEqual(Object.keys(login.json()).sort(), ['token', 'user']);
    });
  });
}
