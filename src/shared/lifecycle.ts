import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { soleInstance, type Election } from './leader-election.js';

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
  /**
   * Runs once per cluster: only while this instance leads (Lifecycle's election), its ticks stopped
   * and its run in flight awaited when it stops leading. `runAtStart` then means: whenever it starts leading.
   */
  elected?: boolean;
}

/** Work that goes with the lead (Lifecycle.whileLeading). */
export interface LeadingPart {
  /** This instance starts leading (at start, if it leads then). */
  lead: () => void;
  /** It stops leading, or the service closes while it leads. */
  stepDown: () => Promise<void> | void;
  /** At close, after stepDown. */
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
  /** The parts that go with the lead, told in order when it changes. */
  readonly #leadingParts: { name: string; lead: () => void; stepDown: () => Promise<void> }[] = [];
  /** Changes of the lead, applied one after another. */
  #changes: Promise<void> = Promise.resolve();

  /**
   * `election` decides which instance runs the elected jobs (leader-election.ts); by default this
   * one always does. It is closed after every part, so no other instance leads before the last run here ended.
   */
  constructor(
    app: FastifyInstance,
    private readonly log: FastifyBaseLogger,
    private readonly ticker: Ticker = realTicker,
    private readonly election: Election = soleInstance,
  ) {
    app.addHook('onClose', async () => this.closeAll());
    election.onChange((leading) => this.#follow(leading));
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
    const begin = () => {
      if (job.intervalMs <= 0 || ticks !== undefined) return;
      ticks = this.ticker(tick, job.intervalMs);
      if (job.runAtStart) tick();
    };
    const halt = async () => {
      ticks?.stop();
      ticks = undefined;
      await running;
    };
    if (job.elected === true) {
      this.whileLeading(job.name, { lead: begin, stepDown: halt, ...(job.close ? { close: job.close } : {}) });
      return;
    }
    this.add(job.name, {
      start: begin,
      close: async () => {
        await halt();
        await job.close?.();
      },
    });
  }

  /**
   * A part that runs while this instance leads: `lead` when it starts leading (at start, if it leads
   * then), `stepDown` when it stops, or at close while it leads. A part added after it closes after it.
   */
  whileLeading(name: string, part: LeadingPart): void {
    let active = false;
    const entry = {
      name,
      lead: () => {
        if (active) return;
        active = true;
        part.lead();
      },
      stepDown: async () => {
        if (!active) return;
        active = false;
        await part.stepDown();
      },
    };
    this.#leadingParts.push(entry);
    this.add(name, {
      start: () => {
        if (this.election.leading) entry.lead();
      },
      close: async () => {
        await this.#changes;
        await entry.stepDown();
        await part.close?.();
      },
    });
  }

  /** Whether this instance leads (always, without an election). */
  get leading(): boolean {
    return this.election.leading;
  }

  /** Tells the parts that go with the lead, in the order added; a part that fails to step down is logged. */
  #follow(leading: boolean): void {
    this.#changes = this.#changes.then(async () => {
      if (this.#state !== 'started') return;
      for (const part of this.#leadingParts) {
        try {
          if (leading) part.lead();
          else await part.stepDown();
        } catch (error) {
          this.log.error({ err: error, part: part.name }, leading ? 'starting to lead failed' : 'stepping down failed');
        }
      }
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
    try {
      await this.election.close();
    } catch (error) {
      this.log.error({ err: error, part: 'election' }, 'closing failed');
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
