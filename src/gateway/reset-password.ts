import { generatePassword } from '../shared/auth/password-policy.js';
import { hashPassword } from '../shared/auth/passwords.js';
import type { Database } from '../shared/db/database.js';
import type { GatewaySchema } from './db/schema.js';
import { AuditRepository } from './modules/audit/audit.repository.js';
import { accountLockoutKey } from './modules/auth/auth.service.js';
import { SessionsRepository } from './modules/auth/sessions.repository.js';
import { MfaRepository } from './modules/mfa/mfa.repository.js';
import { UsersRepository } from './modules/users/users.repository.js';

/**
 * `cli.js reset-password <no_pegawai>`, for an operator locked out of every administrator account:
 * a new generated password, every session of the user ended, the account's login lockout lifted
 * (the new password works at once), an audit row; in one transaction. With `removeSecondFactor`
 * (`--remove-second-factor`: an administrator who lost the phone and the recovery codes, as
 * Keycloak's "reset OTP") the authenticator and recovery codes go too, audited apart; never silently.
 * Returns the password to print once, and whether a second factor was removed.
 */
export async function resetPasswordOffline(
  database: Database<GatewaySchema>,
  noPegawai: string,
  now: () => number = Date.now,
  { removeSecondFactor = false }: { removeSecondFactor?: boolean } = {},
): Promise<{ password: string; secondFactorRemoved: boolean }> {
  const { db } = database;
  const users = new UsersRepository(db, database.dialect);
  const user = await users.findByNoPegawai(noPegawai);
  if (!user) throw new Error(`no user with no_pegawai "${noPegawai}"`);
  const password = generatePassword();
  const passwordHash = await hashPassword(password);
  const at = new Date(now()).toISOString();
  const audit = new AuditRepository(db, now);
  const secondFactorRemoved = await db.transaction().execute(async (trx) => {
    await users.update(user.id, { password_hash: passwordHash, password_changed_at: at, updated_at: at }, trx);
    await new SessionsRepository(db).revokeAllOfUser(user.id, at, trx);
    const keys = [...new Set([accountLockoutKey(noPegawai), accountLockoutKey(user.no_pegawai)])];
    await trx.deleteFrom('login_failures').where('key', 'in', keys).execute();
    await audit.record(
      { action: 'user.reset_password', outcome: 'success', actor: 'cli', targetType: 'user', targetId: user.id, details: { via: 'cli' } },
      trx,
    );
    if (!removeSecondFactor || !(await new MfaRepository(db).removeAll(user.id, trx))) return false;
    await audit.record(
      { action: 'auth.mfa_remove', outcome: 'success', actor: 'cli', targetType: 'user', targetId: user.id, details: { by: 'cli' } },
      trx,
    );
    return true;
  });
  return { password, secondFactorRemoved };
}
