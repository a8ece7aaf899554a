import { generatePassword } from '../shared/auth/password-policy.js';
import { hashPassword } from '../shared/auth/passwords.js';
import type { Database } from '../shared/db/database.js';
import type { LogsSchema } from './db/schema.js';
import { LogsAuditRepository } from './modules/audit/audit.repository.js';
import { lockoutKeysOf } from './modules/auth/login-guard.js';
import { LogsSessionsRepository } from './modules/auth/sessions.repository.js';
import { LogsUsersRepository } from './modules/users/users.repository.js';

/**
 * `cli.js logs-reset-password <username>`, the logs service's counterpart of the gateway's
 * `reset-password`: a new generated password, every session of the user ended, the username's
 * lockouts lifted (interactive and HTTP Basic), an audit row in the user's tenant; in one transaction.
 * With `removeSecondFactor` (`--remove-second-factor`) the authenticator app, recovery codes and open
 * challenges go too, audited apart; passkeys stay (a sign-in of their own, removed by an administrator
 * through DELETE /api/users/:id/passkeys/:passkeyId). Returns the password to print once.
 */
export async function resetLogsPasswordOffline(
  database: Database<LogsSchema>,
  username: string,
  now: () => number = Date.now,
  { removeSecondFactor = false }: { removeSecondFactor?: boolean } = {},
): Promise<{ password: string; secondFactorRemoved: boolean }> {
  const { db } = database;
  const users = new LogsUsersRepository(db);
  const user = await users.findByUsername(username);
  if (!user) throw new Error(`no logs user "${username}"`);
  const password = generatePassword();
  const passwordHash = await hashPassword(password);
  const at = new Date(now()).toISOString();
  const audit = new LogsAuditRepository(db, now);
  const secondFactorRemoved = await db.transaction().execute(async (trx) => {
    await users.update(user.id, { password_hash: passwordHash, updated_at: at }, trx);
    await new LogsSessionsRepository(db).revokeAllOfUser(user.id, at, trx);
    await trx
      .deleteFrom('login_failures')
      .where('key', 'in', [...new Set([...lockoutKeysOf(username), ...lockoutKeysOf(user.username)])])
      .execute();
    await audit.record(
      {
        tenantId: user.tenant_id,
        action: 'user.reset_password',
        outcome: 'success',
        actor: 'cli',
        targetType: 'user',
        targetId: user.id,
        details: { via: 'cli' },
      },
      trx,
    );
    if (!removeSecondFactor) return false;
    await trx.deleteFrom('logs_mfa_recovery_codes').where('user_id', '=', user.id).execute();
    await trx.deleteFrom('logs_mfa_challenges').where('user_id', '=', user.id).execute();
    const removed = await trx.deleteFrom('logs_mfa_totp').where('user_id', '=', user.id).executeTakeFirst();
    if (Number(removed.numDeletedRows) === 0) return false;
    await audit.record(
      {
        tenantId: user.tenant_id,
        action: 'auth.mfa_remove',
        outcome: 'success',
        actor: 'cli',
        targetType: 'user',
        targetId: user.id,
        details: { by: 'cli', username: user.username },
      },
      trx,
    );
    return true;
  });
  return { password, secondFactorRemoved };
}
