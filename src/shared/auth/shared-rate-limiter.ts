import { sql, type Kysely } from 'kysely';
import type { RateLimitRule, RateLimitState } from './rate-limiter.js';

/** The counters' table, which each service's migrations create (`login_failures`). */
export interface LoginFailuresTable {
  /** A rule's prefix and the key: `account:<no_pegawai>`, `address:<ip>`, ... */
  key: string;
  count: number;
  /** End of the window, epoch ms. */
  reset_at: number;
}

interface CountersSchema {
  login_failures: LoginFailuresTable;
}

/**
 * Fixed-window counters in a service's database, so that every instance behind the load balancer
 * counts the same login failures (the in-memory RateLimiter counts per process). One table for all
 * counters; `prefix` keeps each rule's keys apart. For login attempts and failures, not for the hot
 * path: each check is a read, each counted event an upsert.
 */
/** Expired windows are deleted at most this often per limiter (not on every counted event). */
const SWEEP_EVERY_MS = 60_000;

export class SharedRateLimiter<DB extends CountersSchema> {
  private readonly db: Kysely<CountersSchema>;
  private sweptAt = 0;

  constructor(
    db: Kysely<DB>,
    private readonly prefix: string,
    private readonly rule: RateLimitRule,
    private readonly now: () => number,
  ) {
    // Kysely is invariant in its schema; any schema with the table will do.
    this.db = db as unknown as Kysely<CountersSchema>;
  }

  /** Whether the key is over its limit, without counting an event. */
  async check(key: string): Promise<RateLimitState> {
    const row = await this.db
      .selectFrom('login_failures')
      .select(['count', 'reset_at'])
      .where('key', '=', this.prefix + key)
      .executeTakeFirst();
    const now = this.now();
    if (!row || Number(row.reset_at) <= now) return { limited: false, retryAfterSeconds: 1 };
    return { limited: row.count >= this.rule.limit, retryAfterSeconds: Math.max(1, Math.ceil((Number(row.reset_at) - now) / 1000)) };
  }

  /** Counts one event (one atomic upsert, so concurrent events on several instances all count) and reports the state after it. */
  async hit(key: string): Promise<RateLimitState> {
    const now = this.now();
    const resetAt = now + this.rule.windowMs;
    const row = await this.db
      .insertInto('login_failures')
      .values({ key: this.prefix + key, count: 1, reset_at: resetAt })
      .onConflict((oc) =>
        oc.column('key').doUpdateSet({
          count: sql`case when login_failures.reset_at <= ${now} then 1 else login_failures.count + 1 end`,
          reset_at: sql`case when login_failures.reset_at <= ${now} then ${resetAt} else login_failures.reset_at end`,
        }),
      )
      .returning(['count', 'reset_at'])
      .executeTakeFirstOrThrow();
    // Expired windows of any key go too, now and then, so the table holds only live counters.
    if (now - this.sweptAt >= SWEEP_EVERY_MS) {
      this.sweptAt = now;
      await this.db.deleteFrom('login_failures').where('reset_at', '<=', now).execute();
    }
    return { limited: row.count > this.rule.limit, retryAfterSeconds: Math.max(1, Math.ceil((Number(row.reset_at) - now) / 1000)) };
  }

  async reset(key: string): Promise<void> {
    await this.db
      .deleteFrom('login_failures')
      .where('key', '=', this.prefix + key)
      .execute();
  }
}
