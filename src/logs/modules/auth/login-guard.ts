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
 * How a password arrives: an interactive login (`/api/auth/login`), or HTTP Basic on every request of a
 * shipper or data source. Each has counters of its own: a shipper still sending an old password
 * locks out its own Basic credential, never the same user's interactive login (the administrator's
 * way in), and a login typed wrong never stops ingestion.
 */
type PasswordChannel = 'login' | 'basic';

const BASIC_AUTH_ACTION = 'ingest.basic_auth';

const PREFIXES: Record<PasswordChannel, { address: string; username: string }> = {
  login: { address: 'address:', username: 'username:' },
  basic: { address: 'basic-address:', username: 'basic-username:' },
};

/** The `login_failures` keys of a username's lockouts, on every channel: what an operator's password reset clears. */
export function lockoutKeysOf(username: string): string[] {
  return [...Object.values(PREFIXES).map((prefixes) => prefixes.username), 'mfa-username:'].map(
    (prefix) => prefix + username.toLowerCase(),
  );
}

/**
 * Password checks for login and HTTP Basic (the shared LoginLockout, one per PasswordChannel): 429
 * once an address has tried too often (every attempt counts) or a username has failed too often in
 * the window. Failures go to the audit trail of the user's tenant, or the default tenant for unknown
 * usernames. API keys are limited here too.
 */
export class LoginGuard {
  private readonly lockouts: Record<PasswordChannel, LoginLockout<LogsUsersTable, Client, LogsSchema>>;
  private readonly keyFailuresPerAddress: SharedRateLimiter<LogsSchema>;
  /** Login attempts per address (the password channel's counter). */
  private readonly loginAttemptsPerAddress: SharedRateLimiter<LogsSchema>;
  /** Wrong login codes counted toward the account's lockout (the password channel's counter). */
  private readonly loginFailuresPerUsername: SharedRateLimiter<LogsSchema>;
  /** The same failures, forgotten only at a good second factor (a good password alone does not). */
  private readonly secondFactorFailuresPerUsername: SharedRateLimiter<LogsSchema>;

  constructor(private readonly deps: LoginGuardDeps) {
    const { loginPerAddress, loginFailuresPerUsername } = deps.config.rateLimits;
    const lockoutOf = ({ address, username }: { address: string; username: string }) =>
      new LoginLockout<LogsUsersTable, Client, LogsSchema>(
        deps.db,
        {
          perAccount: { prefix: username, ...loginFailuresPerUsername },
          perAddress: { prefix: address, ...loginPerAddress, counts: 'attempts' },
        },
        {
          findUser: (name) => deps.users.findByUsername(name),
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
    this.lockouts = { login: lockoutOf(PREFIXES.login), basic: lockoutOf(PREFIXES.basic) };
    this.keyFailuresPerAddress = new SharedRateLimiter(deps.db, 'apikey-address:', loginPerAddress, deps.now);
    this.loginAttemptsPerAddress = new SharedRateLimiter(deps.db, PREFIXES.login.address, loginPerAddress, deps.now);
    this.loginFailuresPerUsername = new SharedRateLimiter(deps.db, PREFIXES.login.username, loginFailuresPerUsername, deps.now);
    this.secondFactorFailuresPerUsername = new SharedRateLimiter(deps.db, 'mfa-username:', loginFailuresPerUsername, deps.now);
  }

  /**
   * 429 once wrong second-factor codes of the account reached the lockout limit: checked before the
   * password (whoever the name belongs to, so it says nothing about the account) and before a code.
   * Someone holding the password cannot go on guessing codes by signing in again between guesses.
   */
  async assertSecondFactorOpen(username: string, client: Client, action: string): Promise<void> {
    const account = username.toLowerCase();
    const states = [await this.secondFactorFailuresPerUsername.check(account), await this.loginFailuresPerUsername.check(account)];
    const limited = states.filter((state) => state.limited);
    if (limited.length === 0) return;
    await this.deps.audit.record({
      tenantId: DEFAULT_TENANT_ID,
      action,
      outcome: 'failure',
      actor: username.slice(0, 128),
      ...client,
      details: { reason: 'rate_limited' },
    });
    const seconds = Math.max(...limited.map((state) => state.retryAfterSeconds));
    throw new AppError('LOGS_RATE_LIMITED', { headers: { 'retry-after': String(seconds) } });
  }

  /** A sign-in attempt that names no account (a passkey ceremony): counted per address as every login is; 429 at the limit. */
  async countAttempt(client: Client): Promise<void> {
    const state = await this.loginAttemptsPerAddress.hit(client.ip);
    if (state.limited) throw new AppError('LOGS_RATE_LIMITED', { headers: { 'retry-after': String(state.retryAfterSeconds) } });
  }

  /** A wrong second-factor code: one failure toward the account's lockout. */
  async secondFactorFailed(username: string): Promise<void> {
    const account = username.toLowerCase();
    await this.loginFailuresPerUsername.hit(account);
    await this.secondFactorFailuresPerUsername.hit(account);
  }

  /** A good second factor: the account's failures are forgotten. */
  async secondFactorPassed(username: string): Promise<void> {
    const account = username.toLowerCase();
    await this.loginFailuresPerUsername.reset(account);
    await this.secondFactorFailuresPerUsername.reset(account);
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

  /** An interactive login's password: the shared lockout (shared/auth/login-lockout.ts) on the login channel's counters. */
  verify(username: string, password: string, client: Client): Promise<LogsUsersTable> {
    return this.lockouts.login.verify(username, password, client, 'auth.login');
  }

  /**
   * HTTP Basic, on the Basic channel's counters. A right password of an account that a password alone
   * does not stand for (it has, or must have, a second factor) gets the same 401 as a wrong one (more
   * would tell whoever tries that the password is right), audited with why, and counts as a failure:
   * a shipper left on such an account locks out its own Basic credential (not the interactive login),
   * and the lockout's 429 ends the password work it causes, as for a wrong password.
   */
  async verifyBasic(
    username: string,
    password: string,
    client: Client,
    passwordAlone: (user: LogsUsersTable) => Promise<boolean>,
  ): Promise<LogsUsersTable> {
    let alone = true;
    const lockout = this.lockouts.basic;
    const user = await lockout.verify(username, password, client, BASIC_AUTH_ACTION, {
      keepFailures: async (found) => !(alone = await passwordAlone(found)),
    });
    if (alone) return user;
    await lockout.countFailure(username, client);
    await this.deps.audit.record({
      tenantId: user.tenant_id,
      action: BASIC_AUTH_ACTION,
      outcome: 'failure',
      actorId: user.id,
      actor: username.slice(0, 128),
      ...client,
      details: { reason: 'second_factor_required' },
    });
    throw new AppError('LOGS_INVALID_CREDENTIALS');
  }
}
