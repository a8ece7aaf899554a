import { QueryAbortedError, QueryTimeoutError, type WaitingClient } from '../../read-budget.js';
import { replyError } from './protocol.js';
import { SqliteWorker } from './sqlite-worker.js';

/** A reader's connection settings: the main connection's page cache (src/shared/db/database.ts), per worker. */
const READ_PRAGMAS = ['busy_timeout = 5000', 'cache_size = -65536'];

interface Job {
  readonly sql: string;
  readonly parameters: readonly unknown[];
  readonly resolve: (rows: unknown[]) => void;
  readonly reject: (error: unknown) => void;
  timer?: NodeJS.Timeout | undefined;
  /** Stops listening for the read's client leaving (once the job settles). */
  stopListening?: (() => void) | undefined;
  slot?: Slot | undefined;
}

interface Slot {
  readonly worker: SqliteWorker;
  ready: boolean;
  job?: Job | undefined;
}

export interface SqliteReadPoolOptions {
  /** The SQLite file (not `:memory:`: a worker cannot see another connection's memory database). */
  path: string;
  /** Workers, i.e. statements running at once; more wait in a queue (their wait counts against their budget). */
  size: number;
}

/**
 * A small pool of worker threads, each with its own read-only connection to the log store's file:
 * SQLite reads (better-sqlite3 is synchronous) run there, so an expensive search never blocks the
 * service's event loop. A statement still running at its deadline is answered with
 * QueryTimeoutError and its worker is terminated and replaced (the thread ends once the native
 * statement returns; docs/log-store.md). Threads still finishing such a statement count against a
 * second `size`, so CPU stays bounded at 2 × size threads whatever a client sends.
 */
export class SqliteReadPool {
  readonly #path: string;
  readonly #size: number;
  readonly #idle: Slot[] = [];
  readonly #live = new Set<Slot>();
  readonly #queue: Job[] = [];
  /** The ends of the threads still finishing a statement after their worker was terminated. */
  readonly #dying = new Set<Promise<void>>();
  #closed = false;

  constructor(options: SqliteReadPoolOptions) {
    this.#path = options.path;
    this.#size = options.size;
  }

  /** Threads currently running or finishing a statement, for tests and diagnostics. */
  get threads(): { live: number; dying: number; queued: number } {
    return { live: this.#live.size, dying: this.#dying.size, queued: this.#queue.length };
  }

  /**
   * Runs one read statement; rejects with QueryTimeoutError once `deadline` (epoch ms) passes, and with
   * QueryAbortedError once its read's `client` leaves, queued or running: a running statement's
   * worker is then stopped as at the deadline.
   */
  run(sql: string, parameters: readonly unknown[], deadline = Number.POSITIVE_INFINITY, client?: WaitingClient): Promise<unknown[]> {
    if (this.#closed) return Promise.reject(new Error('the read pool is closed'));
    if (Date.now() >= deadline) return Promise.reject(new QueryTimeoutError());
    if (client?.gone) return Promise.reject(new QueryAbortedError());
    return new Promise<unknown[]>((resolve, reject) => {
      const job: Job = { sql, parameters, resolve, reject };
      if (Number.isFinite(deadline)) {
        job.timer = setTimeout(() => this.#expire(job, new QueryTimeoutError()), Math.max(0, deadline - Date.now()));
      }
      job.stopListening = client?.onGone(() => this.#expire(job, new QueryAbortedError()));
      this.#queue.push(job);
      this.#dispatch();
    });
  }

  /**
   * Terminates every worker; queued and running statements are rejected. Resolves once every thread
   * of the pool has ended, those still finishing a timed-out statement included (Node would wait
   * for them before the process ends anyway: sqlite-worker.ts, terminate).
   */
  async close(): Promise<void> {
    this.#closed = true;
    for (const job of this.#queue.splice(0)) this.#settle(job, new Error('the read pool is closed'));
    const workers = [...this.#live].map((slot) => {
      if (slot.job) this.#settle(slot.job, new Error('the read pool is closed'));
      slot.job = undefined;
      return slot.worker;
    });
    this.#live.clear();
    this.#idle.length = 0;
    await Promise.all([...workers.map((worker) => worker.terminate().catch(() => undefined)), ...this.#dying]);
  }

  #dispatch(): void {
    while (this.#queue.length > 0 && !this.#closed) {
      const slot = this.#idle.pop();
      if (slot === undefined) {
        // It joins the idle ones once its connection is open: a job that expires meanwhile leaves it alive.
        this.#spawn();
        return;
      }
      const job = this.#queue.shift()!;
      job.slot = slot;
      slot.job = job;
      slot.worker.run({ sql: job.sql, parameters: job.parameters }).then(
        (reply) => this.#answered(slot, job, reply.error && replyError(reply.error), reply.rows),
        (error: Error) => this.#answered(slot, job, error),
      );
    }
  }

  /**
   * A new worker when below `size` (starting ones included), and while fewer than `size` timed-out
   * threads are still finishing: a read queued meanwhile waits for one of them to end (they keep the
   * process alive until then), or for its deadline.
   */
  #spawn(): void {
    if (this.#live.size >= this.#size || this.#dying.size >= this.#size) return;
    const slot: Slot = {
      ready: false,
      // A worker that stops (it could not open the file, or died) takes its statement with it (#answered), and a new one its place.
      worker: new SqliteWorker({
        name: 'a read worker',
        path: this.#path,
        pragmas: READ_PRAGMAS,
        readonly: true,
        onStop: (reason) => {
          // A worker that cannot even open the database: the waiting reads fail now rather than respawn it in a loop.
          if (!slot.ready) for (const job of this.#queue.splice(0)) this.#settle(job, reason);
          this.#retire(slot, false);
        },
      }),
    };
    this.#live.add(slot);
    slot.worker.ready.then(
      () => {
        slot.ready = true;
        if (this.#live.has(slot)) this.#idle.push(slot);
        this.#dispatch();
      },
      () => undefined,
    );
  }

  /** A worker's answer to `job`, unless the job ended before it (#expire): the worker is then retired already. */
  #answered(slot: Slot, job: Job, error: Error | undefined, rows?: unknown[]): void {
    if (slot.job !== job) return;
    slot.job = undefined;
    this.#settle(job, error, rows);
    if (this.#live.has(slot)) this.#idle.push(slot);
    this.#dispatch();
  }

  /** Ends a job before its answer (its deadline passed, its client left): out of the queue, or its thread stopped. */
  #expire(job: Job, error: Error): void {
    const slot = job.slot;
    if (slot === undefined) {
      const index = this.#queue.indexOf(job);
      if (index >= 0) this.#queue.splice(index, 1);
    } else if (slot.job === job) {
      slot.job = undefined;
      this.#retire(slot, true);
    }
    this.#settle(job, error);
  }

  /** Takes a slot out of service; `terminate`: stop its thread (it ends when its statement returns). */
  #retire(slot: Slot, terminate: boolean): void {
    if (!this.#live.delete(slot)) return;
    const idle = this.#idle.indexOf(slot);
    if (idle >= 0) this.#idle.splice(idle, 1);
    if (terminate) {
      const ended: Promise<void> = slot.worker
        .terminate()
        .catch(() => undefined)
        .then(() => {
          this.#dying.delete(ended);
          this.#dispatch();
        });
      this.#dying.add(ended);
      // A replacement starts right away, so the next search does not wait for a worker's start.
      if (!this.#closed) this.#spawn();
    }
    this.#dispatch();
  }

  #settle(job: Job, error: unknown, rows?: unknown[]): void {
    if (job.timer !== undefined) clearTimeout(job.timer);
    job.timer = undefined;
    job.stopListening?.();
    job.stopListening = undefined;
    if (error !== undefined) job.reject(error);
    else job.resolve(rows ?? []);
  }
}
