/**
 * When to start a crashed service again: 0.5 s after its first crash, doubling up to 30 s for a
 * service that keeps crashing, and back to 0.5 s once it has run for a minute. It never gives up:
 * the other service keeps serving meanwhile, and one that crashes because its database is away
 * comes back by itself once the database does (at most one attempt every 30 s).
 */
export interface RestartPolicyOptions {
  initialMs?: number;
  maxMs?: number;
  /** A run this long counts as stable: the next crash waits `initialMs` again. */
  stableMs?: number;
  now?: () => number;
}

export class RestartPolicy {
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly stableMs: number;
  private readonly now: () => number;
  private nextDelayMs: number;
  private startedAt = 0;

  constructor({ initialMs = 500, maxMs = 30_000, stableMs = 60_000, now = Date.now }: RestartPolicyOptions = {}) {
    this.initialMs = initialMs;
    this.maxMs = maxMs;
    this.stableMs = stableMs;
    this.now = now;
    this.nextDelayMs = initialMs;
  }

  /** The service was (re)started now. */
  started(): void {
    this.startedAt = this.now();
  }

  /** The service exited: how long to wait before starting it again. */
  exited(): number {
    if (this.now() - this.startedAt >= this.stableMs) this.nextDelayMs = this.initialMs;
    const delay = this.nextDelayMs;
    this.nextDelayMs = Math.min(this.maxMs, this.nextDelayMs * 2);
    return delay;
  }
}
