import { verifyAgainstDummy, verifyPassword } from '../../../shared/auth/passwords.js';
import type { Kysely } from 'kysely';
import { SharedRateLimiter } from '../../../shared/auth/shared-rate-limiter.js';
import { AppError } from '../../../shared/errors/app-error.js';
import type { LogsConfig } from '../../config.js';
import type { LogsSchema, LogsUsersTable } from '../../db/schema.js';
import type { LogsAuditRepository } from '../audit/audit.repository.js';
import { DEFAULT_TENANT_ID } from '../rbac/permissions.js';
import type { LogsUsersRepository } from '../users/users.repository.js';
import type { Client } from './client.js';

export interface LoginGuardDeps {
  users: LogsUsersRepository;
  audit: LogsAuditRepository;
  db: Kysely<LogsSchema>;
  config: LogsConfig;
  now: () => number;
}

/**
 * How a password arrives: an interactive login (`/api/auth/login`), or HTTP Basic on every request of a
 * shipper or data source. Each has counters of its own: a shipper still sending an old password
 * locks out its own Basic credential, never the same user's interactive login (the administrator's
 * way in), and a login typed wrong never stops ingestion.
 */
export type PasswordChannel = 'login' | 'basic';

const PREFIXES: Record<PasswordChannel, { address: string; username: string }> = {
  login: { address: 'address:', username: 'username:' },
  basic: { address: 'basic-address:', username: 'basic-username:' },
};

/** The `login_failures` keys of a username's lockouts, on every channel: what an operator's password reset clears. */
export function lockoutKeysOf(username: string): string[] {
  return Object.values(PREFIXES).map((prefixes) => prefixes.username + username.toLowerCase());
}

/**
 * Password checks for login and HTTP Basic: the same 401 and the same argon2 work whether or not the
 * account exists; 429 once an address has tried too often or a username has failed too often in the
 * window, counted per channel (PasswordChannel). The counters are in the database, so every instance
 * counts the same attempts. Failures go to the audit trail (of the user's tenant, or the default
 * tenant for unknown usernames).
 */
export class LoginGuard {
  private readonly limiters: Record<
    PasswordChannel,
    { attemptsPerAddress: SharedRateLimiter<LogsSchema>; failuresPerUsername: SharedRateLimiter<LogsSchema> }
  >;
  private readonly keyFailuresPerAddress: SharedRateLimiter<LogsSchema>;

  constructor(private readonly deps: LoginGuardDeps) {
    const { loginPerAddress, loginFailuresPerUsername } = deps.config.rateLimits;
    const limitersOf = ({ address, username }: { address: string; username: string }) => ({
      attemptsPerAddress: new SharedRateLimiter(deps.db, address, loginPerAddress, deps.now),
      failuresPerUsername: new SharedRateLimiter(deps.db, username, loginFailuresPerUsername, deps.now),
    });
    this.limiters = { login: limitersOf(PREFIXES.login), basic: limitersOf(PREFIXES.basic) };
    this.keyFailuresPerAddress = new SharedRateLimiter(deps.db, 'apikey-address:', loginPerAddress, deps.now);
  }

  /**
   * API keys, limited like logins: an address whose wrong keys reach the login limit gets 429 until
   * the window ends (valid keys do not count). A wrong, revoked or expired key is a 401 that says
   * no more than that, and is audited.
   */
  async verifyApiKey<T extends { tenant_id: string }>(
    encoded: string,
    client: Client,
    verify: (encoded: string) => Promise<T | undefined>,
  ): Promise<T> {
    const state = await this.keyFailuresPerAddress.check(client.ip);
    if (state.limited) throw new AppError('LOGS_RATE_LIMITED', { headers: { 'retry-after': String(state.retryAfterSeconds) } });
    const key = await verify(encoded);
    if (key) return key;
    await this.keyFailuresPerAddress.hit(client.ip);
    await this.deps.audit.record({
      tenantId: DEFAULT_TENANT_ID,
      action: 'api_key.authenticate',
      outcome: 'failure',
      ...client,
      details: { reason: 'invalid_credentials' },
    });
    throw new AppError('LOGS_INVALID_CREDENTIALS');
  }

  async verify(username: string, password: string, client: Client, action: string, channel: PasswordChannel): Promise<LogsUsersTable> {
    const { attemptsPerAddress, failuresPerUsername } = this.limiters[channel];
    const usernameKey = username.toLowerCase();
    const addressState = await attemptsPerAddress.hit(client.ip);
    const usernameState = await failuresPerUsername.check(usernameKey);
    const refused = addressState.limited ? addressState : usernameState.limited ? usernameState : undefined;
    if (refused) {
      await this.deps.audit.record({
        tenantId: DEFAULT_TENANT_ID,
        action,
        outcome: 'failure',
        actor: username.slice(0, 128),
        ...client,
        details: { reason: 'rate_limited' },
      });
      throw new AppError('LOGS_RATE_LIMITED', { headers: { 'retry-after': String(refused.retryAfterSeconds) } });
    }
    const user = await this.deps.users.findByUsername(username);
    const ok = user ? await verifyPassword(user.password_hash, password) : await verifyAgainstDummy(password);
    if (!user || !ok) {
      await failuresPerUsername.hit(usernameKey);
      await this.deps.audit.record({
        tenantId: user?.tenant_id ?? DEFAULT_TENANT_ID,
        action,
        outcome: 'failure',
        actorId: user?.id ?? null,
        actor: username.slice(0, 128),
        ...client,
        details: { reason: 'invalid_credentials' },
      });
      throw new AppError('LOGS_INVALID_CREDENTIALS');
    }
    await failuresPerUsername.reset(usernameKey);
    return user;
  }
}
