/**
 * At most `limit` holders at a time; the others wait in the order they came. With a limit of 1, a
 * lock whose holder keeps it across awaits.
 */
export class Gate {
  #admitted = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(readonly limit: number) {}

  /** Waits for a place; resolves to the function that frees it (once, however often it is called). */
  async enter(): Promise<() => void> {
    if (this.#admitted < this.limit) this.#admitted += 1;
    // A place is handed from the holder that leaves to the first waiting one (#leave).
    else await new Promise<void>((admit) => this.#waiting.push(admit));
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.#leave();
    };
  }

  /** `work` holding a place, which it frees when it ends, failed or not. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    const leave = await this.enter();
    try {
      return await work();
    } finally {
      leave();
    }
  }

  #leave(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#admitted -= 1;
  }
}
