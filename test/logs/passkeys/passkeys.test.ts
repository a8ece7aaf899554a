import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DIALECTS } from '../../helpers/databases.js';
import { bearer, startTestLogs, type TestLogs } from '../../helpers/logs.js';
import { SoftAuthenticator } from '../../helpers/soft-authenticator.js';

const ORIGIN = 'https://logs.example.go.id';

async function register(logs: TestLogs, headers: Record<string, string>, authenticator: SoftAuthenticator, name?: string) {
  const begin = await logs.request({ method: 'POST', url: '/api/passkeys/options', headers });
  assert.equal(begin.statusCode, 200, begin.body);
  const { challenge_id: challengeId, options } = begin.json();
  const credential = authenticator.create(options);
  return logs.request({ method: 'POST', url: '/api/passkeys', headers, payload: { challenge_id: challengeId, name, credential } });
}

async function passkeyLogin(logs: TestLogs, answer: (options: { challenge: string; rpId?: string }) => unknown) {
  const begin = await logs.request({ method: 'POST', url: '/api/login/passkey/options' });
  assert.equal(begin.statusCode, 200, begin.body);
  const { challenge_id: challengeId, options } = begin.json();
  const credential = answer(options);
  return {
    response: await logs.request({ method: 'POST', url: '/api/login/passkey', payload: { challenge_id: challengeId, credential } }),
    challengeId,
    credential,
  };
}

for (const dialect of DIALECTS) {
  describe(`logs passkeys [${dialect}]`, () => {
    let logs: TestLogs;
    before(async () => {
      logs = await startTestLogs(dialect, { LOGS_WEBAUTHN_RP_ID: 'logs.example.go.id', LOGS_WEBAUTHN_ORIGIN: ORIGIN });
    });
    after(async () => logs.close());

    test('register, list, sign in without a password (a session "passkey"), remove', async () => {
      const user = await logs.userWith(['logs:read']);
      const authenticator = new SoftAuthenticator(ORIGIN);
      const made = await register(logs, user.headers, authenticator, 'Laptop');
      assert.equal(made.statusCode, 201, made.body);
      assert.equal(made.json().name, 'Laptop');
      const listed = await logs.request({ method: 'GET', url: '/api/passkeys', headers: user.headers });
      assert.deepEqual(
        listed.json().passkeys.map((row: { name: string }) => row.name),
        ['Laptop'],
      );

      const { response } = await passkeyLogin(logs, (options) => authenticator.get(options));
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.json().user.username, user.username);
      const headers = bearer(response.json().token.access_token);
      const sessions = await logs.request({ method: 'GET', url: '/api/sessions', headers });
      assert.equal(sessions.json().sessions.find((row: { current: boolean }) => row.current).method, 'passkey');
      const used = await logs.request({ method: 'GET', url: '/api/passkeys', headers });
      assert.ok(used.json().passkeys[0].last_used_at);

      const removed = await logs.request({ method: 'DELETE', url: `/api/passkeys/${made.json().id}`, headers: user.headers });
      assert.equal(removed.statusCode, 200);
      const after = await passkeyLogin(logs, (options) => authenticator.get(options));
      assert.equal(after.response.statusCode, 401, 'a removed passkey signs in no more');
    });

    test("an administrator (users:manage) lists and removes a user's passkey: it signs in no more; audited; others are refused", async () => {
      const user = await logs.userWith(['logs:read']);
      const other = await logs.userWith(['logs:read']);
      const authenticator = new SoftAuthenticator(ORIGIN);
      const made = await register(logs, user.headers, authenticator, 'Phone');
      assert.equal(made.statusCode, 201, made.body);
      const passkeyId: string = made.json().id;
      const admin = await logs.admin();

      const listed = await logs.request({ method: 'GET', url: `/api/users/${user.id}/passkeys`, headers: admin });
      assert.equal(listed.statusCode, 200, listed.body);
      assert.deepEqual(
        listed.json().passkeys.map((row: { id: string; name: string }) => [row.id, row.name]),
        [[passkeyId, 'Phone']],
      );
      const viewer = await logs.userWith(['logs:read']);
      assert.equal((await logs.request({ method: 'GET', url: `/api/users/${user.id}/passkeys`, headers: viewer.headers })).statusCode, 403);
      const denied = await logs.request({ method: 'DELETE', url: `/api/users/${user.id}/passkeys/${passkeyId}`, headers: viewer.headers });
      assert.equal(denied.statusCode, 403, 'users:manage is needed');
      const manager = await logs.userWith(['users:manage']);
      const upward = await logs.request({ method: 'GET', url: `/api/users/${user.id}/passkeys`, headers: manager.headers });
      assert.equal(upward.statusCode, 403, 'not on a user holding a permission the manager lacks (logs:read)');
      assert.equal((await logs.request({ method: 'GET', url: '/api/users/nobody/passkeys', headers: admin })).statusCode, 404);
      const wrongOwner = await logs.request({ method: 'DELETE', url: `/api/users/${other.id}/passkeys/${passkeyId}`, headers: admin });
      assert.equal(wrongOwner.statusCode, 404, "another user's id does not reach this passkey");

      const removed = await logs.request({ method: 'DELETE', url: `/api/users/${user.id}/passkeys/${passkeyId}`, headers: admin });
      assert.equal(removed.statusCode, 200, removed.body);
      assert.deepEqual((await logs.request({ method: 'GET', url: '/api/passkeys', headers: user.headers })).json().passkeys, []);
      assert.equal((await passkeyLogin(logs, (options) => authenticator.get(options))).response.statusCode, 401, 'it signs in no more');
      const again = await logs.request({ method: 'DELETE', url: `/api/users/${user.id}/passkeys/${passkeyId}`, headers: admin });
      assert.equal(again.statusCode, 404);

      const audit = await logs.request({
        method: 'GET',
        url: '/api/v1/log-audit/search?action=auth.passkey_remove&limit=100',
        headers: admin,
      });
      const row = (audit.json().data as { actor: string; target_id: string | null; details: unknown }[]).find(
        (entry) => entry.target_id === user.id,
      );
      assert.ok(row, audit.body);
      assert.match(JSON.stringify(row.details), /"by":"administrator"/);
      assert.match(JSON.stringify(row.details), new RegExp(passkeyId.slice(0, 16)));
    });

    test('a challenge is single use; another origin or a wrong signature is refused', async () => {
      const user = await logs.userWith(['logs:read']);
      const authenticator = new SoftAuthenticator(ORIGIN);
      assert.equal((await register(logs, user.headers, authenticator)).statusCode, 201);
      const first = await passkeyLogin(logs, (options) => authenticator.get(options));
      assert.equal(first.response.statusCode, 200);
      const replay = await logs.request({
        method: 'POST',
        url: '/api/login/passkey',
        payload: { challenge_id: first.challengeId, credential: first.credential },
      });
      assert.equal(replay.statusCode, 401);
      assert.equal(replay.json().error, 'invalid token');

      const phishing = await passkeyLogin(logs, (options) => authenticator.get(options, undefined, 'https://logs.example.go.id.evil.test'));
      assert.equal(phishing.response.statusCode, 401);
      assert.equal(phishing.response.json().error, 'invalid credentials');

      const stranger = new SoftAuthenticator(ORIGIN);
      stranger.create({ challenge: 'x', rp: { id: 'logs.example.go.id' }, user: { id: 'x' } });
      stranger.credentials[0]!.id = authenticator.credentials[0]!.id; // same id, another key
      const forged = await passkeyLogin(logs, (options) => stranger.get(options));
      assert.equal(forged.response.statusCode, 401);

      const audit = await logs.request({
        method: 'GET',
        url: '/api/v1/log-audit/search?action=auth.passkey_login&limit=50',
        headers: await logs.admin(),
      });
      assert.ok(
        audit.json().data.some((row: { outcome: string; actor: string }) => row.outcome === 'failure' && row.actor === user.username),
      );
    });

    test('a registration answered for another challenge, or twice, is refused; garbage is a 4xx', async () => {
      const user = await logs.userWith(['logs:read']);
      const authenticator = new SoftAuthenticator(ORIGIN);
      const begin = await logs.request({ method: 'POST', url: '/api/passkeys/options', headers: user.headers });
      const other = await logs.request({ method: 'POST', url: '/api/passkeys/options', headers: user.headers });
      const credential = authenticator.create(other.json().options);
      const mixed = await logs.request({
        method: 'POST',
        url: '/api/passkeys',
        headers: user.headers,
        payload: { challenge_id: begin.json().challenge_id, credential },
      });
      assert.equal(mixed.statusCode, 400);
      const garbage = await logs.request({
        method: 'POST',
        url: '/api/passkeys',
        headers: user.headers,
        payload: {
          challenge_id: other.json().challenge_id,
          credential: { ...credential, response: { clientDataJSON: 'AAAA', attestationObject: 'AAAA' } },
        },
      });
      assert.equal(garbage.statusCode, 400);
      const notAgain = await logs.request({
        method: 'POST',
        url: '/api/passkeys',
        headers: user.headers,
        payload: { challenge_id: other.json().challenge_id, credential },
      });
      assert.equal(notAgain.statusCode, 400, 'the challenge was spent by the garbage answer');
      const listed = await logs.request({ method: 'GET', url: '/api/passkeys', headers: user.headers });
      assert.deepEqual(listed.json().passkeys, []);
    });
  });
}
