export interface BatcherOptions<T> {
  /** Items held at most; past it new items are dropped (and counted), never blocking the caller. */
  maxQueue: number;
  maxBatch: number;
  /** How often the queue is sent. */
  intervalMs: number;
  send: (batch: T[]) => Promise<void>;
  /** Called with each failure (for a rate-limited log line). */
  onError?: (error: unknown) => void;
}

export interface BatcherStats {
  queued: number;
  sent: number;
  dropped: number;
  failedBatches: number;
}

/**
 * A bounded queue sent in batches in the background: the producer never waits and never fails.
 * A batch that fails goes back to the front of the queue (what no longer fits is dropped), and the
 * next sends back off, doubling up to a minute, so a down receiver is not hammered.
 */
export class BoundedBatcher<T> {
  private queue: T[] = [];
  private inFlight: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private backoffMs = 0;
  private readonly counters = { sent: 0, dropped: 0, failedBatches: 0 };

  constructor(private readonly options: BatcherOptions<T>) {
    this.schedule(options.intervalMs);
  }

  push(item: T): void {
    if (this.queue.length >= this.options.maxQueue) {
      this.counters.dropped += 1;
      return;
    }
    this.queue.push(item);
  }

  stats(): BatcherStats {
    return { queued: this.queue.length, ...this.counters };
  }

  /** Sends one batch now (or waits for the one in flight). */
  async flush(): Promise<void> {
    if (this.inFlight) return this.inFlight;
    if (this.queue.length === 0) return;
    const batch = this.queue.splice(0, this.options.maxBatch);
    this.inFlight = this.options
      .send(batch)
      .then(() => {
        this.counters.sent += batch.length;
        this.backoffMs = 0;
      })
      .catch((error: unknown) => {
        this.counters.failedBatches += 1;
        this.backoffMs = Math.min(60_000, Math.max(this.options.intervalMs, this.backoffMs * 2));
        const room = this.options.maxQueue - this.queue.length;
        this.counters.dropped += Math.max(0, batch.length - room);
        this.queue.unshift(...batch.slice(0, Math.max(0, room)));
        this.options.onError?.(error);
      })
      .finally(() => {
        this.inFlight = undefined;
      });
    return this.inFlight;
  }

  /** Stops the timer and sends what is left, batch by batch, giving up at the first failure. */
  async close(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.inFlight;
    while (this.queue.length > 0) {
      const before = this.counters.failedBatches;
      await this.flush();
      if (this.counters.failedBatches > before) break;
    }
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(async () => {
      await this.flush();
      // Keep sending while a backlog remains; otherwise wait an interval (longer after failures).
      if (this.timer) this.schedule(this.backoffMs || (this.queue.length >= this.options.maxBatch ? 0 : this.options.intervalMs));
    }, delayMs);
    this.timer.unref();
  }
}
