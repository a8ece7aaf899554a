import { sql, type Kysely } from 'kysely';
import type { RateLimitRule, RateLimitState } from '../../../shared/auth/rate-limiter.js';
import type { GatewaySchema } from '../../db/schema.js';

/**
 * Fixed-window failure counters in the gateway database, so that every instance behind the load
 * balancer counts the same login failures (the in-memory RateLimiter counts per process). One
 * table for all counters; `prefix` keeps each rule's keys apart. Written only on failures, read on
 * each attempt: login is not a hot path.
 */
export class SharedRateLimiter {
  constructor(
    private readonly db: Kysely<GatewaySchema>,
    private readonly prefix: string,
    private readonly rule: RateLimitRule,
    private readonly now: () => number,
  ) {}

  /** Whether the key is over its limit, without counting an event. */
  async check(key: string): Promise<RateLimitState> {
    const row = await this.db.selectFrom('login_failures').select(['count', 'reset_at']).where('key', '=', this.prefix + key).executeTakeFirst();
    const now = this.now();
    if (!row || Number(row.reset_at) <= now) return { limited: false, retryAfterSeconds: 1 };
    return { limited: row.count >= this.rule.limit, retryAfterSeconds: Math.max(1, Math.ceil((Number(row.reset_at) - now) / 1000)) };
  }

  /** Counts one event: one atomic upsert, so concurrent failures on several instances all count. */
  async hit(key: string): Promise<void> {
    const now = this.now();
    const resetAt = now + this.rule.windowMs;
    await this.db
      .insertInto('login_failures')
      .values({ key: this.prefix + key, count: 1, reset_at: resetAt })
      .onConflict((oc) =>
        oc.column('key').doUpdateSet({
          count: sql`case when login_failures.reset_at <= ${now} then 1 else login_failures.count + 1 end`,
          reset_at: sql`case when login_failures.reset_at <= ${now} then ${resetAt} else login_failures.reset_at end`,
        }),
      )
      .execute();
    // Expired windows of any key go too, so the table holds only live counters.
    await this.db.deleteFrom('login_failures').where('reset_at', '<=', now).execute();
  }

  async reset(key: string): Promise<void> {
    await this.db.deleteFrom('login_failures').where('key', '=', this.prefix + key).execute();
  }
}
