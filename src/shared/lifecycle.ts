import type { FastifyBaseLogger, FastifyInstance } from 'fastify';

/** A repeating timer; injectable, so that a test fires the ticks itself. */
export type Ticker = (tick: () => void, intervalMs: number) => { stop(): void };

/** setInterval, unref'd: background work never keeps the process alive. */
export const realTicker: Ticker = (tick, intervalMs) => {
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
};

/** Work a service runs every `intervalMs` beside its routes (Lifecycle.every). */
export interface Job {
  /** Its failures are logged as `<name> failed`. */
  name: string;
  /** 0 or less: it never runs (its `close` still runs). */
  intervalMs: number;
  run: () => Promise<unknown>;
  /** Runs at start too, not only once the first interval has passed. */
  runAtStart?: boolean;
  /** Runs once the last run has finished, before the next part closes (a last flush). */
  close?: () => Promise<void> | void;
}

export interface Part {
  /** Called by Lifecycle.start, in the order the parts were added. */
  start?: () => void;
  close?: () => Promise<void> | void;
}

/**
 * What a service runs beside its routes (jobs, loops, pools, the database): how it starts and how
 * it stops. `start()` starts the parts in the order they were added; when the app closes, they
 * close in that same order: add a part after what it still needs while closing (a job that
 * flushes to the database before the database). Fastify runs its own onClose hooks last-added
 * first, which made the order a matter of comments; here it is the order of the calls. A part that
 * fails to close is logged and the others still close.
 */
export class Lifecycle {
  readonly #parts: (Part & { name: string })[] = [];
  #state: 'built' | 'started' | 'closed' = 'built';

  constructor(
    app: FastifyInstance,
    private readonly log: FastifyBaseLogger,
    private readonly ticker: Ticker = realTicker,
  ) {
    app.addHook('onClose', async () => this.closeAll());
  }

  /** A part to start with the others and to close with the app, after the parts added before it. */
  add(name: string, part: Part | (() => Promise<void> | void)): void {
    this.#parts.push({ name, ...(typeof part === 'function' ? { close: part } : part) });
  }

  /**
   * Runs the job every `intervalMs` once started. A run never starts while the last one is still
   * going (that tick is skipped); a failed run is logged and the next tick runs again. Closing
   * stops the ticks and waits for a run in flight, then the job's own `close`, before the next
   * part closes.
   */
  every(job: Job): void {
    let ticks: { stop(): void } | undefined;
    let running: Promise<void> | undefined;
    const tick = () => {
      if (running) return;
      running = this.#guarded(job.name, job.run).finally(() => (running = undefined));
    };
    this.add(job.name, {
      start: () => {
        if (job.intervalMs <= 0) return;
        ticks = this.ticker(tick, job.intervalMs);
        if (job.runAtStart) tick();
      },
      close: async () => {
        ticks?.stop();
        await running;
        await job.close?.();
      },
    });
  }

  /** Runs `run` once, in the background, at start (a failure is logged); closing waits for it. */
  once(name: string, run: () => Promise<unknown>): void {
    let running: Promise<void> | undefined;
    this.add(name, {
      start: () => void (running = this.#guarded(name, run)),
      close: () => running,
    });
  }

  /** Starts every part, in the order added; once, and never after the app closed. */
  start(): void {
    if (this.#state !== 'built') return;
    this.#state = 'started';
    for (const part of this.#parts) part.start?.();
  }

  async closeAll(): Promise<void> {
    this.#state = 'closed';
    for (const part of this.#parts.splice(0)) {
      try {
        await part.close?.();
      } catch (error) {
        this.log.error({ err: error, part: part.name }, 'closing failed');
      }
    }
  }

  /** The run, its failure logged: the promise never rejects. */
  async #guarded(name: string, run: () => Promise<unknown>): Promise<void> {
    try {
      await run();
    } catch (error) {
      this.log.error({ err: error, job: name }, `${name} failed`);
    }
  }
}
