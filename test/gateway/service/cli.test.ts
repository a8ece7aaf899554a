import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { totpCode } from '../../../src/shared/mfa/totp.js';
import { DIALECTS } from '../../helpers/databases.js';
import { startTestGateway } from '../../helpers/gateway.js';
import { nodeArgs } from '../../helpers/node-args.js';

const cli = (args: string[], env: Record<string, string>) =>
  spawnSync(process.execPath, [...nodeArgs('src/cli.ts'), ...args], {
    env: { ...process.env, LOG_LEVEL: 'silent', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });

for (const dialect of DIALECTS) {
  describe(`gerbang CLI on the gateway's database [${dialect}]`, () => {
    test("reset-password sets a new password, ends the user's sessions and is audited; an unknown user exits non-zero", async () => {
      const gw = await startTestGateway(dialect);
      try {
        const { id, fields } = await gw.createUser();
        const token = await gw.login(fields.no_pegawai, fields.kata_sandi);
        const result = cli(['reset-password', fields.no_pegawai], { GATEWAY_DATABASE_URL: gw.databaseUrl });
        assert.equal(result.status, 0, result.stderr);
        const password = /new password for \S+: (\S+)/.exec(result.stdout)?.[1];
        assert.ok(password, result.stdout);
        gw.clock.advance(10_000); // past the session look-up cache of this instance
        assert.equal((await gw.request({ method: 'GET', url: '/api/v1/auth/profile', headers: { authorization: token } })).statusCode, 401);
        await assert.rejects(gw.login(fields.no_pegawai, fields.kata_sandi));
        await gw.login(fields.no_pegawai, password);
        const audit = (await gw.audit.list(100)).find((row) => row.action === 'user.reset_password' && row.target_id === id);
        assert.equal(audit?.actor, 'cli');

        // Locked out by five wrong passwords (the deployed limit), the user gets in with a new one at once.
        for (let i = 0; i < 5; i += 1) await assert.rejects(gw.login(fields.no_pegawai, 'Wrong#Pass1'));
        const locked = await gw.request({
          method: 'POST',
          url: '/api/v1/auth/login',
          payload: { no_pegawai: fields.no_pegawai, kata_sandi: password },
        });
        assert.equal(locked.statusCode, 429, 'locked out, even with the right password');
        const again = cli(['reset-password', fields.no_pegawai], { GATEWAY_DATABASE_URL: gw.databaseUrl });
        assert.equal(again.status, 0, again.stderr);
        await gw.login(fields.no_pegawai, /new password for \S+: (\S+)/.exec(again.stdout)![1]!);

        // A lost phone: only with --remove-second-factor does the authenticator go (audited apart).
        const enrolled = await gw.createUser();
        const enrolledToken = await gw.login(enrolled.fields.no_pegawai, enrolled.fields.kata_sandi);
        const started = await gw.request({ method: 'POST', url: '/api/v1/auth/mfa/totp', headers: { authorization: enrolledToken } });
        gw.clock.advance(30_000);
        const confirmed = await gw.request({
          method: 'POST',
          url: '/api/v1/auth/mfa/totp/confirm',
          headers: { authorization: enrolledToken },
          payload: { code: totpCode(started.json().data.secret, gw.clock.now()) },
        });
        assert.equal(confirmed.statusCode, 200, confirmed.body);
        const passwordStep = (kata_sandi: string) =>
          gw.request({ method: 'POST', url: '/api/v1/auth/login', payload: { no_pegawai: enrolled.fields.no_pegawai, kata_sandi } });
        const plain = cli(['reset-password', enrolled.fields.no_pegawai], { GATEWAY_DATABASE_URL: gw.databaseUrl });
        assert.equal(plain.status, 0, plain.stderr);
        assert.doesNotMatch(plain.stdout, /second factor/);
        const asked = await passwordStep(/new password for \S+: (\S+)/.exec(plain.stdout)![1]!);
        assert.equal(asked.json().data?.requireMfa, true, 'without the flag the code is still asked for');
        const removed = cli(['reset-password', enrolled.fields.no_pegawai, '--remove-second-factor'], {
          GATEWAY_DATABASE_URL: gw.databaseUrl,
        });
        assert.equal(removed.status, 0, removed.stderr);
        assert.match(removed.stdout, /^second factor removed/m);
        assert.equal((await passwordStep(/new password for \S+: (\S+)/.exec(removed.stdout)![1]!)).statusCode, 200, 'the password alone');
        const removal = (await gw.audit.list(100)).find((row) => row.action === 'auth.mfa_remove' && row.target_id === enrolled.id);
        assert.equal(removal?.actor, 'cli');
        const nothing = cli(['reset-password', enrolled.fields.no_pegawai, '--remove-second-factor'], {
          GATEWAY_DATABASE_URL: gw.databaseUrl,
        });
        assert.match(nothing.stdout, /^no second factor was enrolled$/m);

        const unknown = cli(['reset-password', 'nobody'], { GATEWAY_DATABASE_URL: gw.databaseUrl });
        assert.equal(unknown.status, 1);
        assert.match(unknown.stderr, /no user with no_pegawai "nobody"/);
      } finally {
        await gw.close();
      }
    });
  });
}
