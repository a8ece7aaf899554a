/**
 * The outcome of one call let through. The relay reports at most one verdict (succeeded or failed)
 * a call, then released; a half-open trial's reporter also ignores reports after its first.
 */
export interface BreakerCall {
  /** The upstream answered (whatever the status). */
  succeeded(): void;
  /** The upstream could not be reached or did not answer. */
  failed(): void;
  /**
   * The call ended without saying anything about the upstream (the client left, the request body
   * broke): a half-open trial that ends so lets the next call be the trial.
   */
  released(): void;
}

/**
 * Stops sending to an upstream that keeps failing to connect or answer: after `threshold`
 * consecutive failed calls the circuit opens and calls fail at once for `cooldownMs`; then one
 * trial call is let through (half-open): an answer closes the circuit, a failure opens it again,
 * and a trial that ends with neither (released) frees the slot for the next call. Any answer from
 * the upstream, whatever its status, counts as success: the breaker is about reachability, not
 * about the service's own errors.
 */
export class CircuitBreaker {
  private failures = 0;
  private openUntil = 0;
  private trialInFlight = false;

  constructor(
    private readonly threshold: number,
    private readonly cooldownMs: number,
    private readonly now: () => number,
  ) {}

  /** 'closed', 'open' (calls refused) or 'half-open' (cooldown over: the next call, or the one in flight, is the trial). */
  get state(): 'closed' | 'open' | 'half-open' {
    if (this.threshold <= 0 || this.failures < this.threshold) return 'closed';
    return this.now() < this.openUntil ? 'open' : 'half-open';
  }

  /**
   * The reporter of calls made while the circuit is closed, one for all of them: such a call is no
   * trial, so reporting twice cannot free a slot twice, and the relay reports succeeded or failed
   * at most once a call. Nothing is made per request.
   */
  private readonly closedCall: BreakerCall = {
    succeeded: () => void (this.failures = 0),
    failed: () => this.failedOnce(),
    released: () => {},
  };

  private failedOnce(): void {
    this.failures += 1;
    if (this.threshold > 0 && this.failures >= this.threshold) this.openUntil = this.now() + this.cooldownMs;
  }

  /** The call's outcome reporter, or undefined when the call must not be attempted now. */
  enter(): BreakerCall | undefined {
    const state = this.state;
    if (state === 'closed') return this.closedCall;
    if (state === 'open' || this.trialInFlight) return undefined;
    this.trialInFlight = true; // half-open: this one call decides
    return this.trialCall();
  }

  private trialCall(): BreakerCall {
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      this.trialInFlight = false;
      outcome();
    };
    return {
      succeeded: () => settle(() => (this.failures = 0)),
      failed: () => settle(() => this.failedOnce()),
      released: () => settle(() => {}),
    };
  }
}
