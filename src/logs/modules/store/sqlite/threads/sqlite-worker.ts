import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { FromWorker, Reply, Request, ToWorker, WorkerData } from './protocol.js';
import { WORKER_SOURCE } from './worker-source.js';

/** Request without its id: the worker gives each one. */
type Unnumbered<T> = T extends unknown ? Omit<T, 'id'> : never;

export interface SqliteWorkerOptions extends Omit<WorkerData, 'driver'> {
  /** How its errors name it: `${name} stopped`, `${name} failed: <code>`. */
  name: string;
  /** Called once if the worker stops other than by `close`: it failed to start, crashed, or was terminated. */
  onStop?: ((reason: Error) => void) | undefined;
}

/**
 * One SQLite worker thread (worker-source.ts, protocol.ts) and the requests sent to it that wait for
 * their reply: the one way the writer (write-thread.ts) and the read pool (read-pool.ts) start, use
 * and stop a thread. Once stopped, every waiting and later request fails with the reason; nothing
 * restarts a worker here (the read pool replaces one; a stopped writer stays stopped until the
 * service restarts).
 *
 * A thread keeps the process alive exactly while someone waits on it: while it starts, while a
 * request waits for its reply, and from a `close` or `terminate` until it has ended. An idle thread
 * keeps nothing alive (a process that never closes its database still ends). Every promise here
 * settles on an event of the thread, and Node forgets an unref'd thread's events once nothing else
 * keeps the event loop alive: a caller would wait forever (a test: "Promise resolution is still
 * pending but the event loop has already resolved").
 */
export class SqliteWorker {
  readonly ready: Promise<void>;
  readonly #worker: Worker;
  readonly #name: string;
  readonly #onStop: ((reason: Error) => void) | undefined;
  readonly #pending = new Map<number, { resolve: (reply: Reply) => void; reject: (error: Error) => void }>();
  #nextId = 1;
  /** Why the worker stopped; every later request fails with it. */
  #stopped: Error | undefined;
  #started = false;
  #closing = false;
  /** `close` or `terminate` was called: the thread's end is awaited. */
  #ending = false;

  constructor({ name, onStop, ...data }: SqliteWorkerOptions) {
    this.#name = name;
    this.#onStop = onStop;
    const workerData: WorkerData = { driver: createRequire(import.meta.url).resolve('better-sqlite3'), ...data };
    this.#worker = new Worker(WORKER_SOURCE, { eval: true, workerData });
    this.ready = new Promise((resolve, reject) => {
      this.#worker.on('message', (message: FromWorker) => {
        if (message !== 'ready') return this.#settle(message);
        this.#started = true;
        this.#holdWhileAwaited();
        resolve();
      });
      this.#worker.once('error', (thrown: unknown) => {
        // An error thrown while the thread starts may arrive as a plain object ({ code: 'SQLITE_CANTOPEN' }).
        const code = (thrown as { code?: string } | null)?.code;
        reject(
          this.#stop(thrown instanceof Error ? thrown : Object.assign(new Error(`${name} failed: ${code ?? String(thrown)}`), { code })),
        );
      });
      this.#worker.once('exit', () => reject(this.#stop(new Error(`${name} stopped`))));
    });
    // Whoever awaits `ready` sees a failed start; nobody else should crash the process over it.
    this.ready.catch(() => undefined);
  }

  /** Sends a request; its SQLite error, if any, is in the reply (protocol.ts, replyError). */
  run(request: Unnumbered<Request>): Promise<Reply> {
    if (this.#stopped) return Promise.reject(this.#stopped);
    const id = this.#nextId++;
    return new Promise<Reply>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#holdWhileAwaited();
      const message: ToWorker = { ...request, id };
      this.#worker.postMessage(message);
    });
  }

  get stopped(): boolean {
    return this.#stopped !== undefined;
  }

  /** Closes the connection once the requests sent before have been answered, and ends the thread. */
  async close(): Promise<void> {
    if (this.#stopped) return;
    this.#closing = true;
    this.#ending = true;
    const exited = new Promise((resolve) => this.#worker.once('exit', resolve));
    this.#holdWhileAwaited();
    const message: ToWorker = 'close';
    this.#worker.postMessage(message);
    await exited;
  }

  /**
   * Stops the thread as a crash would, without waiting for its statement: waiting requests fail now.
   * Resolves once the thread has ended, which is when its native statement returns (better-sqlite3
   * cannot interrupt one), and keeps the process alive until then: Node joins every thread before
   * the process ends, `process.exit()` included, so a thread finishing a statement holds the
   * process's end anyway (docs/log-store.md, "Time budget").
   */
  async terminate(): Promise<void> {
    this.#stop(new Error(`${this.#name} stopped`));
    this.#ending = true;
    this.#holdWhileAwaited();
    await this.#worker.terminate();
  }

  #settle(reply: Reply): void {
    const pending = this.#pending.get(reply.id);
    if (!pending) return;
    this.#pending.delete(reply.id);
    this.#holdWhileAwaited();
    pending.resolve(reply);
  }

  /** The one rule of what keeps the process alive (the class comment). Once the thread has ended, ref and unref do nothing. */
  #holdWhileAwaited(): void {
    if (this.#started && this.#pending.size === 0 && !this.#ending) this.#worker.unref();
    else this.#worker.ref();
  }

  /** Fails every waiting and later request; returns the first reason. */
  #stop(reason: Error): Error {
    if (this.#stopped) return this.#stopped;
    this.#stopped = reason;
    for (const pending of this.#pending.values()) pending.reject(reason);
    this.#pending.clear();
    if (!this.#closing) this.#onStop?.(reason);
    return reason;
  }
}
