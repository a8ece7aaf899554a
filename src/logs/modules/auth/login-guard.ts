import { verifyAgainstDummy, verifyPassword } from '../../../shared/auth/passwords.js';
import { RateLimiter } from '../../../shared/auth/rate-limiter.js';
import { AppError } from '../../../shared/errors/app-error.js';
import type { LogsConfig } from '../../config.js';
import type { LogsUsersTable } from '../../db/schema.js';
import type { LogsAuditRepository } from '../audit/audit.repository.js';
import { DEFAULT_TENANT_ID } from '../rbac/permissions.js';
import type { LogsUsersRepository } from '../users/users.repository.js';
import type { Client } from './authenticate.js';

/**
 * Password checks for login and HTTP Basic ingestion: the same 401 and the same argon2 work whether
 * or not the account exists; 429 once an address has tried too often or a username has failed too
 * often in the window. Failures go to the audit trail (of the user's tenant, or the default tenant
 * for unknown usernames).
 */
export class LoginGuard {
  private readonly attemptsPerAddress: RateLimiter;
  private readonly failuresPerUsername: RateLimiter;

  constructor(
    config: LogsConfig,
    private readonly users: LogsUsersRepository,
    private readonly audit: LogsAuditRepository,
    now: () => number,
  ) {
    this.attemptsPerAddress = new RateLimiter(config.rateLimits.loginPerAddress, now);
    this.failuresPerUsername = new RateLimiter(config.rateLimits.loginFailuresPerUsername, now);
  }

  async verify(username: string, password: string, client: Client, action: string): Promise<LogsUsersTable> {
    const usernameKey = username.toLowerCase();
    const addressState = this.attemptsPerAddress.hit(client.ip);
    const usernameState = this.failuresPerUsername.check(usernameKey);
    const refused = addressState.limited ? addressState : usernameState.limited ? usernameState : undefined;
    if (refused) {
      await this.audit.record({ tenantId: DEFAULT_TENANT_ID, action, outcome: 'failure', actor: username.slice(0, 128), ...client, details: { reason: 'rate_limited' } });
      throw new AppError('LOGS_RATE_LIMITED', { headers: { 'retry-after': String(refused.retryAfterSeconds) } });
    }
    const user = await this.users.findByUsername(username);
    const ok = user ? await verifyPassword(user.password_hash, password) : await verifyAgainstDummy(password);
    if (!user || !ok) {
      this.failuresPerUsername.hit(usernameKey);
      await this.audit.record({
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
    this.failuresPerUsername.reset(usernameKey);
    return user;
  }
}
