/**
 * The login lockout both services use (shared/auth/login-lockout.ts), on each dialect: what it
 * counts, when it refuses and with which wait, the dummy check of unknown names, the reset. The
 * services' own tests (test/gateway/auth/auth.test.ts, test/logs/auth/auth.test.ts) cover their answers.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { hashPassword } from '../../src/shared/auth/passwords.js';
import { LoginLockout, type LoginLockoutRules } from '../../src/shared/auth/login-lockout.js';
import type { LoginFailuresTable } from '../../src/shared/auth/shared-rate-limiter.js';
import { openDatabase, type Database } from '../../src/shared/db/database.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/databases.js';
import { TestClock } from '../helpers/clock.js';

interface Schema {
  login_failures: LoginFailuresTable;
}
interface User {
  name: string;
  hash: string | null;
}
class Refused extends Error {
  constructor(
    readonly status: number,
    readonly retryAfter?: number,
  ) {
    super(String(status));
  }
}

const MINUTE = 60_000;

for (const dialect of DIALECTS) {
  describe(`login lockout [${dialect}]`, () => {
    let testDatabase: TestDatabase;
    let database: Database<Schema>;
    let users: Map<string, User>;
    before(async () => {
      testDatabase = await createTestDatabase(dialect);
      database = await openDatabase<Schema>(testDatabase.url);
      // The shape of both services' `login_failures` table.
      await database.db.schema
        .createTable('login_failures')
        .addColumn('key', 'text', (col) => col.primaryKey())
        .addColumn('count', 'integer', (col) => col.notNull())
        .addColumn('reset_at', 'bigint', (col) => col.notNull())
        .execute();
      users = new Map([
        ['alice', { name: 'alice', hash: await hashPassword('right-password-1') }],
        ['sso-only', { name: 'sso-only', hash: null }],
      ]);
    });
    after(async () => {
      await database.close();
      await testDatabase.drop();
    });

    function lockout(
      prefix: string,
      counts: 'attempts' | 'failures',
      rules: { account: number; address: number; addressWindowMs: number },
    ) {
      const clock = new TestClock();
      const audited: { reason: string; name: string; user?: string | undefined; retryAfter?: number }[] = [];
      const ruleSet: LoginLockoutRules = {
        perAccount: { prefix: `${prefix}-account:`, limit: rules.account, windowMs: 15 * MINUTE },
        perAddress: { prefix: `${prefix}-address:`, limit: rules.address, windowMs: rules.addressWindowMs, counts },
      };
      const guard = new LoginLockout<User, { ip: string }, Schema>(
        database.db,
        ruleSet,
        {
          findUser: async (name) => users.get(name),
          passwordHash: (user) => user.hash,
          lockedOut: async ({ name }, retryAfter) => {
            audited.push({ reason: 'locked', name, retryAfter });
            return new Refused(429, retryAfter);
          },
          failed: async ({ name }, user) => {
            audited.push({ reason: 'failed', name, user: user?.name });
            return new Refused(401);
          },
        },
        clock.now,
      );
      const attempt = (name: string, password: string, ip = '192.0.2.1') =>
        guard.verify(name, password, { ip }, 'auth.login').then(
          (user) => ({ status: 200, user: user.name }),
          (error: Refused) => ({ status: error.status, retryAfter: error.retryAfter }),
        );
      return { attempt, audited, clock };
    }

    test('an account locks after its limit of failures (any case of the name); a good password then is refused too, until the window ends', async () => {
      const { attempt, audited, clock } = lockout('lock', 'failures', { account: 3, address: 100, addressWindowMs: 15 * MINUTE });
      for (const name of ['alice', 'ALICE', 'Alice'])
        assert.deepEqual(await attempt(name, 'wrong'), { status: 401, retryAfter: undefined });
      assert.deepEqual(await attempt('alice', 'right-password-1'), { status: 429, retryAfter: 900 });
      assert.deepEqual(audited.at(-1), { reason: 'locked', name: 'alice', retryAfter: 900 });
      clock.advance(15 * MINUTE);
      assert.deepEqual(await attempt('alice', 'right-password-1'), { status: 200, user: 'alice' });
    });

    test('a good password forgets the account’s failures; an unknown name or an account without a password is a 401 like a wrong password', async () => {
      const { attempt, audited } = lockout('reset', 'failures', { account: 3, address: 100, addressWindowMs: 15 * MINUTE });
      await attempt('alice', 'wrong');
      await attempt('alice', 'wrong');
      assert.equal((await attempt('alice', 'right-password-1')).status, 200);
      await attempt('alice', 'wrong');
      await attempt('alice', 'wrong');
      assert.equal((await attempt('alice', 'wrong')).status, 401, 'the count started again');
      assert.equal((await attempt('nobody', 'right-password-1')).status, 401);
      assert.equal((await attempt('sso-only', '')).status, 401);
      assert.deepEqual(audited.slice(-2), [
        { reason: 'failed', name: 'nobody', user: undefined },
        { reason: 'failed', name: 'sso-only', user: 'sso-only' },
      ]);
    });

    test('an address counts failures or every attempt, as the service chose; both limits reached: the longer wait', async () => {
      const failures = lockout('failures', 'failures', { account: 100, address: 2, addressWindowMs: 5 * MINUTE });
      assert.equal((await failures.attempt('alice', 'right-password-1')).status, 200, 'successes do not count');
      assert.equal((await failures.attempt('alice', 'right-password-1')).status, 200);
      await failures.attempt('x', 'wrong');
      await failures.attempt('y', 'wrong');
      assert.deepEqual(await failures.attempt('alice', 'right-password-1'), { status: 429, retryAfter: 300 });
      assert.equal((await failures.attempt('alice', 'right-password-1', '192.0.2.2')).status, 200, 'another address');

      const busy = lockout('busy', 'attempts', { account: 100, address: 2, addressWindowMs: 5 * MINUTE });
      assert.equal((await busy.attempt('alice', 'right-password-1')).status, 200);
      assert.equal((await busy.attempt('alice', 'right-password-1')).status, 200);
      assert.deepEqual(await busy.attempt('alice', 'right-password-1'), { status: 429, retryAfter: 300 }, 'successes count too');

      const attempts = lockout('attempts', 'attempts', { account: 1, address: 2, addressWindowMs: 5 * MINUTE });
      assert.equal((await attempts.attempt('alice', 'right-password-1')).status, 200);
      assert.equal((await attempts.attempt('alice', 'wrong')).status, 401);
      // The third attempt: the address is over its 2 in 5 minutes and the account over its 1 failure in 15.
      assert.deepEqual(await attempts.attempt('alice', 'right-password-1'), { status: 429, retryAfter: 900 });
    });
  });
}
