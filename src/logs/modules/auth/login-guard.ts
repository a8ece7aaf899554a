import type { Kysely } from 'kysely';
import { LoginLockout } from '../../../shared/auth/login-lockout.js';
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
 * Password checks for login and HTTP Basic ingestion (the shared LoginLockout): 429 once an address
 * has tried too often (every attempt counts) or a username has failed too often in the window.
 * Failures go to the audit trail of the user's tenant, or the default tenant for unknown
 * usernames. API keys are limited here too.
 */
export class LoginGuard {
  private readonly lockout: LoginLockout<LogsUsersTable, Client, LogsSchema>;
  private readonly keyFailuresPerAddress: SharedRateLimiter<LogsSchema>;

  constructor(private readonly deps: LoginGuardDeps) {
    const { loginPerAddress, loginFailuresPerUsername } = deps.config.rateLimits;
    this.lockout = new LoginLockout(
      deps.db,
      {
        perAccount: { prefix: 'username:', ...loginFailuresPerUsername },
        perAddress: { prefix: 'address:', ...loginPerAddress, counts: 'attempts' },
      },
      {
        findUser: (username) => deps.users.findByUsername(username),
        passwordHash: (user) => user.password_hash,
        lockedOut: async ({ name, client, action }, seconds) => {
          await deps.audit.record({
            tenantId: DEFAULT_TENANT_ID,
            action,
            outcome: 'failure',
            actor: name.slice(0, 128),
            ...client,
            details: { reason: 'rate_limited' },
          });
          return new AppError('LOGS_RATE_LIMITED', { headers: { 'retry-after': String(seconds) } });
        },
        failed: async ({ name, client, action }, user) => {
          await deps.audit.record({
            tenantId: user?.tenant_id ?? DEFAULT_TENANT_ID,
            action,
            outcome: 'failure',
            actorId: user?.id ?? null,
            actor: name.slice(0, 128),
            ...client,
            details: { reason: 'invalid_credentials' },
          });
          return new AppError('LOGS_INVALID_CREDENTIALS');
        },
      },
      deps.now,
    );
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

  /** Login and HTTP Basic: the shared lockout (shared/auth/login-lockout.ts). */
  verify(username: string, password: string, client: Client, action: string): Promise<LogsUsersTable> {
    return this.lockout.verify(username, password, client, action);
  }
}
