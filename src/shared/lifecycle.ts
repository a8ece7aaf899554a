import type { FastifyBaseLogger, FastifyInstance } from 'fastify';

interface Part {
  name: string;
  close: () => Promise<void> | void;
}

/**
 * What a service runs beside its routes (timers, loops, pools, the database) and how it stops.
 * Parts close in the order they were added, when the app closes: add a part after what it still
 * needs while closing (a job that flushes to the database after the database). Fastify runs its
 * own onClose hooks last-added first, which made the order a matter of comments; here it is the
 * order of the `add` calls. A part that fails to close is logged and the others still close.
 */
export class Lifecycle {
  readonly #parts: Part[] = [];

  constructor(
    app: FastifyInstance,
    private readonly log: FastifyBaseLogger,
  ) {
    app.addHook('onClose', async () => this.closeAll());
  }

  /** A part to close with the app, after the parts added before it. */
  add(name: string, close: () => Promise<void> | void): void {
    this.#parts.push({ name, close });
  }

  /** Runs `run` every `intervalMs` (not keeping the process alive) until the app closes; failures are logged. */
  every(name: string, intervalMs: number, run: () => Promise<unknown>, onClose?: () => Promise<void>): void {
    const timer = setInterval(() => {
      run().catch((error: unknown) => this.log.error({ err: error, job: name }, `${name} failed`));
    }, intervalMs);
    timer.unref();
    this.add(name, async () => {
      clearInterval(timer);
      await onClose?.();
    });
  }

  async closeAll(): Promise<void> {
    for (const part of this.#parts.splice(0)) {
      try {
        await part.close();
      } catch (error) {
        this.log.error({ err: error, part: part.name }, 'closing failed');
      }
    }
  }
}
