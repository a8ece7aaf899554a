/**
 * Fixed-window counters in memory, per key (a user, a tenant). Used for the logs service's API and
 * ingestion rate limits, on the hot path. Per process: behind a load balancer each instance counts
 * on its own, which bounds a client to (limit x instances) per window. Login lockouts use
 * SharedRateLimiter (in the database) instead.
 */
export interface RateLimitRule {
  /** Events allowed per window. */
  readonly limit: number;
  readonly windowMs: number;
}

export interface RateLimitState {
  readonly limited: boolean;
  /** Seconds until the window resets (for Retry-After), at least 1. */
  readonly retryAfterSeconds: number;
}

interface Window {
  count: number;
  resetAt: number;
}

export class RateLimiter {
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly rule: RateLimitRule,
    private readonly now: () => number = Date.now,
    private readonly maxKeys = 100_000,
  ) {}

  /** Whether the key is over its limit, without counting an event. */
  check(key: string): RateLimitState {
    const window = this.current(key);
    return this.state(window);
  }

  /** Counts one event and reports the state after it. */
  hit(key: string): RateLimitState {
    let window = this.current(key);
    if (!window) {
      if (this.windows.size >= this.maxKeys) this.sweep();
      window = { count: 0, resetAt: this.now() + this.rule.windowMs };
      this.windows.set(key, window);
    }
    window.count += 1;
    return this.state(window, 1);
  }

  reset(key: string): void {
    this.windows.delete(key);
  }

  private current(key: string): Window | undefined {
    const window = this.windows.get(key);
    if (window && window.resetAt <= this.now()) {
      this.windows.delete(key);
      return undefined;
    }
    return window;
  }

  /** `slack` lets the event that reaches the limit through; the next one is refused. */
  private state(window: Window | undefined, slack = 0): RateLimitState {
    if (!window) return { limited: false, retryAfterSeconds: 0 };
    return {
      limited: window.count > this.rule.limit - 1 + slack,
      retryAfterSeconds: Math.max(1, Math.ceil((window.resetAt - this.now()) / 1000)),
    };
  }

  private sweep(): void {
    const now = this.now();
    for (const [key, window] of this.windows) if (window.resetAt <= now) this.windows.delete(key);
    // Still full (a flood of distinct keys): drop the oldest half rather than grow without bound.
    if (this.windows.size >= this.maxKeys) {
      let drop = Math.floor(this.maxKeys / 2);
      for (const key of this.windows.keys()) {
        if (drop-- <= 0) break;
        this.windows.delete(key);
      }
    }
  }
}
