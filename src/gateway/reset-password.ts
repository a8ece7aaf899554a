import { generatePassword } from '../shared/auth/password-policy.js';
import { hashPassword } from '../shared/auth/passwords.js';
import type { Database } from '../shared/db/database.js';
import type { GatewaySchema } from './db/schema.js';
import { AuditRepository } from './modules/audit/audit.repository.js';
import { accountLockoutKey } from './modules/auth/auth.service.js';
import { SessionsRepository } from './modules/auth/sessions.repository.js';
import { UsersRepository } from './modules/users/users.repository.js';

/**
 * `cli.js reset-password <no_pegawai>`, for an operator locked out of every administrator account:
 * a new generated password, every session of the user ended, the account's login lockout lifted
 * (the new password works at once), an audit row; in one transaction.
 * Returns the password to print once.
 */
export async function resetPasswordOffline(
  database: Database<GatewaySchema>,
  noPegawai: string,
  now: () => number = Date.now,
): Promise<string> {
  const { db } = database;
  const users = new UsersRepository(db, database.dialect);
  const user = await users.findByNoPegawai(noPegawai);
  if (!user) throw new Error(`no user with no_pegawai "${noPegawai}"`);
  const password = generatePassword();
  const passwordHash = await hashPassword(password);
  const at = new Date(now()).toISOString();
  await db.transaction().execute(async (trx) => {
    await users.update(user.id, { password_hash: passwordHash, password_changed_at: at, updated_at: at }, trx);
    await new SessionsRepository(db).revokeAllOfUser(user.id, at, trx);
    const keys = [...new Set([accountLockoutKey(noPegawai), accountLockoutKey(user.no_pegawai)])];
    await trx.deleteFrom('login_failures').where('key', 'in', keys).execute();
    await new AuditRepository(db, now).record(
      { action: 'user.reset_password', outcome: 'success', actor: 'cli', targetType: 'user', targetId: user.id, details: { via: 'cli' } },
      trx,
    );
  });
  return password;
}
