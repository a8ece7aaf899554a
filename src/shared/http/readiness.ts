/** A named reason a service is not ready, with what an operator needs to know about it (no secrets). */
export interface NotReadyReason {
  reason: string;
  /** Epoch ms when it was raised. */
  since: number;
  detail?: Readonly<Record<string, unknown>>;
}

/**
 * Why the service should get no traffic now: a small set of named reasons that any part raises and
 * clears (`draining` during a stop, `storage` while the disk is full or read-only, ...). `/readyz`
 * answers 503 with the reasons while any is raised (health.ts). Raising a reason again replaces
 * its detail and keeps its `since`.
 */
export class Readiness {
  readonly #reasons = new Map<string, NotReadyReason>();

  constructor(private readonly now: () => number = Date.now) {}

  set(reason: string, detail?: Readonly<Record<string, unknown>>): void {
    const since = this.#reasons.get(reason)?.since ?? this.now();
    this.#reasons.set(reason, detail === undefined ? { reason, since } : { reason, since, detail });
  }

  clear(reason: string): void {
    this.#reasons.delete(reason);
  }

  has(reason: string): boolean {
    return this.#reasons.has(reason);
  }

  /** The reasons raised now, in the order they were first raised. */
  reasons(): NotReadyReason[] {
    return [...this.#reasons.values()].map((reason) => ({ ...reason }));
  }
}

/** The reasons as `/readyz` shows them: `{reason, since (ISO 8601), ...detail}`. */
export function shownReasons(reasons: readonly NotReadyReason[]): Record<string, unknown>[] {
  return reasons.map(({ reason, since, detail }) => ({ ...detail, reason, since: new Date(since).toISOString() }));
}
