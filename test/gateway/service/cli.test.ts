import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
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

        const unknown = cli(['reset-password', 'nobody'], { GATEWAY_DATABASE_URL: gw.databaseUrl });
        assert.equal(unknown.status, 1);
        assert.match(unknown.stderr, /no user with no_pegawai "nobody"/);
      } finally {
        await gw.close();
      }
    });
  });
}
