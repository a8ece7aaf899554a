import { AggregatorRegistry } from 'prom-client';
import type { MetricsJson } from './messages.js';

/** Longest the primary waits for every worker's metrics (a worker's scrape waits a little longer). */
const COLLECT_TIMEOUT_MS = 4_000;

export type MetricsAnswer = { text: string } | { error: string };

interface Collection<W> {
  readonly parts: MetricsJson[];
  readonly waiting: Set<W>;
  readonly answer: (reply: MetricsAnswer) => void;
  readonly cancelTimer: () => void;
}

/**
 * The primary's side of a /metrics scrape with workers: asks every worker for its metrics and
 * answers with their sum (prom-client's cluster aggregation). A worker that reports an error, or
 * does not answer in time, fails the scrape rather than leaving its counts out of the sum, which
 * Prometheus would read as a counter reset; a worker that exits meanwhile is left out.
 */
export class MetricsGatherer<W> {
  private nextId = 0;
  private readonly open = new Map<number, Collection<W>>();

  constructor(
    /** Sends a worker the request for its metrics of collection `collectId`. */
    private readonly ask: (worker: W, collectId: number) => void,
    /** Starts the timeout of a collection; returns its cancel. */
    private readonly startTimer: (onTimeout: () => void) => () => void = (onTimeout) => {
      const timer = setTimeout(onTimeout, COLLECT_TIMEOUT_MS).unref();
      return () => clearTimeout(timer);
    },
  ) {}

  collect(workers: Iterable<W>, answer: (reply: MetricsAnswer) => void): void {
    const collectId = this.nextId++;
    const waiting = new Set(workers);
    const cancelTimer = this.startTimer(() => this.fail(collectId, `${waiting.size} worker(s) did not answer in time`));
    this.open.set(collectId, { parts: [], waiting, answer, cancelTimer });
    for (const worker of waiting) this.ask(worker, collectId);
    this.finishIfComplete(collectId);
  }

  /** A worker's answer: its metrics, or why it has none. */
  received(from: W, collectId: number, metrics: MetricsJson | undefined, error: string | undefined): void {
    const collection = this.open.get(collectId);
    if (!collection || !collection.waiting.delete(from)) return;
    if (!metrics) return this.fail(collectId, error ?? 'a worker failed to read its metrics');
    collection.parts.push(metrics);
    this.finishIfComplete(collectId);
  }

  /** A worker exited: collections waiting on it answer without it. */
  workerGone(worker: W): void {
    for (const [collectId, collection] of this.open) if (collection.waiting.delete(worker)) this.finishIfComplete(collectId);
  }

  private fail(collectId: number, error: string): void {
    const collection = this.open.get(collectId);
    if (!collection) return;
    this.open.delete(collectId);
    collection.cancelTimer();
    collection.answer({ error });
  }

  private finishIfComplete(collectId: number): void {
    const collection = this.open.get(collectId);
    if (!collection || collection.waiting.size > 0) return;
    this.open.delete(collectId);
    collection.cancelTimer();
    Promise.resolve()
      .then(() => AggregatorRegistry.aggregate(collection.parts).metrics())
      .then(
        (text) => collection.answer({ text }),
        (error: unknown) => collection.answer({ error: String(error) }),
      );
  }
}
