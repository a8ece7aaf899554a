/**
 * When to start a crashed process again, for both supervisors (`all`'s services, the gateway's
 * workers): 0.5 s after its first crash, doubling up to 30 s while it keeps crashing, and back to
 * 0.5 s once it has run for a minute. With `giveUp`, more than `exits` crashes within `windowMs`
 * mean something is wrong with every start (a bad deploy, the database away for good) and the
 * supervisor stops instead, so that its own service manager sees the failure.
 */
export interface RestartPolicyOptions {
  initialMs?: number;
  maxMs?: number;
  /** A run this long counts as stable: the next crash waits `initialMs` again. */
  stableMs?: number;
  /** Undefined: never give up. */
  giveUp?: { exits: number; windowMs: number } | undefined;
  now?: () => number;
}

export const GIVE_UP = 'give up';

export class RestartPolicy {
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly stableMs: number;
  private readonly giveUp: RestartPolicyOptions['giveUp'];
  private readonly now: () => number;
  private nextDelayMs: number;
  private startedAt = 0;
  private readonly exits: number[] = [];

  constructor({ initialMs = 500, maxMs = 30_000, stableMs = 60_000, giveUp, now = Date.now }: RestartPolicyOptions = {}) {
    this.initialMs = initialMs;
    this.maxMs = maxMs;
    this.stableMs = stableMs;
    this.giveUp = giveUp;
    this.now = now;
    this.nextDelayMs = initialMs;
  }

  /** A process was (re)started now. */
  started(): void {
    this.startedAt = this.now();
  }

  /** A process exited unasked: how long to wait before starting it again, or GIVE_UP. */
  exited(): number | typeof GIVE_UP {
    const now = this.now();
    if (this.giveUp) {
      this.exits.push(now);
      while (this.exits.length > 0 && this.exits[0]! <= now - this.giveUp.windowMs) this.exits.shift();
      if (this.exits.length > this.giveUp.exits) return GIVE_UP;
    }
    if (now - this.startedAt >= this.stableMs) this.nextDelayMs = this.initialMs;
    const delay = this.nextDelayMs;
    this.nextDelayMs = Math.min(this.maxMs, this.nextDelayMs * 2);
    return delay;
  }
}

/** setTimeout, injectable so that a test sees the back-off without waiting for it. */
export type Schedule = (run: () => void, delayMs: number) => { cancel(): void };

export const realSchedule: Schedule = (run, delayMs) => {
  const timer = setTimeout(run, delayMs);
  return { cancel: () => clearTimeout(timer) };
};
