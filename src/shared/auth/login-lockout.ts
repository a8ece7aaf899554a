import type { Kysely } from 'kysely';
import { verifyAgainstDummy, verifyPassword } from './passwords.js';
import type { RateLimitRule, RateLimitState } from './rate-limiter.js';
import { SharedRateLimiter, type LoginFailuresTable } from './shared-rate-limiter.js';

/** A login attempt, as the service's audit trail records it. */
export interface LoginAttempt<Client> {
  /** The account name as typed. */
  name: string;
  client: Client;
  /** The audit action (`auth.login`, `ingest.basic_auth`, ...). */
  action: string;
}

/** What a service tells the lockout: where its accounts are, and how it audits and answers a refusal. */
export interface LoginLockoutHooks<User, Client> {
  findUser: (name: string) => Promise<User | undefined>;
  /** The account's password hash; null for an account without a password (SSO only: nothing matches). */
  passwordHash: (user: User) => string | null;
  /** Audits an attempt refused because a limit is reached; returns the 429 to throw. */
  lockedOut: (attempt: LoginAttempt<Client>, retryAfterSeconds: number) => Promise<Error>;
  /** Audits a wrong name or password; returns the 401 to throw. */
  failed: (attempt: LoginAttempt<Client>, user: User | undefined) => Promise<Error>;
}

export interface LoginLockoutRules {
  /** Failures per account name (case-insensitive), forgotten at a good password. */
  perAccount: RateLimitRule & { prefix: string };
  /** Per client address: every attempt, or failures only; a good password does not reset it. */
  perAddress: RateLimitRule & { prefix: string; counts: 'attempts' | 'failures' };
}

/**
 * The password check of both services' logins: 429 once the account or the address has reached its
 * limit in the window (counted in the service's database, `login_failures`, so every instance
 * counts the same attempts); otherwise the same argon2 work and the same 401 whether or not the
 * account exists (an unknown name is checked against a dummy hash); every refusal audited by the
 * service; a good password forgets the account's failures.
 */
export class LoginLockout<User, Client extends { ip: string }, DB extends { login_failures: LoginFailuresTable }> {
  readonly #perAccount: SharedRateLimiter<DB>;
  readonly #perAddress: SharedRateLimiter<DB>;

  constructor(
    db: Kysely<DB>,
    private readonly rules: LoginLockoutRules,
    private readonly hooks: LoginLockoutHooks<User, Client>,
    now: () => number,
  ) {
    this.#perAccount = new SharedRateLimiter(db, rules.perAccount.prefix, rules.perAccount, now);
    this.#perAddress = new SharedRateLimiter(db, rules.perAddress.prefix, rules.perAddress, now);
  }

  /**
   * The account whose password this is; throws the service's 429 or 401 otherwise. `keepFailures`
   * (asked only once the password is right) keeps the account's failures when a second factor is
   * still to come: they are forgotten by `succeeded` once it is given, so a password known to an
   * attacker does not wipe the count of their wrong codes.
   */
  async verify(
    name: string,
    password: string,
    client: Client,
    action: string,
    options: { keepFailures?: (user: User) => Promise<boolean> | boolean } = {},
  ): Promise<User> {
    const attempt = { name, client, action };
    const account = name.toLowerCase();
    const countsAttempts = this.rules.perAddress.counts === 'attempts';
    await this.assertNotLimited(attempt, countsAttempts);
    const user = await this.hooks.findUser(name);
    const hash = user === undefined ? null : this.hooks.passwordHash(user);
    const ok = hash ? await verifyPassword(hash, password) : await verifyAgainstDummy(password);
    if (user === undefined || !ok) {
      await this.#perAccount.hit(account);
      if (!countsAttempts) await this.#perAddress.hit(client.ip);
      throw await this.hooks.failed(attempt, user);
    }
    if (!(await options.keepFailures?.(user))) await this.#perAccount.reset(account);
    return user;
  }

  /** Throws the service's 429 when the account or the address has reached its limit (before a second factor is checked). */
  async assertNotLimited(attempt: LoginAttempt<Client>, countAttempt = this.rules.perAddress.counts === 'attempts'): Promise<void> {
    const states: RateLimitState[] = [
      countAttempt ? await this.#perAddress.hit(attempt.client.ip) : await this.#perAddress.check(attempt.client.ip),
      await this.#perAccount.check(attempt.name.toLowerCase()),
    ];
    const limited = states.filter((state) => state.limited);
    // Both limits reached: the wait until both windows let the next attempt through.
    if (limited.length > 0) throw await this.hooks.lockedOut(attempt, Math.max(...limited.map((state) => state.retryAfterSeconds)));
  }

  /**
   * A refusal found past a right password (a wrong second factor, a channel the account may not use):
   * counted against the account and the address as a wrong password is.
   */
  async countFailure(name: string, client: Client): Promise<void> {
    await this.#perAccount.hit(name.toLowerCase());
    if (this.rules.perAddress.counts === 'failures') await this.#perAddress.hit(client.ip);
  }

  /** A complete sign-in (password and second factor): the account's failures are forgotten. */
  async succeeded(name: string): Promise<void> {
    await this.#perAccount.reset(name.toLowerCase());
  }
}
