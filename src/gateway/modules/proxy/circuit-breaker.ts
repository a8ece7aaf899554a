/**
 * Stops sending to an upstream that keeps failing to connect or answer: after `threshold`
 * consecutive failed calls the circuit opens and calls fail at once for `cooldownMs`; then one
 * trial call is let through (half-open): an answer closes the circuit, a failure opens it again.
 * Any answer from the upstream, whatever its status, counts as success: the breaker is about
 * reachability, not about the service's own errors.
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

  /** False when the call must not be attempted now. */
  allow(): boolean {
    if (this.threshold <= 0 || this.failures < this.threshold) return true;
    if (this.now() < this.openUntil || this.trialInFlight) return false;
    this.trialInFlight = true; // half-open: this one call decides
    return true;
  }

  succeeded(): void {
    this.failures = 0;
    this.trialInFlight = false;
  }

  failed(): void {
    this.failures += 1;
    this.trialInFlight = false;
    if (this.threshold > 0 && this.failures >= this.threshold) this.openUntil = this.now() + this.cooldownMs;
  }
}
