/** A clock the test moves by hand. */
export class TestClock {
  constructor(public ms = Date.now()) {}
  readonly now = (): number => this.ms;
  advance(ms: number): void {
    this.ms += ms;
  }
}
