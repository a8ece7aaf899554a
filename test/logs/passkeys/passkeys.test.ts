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
