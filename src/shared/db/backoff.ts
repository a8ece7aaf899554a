/**
 * Delays between attempts to reach something that went away (a database connection): doubling from
 * `initialMs` up to `maxMs`, each drawn at random from its upper half ("equal jitter"), so that the
 * instances that lost the same server at the same moment do not all come back at the same moment.
 */
export class Backoff {
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly random: () => number;
  private attempt = 0;

  constructor({
    initialMs = 100,
    maxMs = 5_000,
    random = Math.random,
  }: { initialMs?: number; maxMs?: number; random?: () => number } = {}) {
    this.initialMs = initialMs;
    this.maxMs = maxMs;
    this.random = random;
  }

  /** How long to wait before the next attempt; each call is one more attempt. */
  next(): number {
    const ceiling = Math.min(this.maxMs, this.initialMs * 2 ** Math.min(this.attempt, 30));
    this.attempt += 1;
    return Math.round(ceiling / 2 + this.random() * (ceiling / 2));
  }

  /** The thing came back: the next loss starts from `initialMs` again. */
  reset(): void {
    this.attempt = 0;
  }
}
