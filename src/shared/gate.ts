/**
 * At most `limit` callers at a time run their work; the others wait in the order they came. With a
 * limit of 1, a lock whose holder runs to its end, awaits included.
 */
export class Gate {
  #admitted = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(readonly limit: number) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.#admitted < this.limit) this.#admitted += 1;
    // A place is handed from the work that ends to the first waiting one (#leave).
    else await new Promise<void>((admit) => this.#waiting.push(admit));
    try {
      return await work();
    } finally {
      this.#leave();
    }
  }

  #leave(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#admitted -= 1;
  }
}
