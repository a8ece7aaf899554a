export interface RecordQueueOptions {
  /** Records held at most; past it new records are dropped (and counted), never blocking the caller. */
  maxQueue: number;
  /** Records in one batch at most. */
  maxBatch: number;
  /** How often a batch is sent. */
  intervalMs: number;
  /** What every request body starts and ends with around the comma-separated records. */
  envelope: { head: string; tail: string };
  /** Sends one batch: the request body. */
  send: (body: Buffer, count: number) => Promise<void>;
  /** Called with each failure (for a rate-limited log line). */
  onError?: (error: unknown) => void;
}

export interface QueueStats {
  queued: number;
  sent: number;
  dropped: number;
  failedBatches: number;
}

/** A batch being filled or waiting to be sent: the request body, written as records are pushed. */
interface Batch {
  bytes: Buffer;
  used: number;
  count: number;
}

const BATCH_BYTES = 1024 * 1024;

/**
 * A bounded queue of encoded records, sent in batches in the background: the producer never waits
 * and never fails. Each record is written into its batch's request body as it is pushed, so a queued
 * record is bytes outside the JS heap, not an object the garbage collector must carry until the
 * send, and a send copies nothing; the body buffers are reused. For thousands of records a second,
 * retained strings and fresh buffers cost the gateway more than encoding the records.
 * A batch that fails goes back to the front (what no longer fits is dropped), and the next sends
 * back off, doubling up to a minute, so a down receiver is not hammered.
 */
export class RecordQueue {
  private readonly batches: Batch[] = [];
  /** Buffers of sent batches, reused: allocating fresh ones made V8 count external memory and collect often. */
  private readonly spare: Buffer[] = [];
  private readonly head: Buffer;
  private readonly tail: Buffer;
  private queued = 0;
  /** The batch being sent: no record is added to it any more. */
  private sending: Batch | undefined;
  private inFlight: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private backoffMs = 0;
  private readonly counters = { sent: 0, dropped: 0, failedBatches: 0 };

  constructor(private readonly options: RecordQueueOptions) {
    this.head = Buffer.from(options.envelope.head);
    this.tail = Buffer.from(options.envelope.tail);
    this.schedule(options.intervalMs);
  }

  push(record: string): void {
    if (this.queued >= this.options.maxQueue) {
      this.counters.dropped += 1;
      return;
    }
    // Room for the record, a comma and the envelope's tail.
    const size = Buffer.byteLength(record) + 1 + this.tail.length;
    let batch = this.batches.at(-1);
    if (!batch || batch === this.sending || batch.count >= this.options.maxBatch || batch.used + size > batch.bytes.length) {
      const needed = this.head.length + size;
      const bytes = needed <= BATCH_BYTES ? (this.spare.pop() ?? Buffer.allocUnsafeSlow(BATCH_BYTES)) : Buffer.allocUnsafeSlow(needed);
      batch = { bytes, used: this.head.copy(bytes, 0), count: 0 };
      this.batches.push(batch);
    }
    if (batch.count > 0) batch.bytes[batch.used++] = 0x2c; // ','
    batch.used += batch.bytes.write(record, batch.used);
    batch.count += 1;
    this.queued += 1;
  }

  stats(): QueueStats {
    return { queued: this.queued, ...this.counters };
  }

  /** Sends one batch now (or waits for the one in flight). */
  async flush(): Promise<void> {
    if (this.inFlight) return this.inFlight;
    const batch = this.batches[0];
    if (!batch) return;
    this.sending = batch;
    const end = batch.used + this.tail.copy(batch.bytes, batch.used);
    this.inFlight = this.options
      .send(batch.bytes.subarray(0, end), batch.count)
      .then(() => {
        this.batches.shift();
        this.queued -= batch.count;
        this.counters.sent += batch.count;
        if (batch.bytes.length === BATCH_BYTES && this.spare.length < 4) this.spare.push(batch.bytes);
        this.backoffMs = 0;
      })
      .catch((error: unknown) => {
        this.counters.failedBatches += 1;
        // The batch stays at the front for the next try; meanwhile new records are dropped once the
        // queue (the batch included) is full.
        this.backoffMs = Math.min(60_000, Math.max(this.options.intervalMs, this.backoffMs * 2));
        this.options.onError?.(error);
      })
      .finally(() => {
        this.sending = undefined;
        this.inFlight = undefined;
      });
    return this.inFlight;
  }

  /** Stops the timer and sends what is left, batch by batch, giving up at the first failure. */
  async close(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.inFlight;
    while (this.batches.length > 0) {
      const before = this.counters.failedBatches;
      await this.flush();
      if (this.counters.failedBatches > before) break;
    }
  }

  private async tick(): Promise<void> {
    await this.flush();
    // Keep sending while a full batch waits; otherwise wait an interval (longer after failures).
    const full = this.batches.length > 1 || (this.batches[0]?.count ?? 0) >= this.options.maxBatch;
    if (this.timer) this.schedule(this.backoffMs || (full ? 0 : this.options.intervalMs));
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => void this.tick(), delayMs);
    this.timer.unref();
  }
}
