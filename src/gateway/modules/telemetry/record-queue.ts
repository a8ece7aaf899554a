import { ProtoWriter } from './proto-writer.js';

/** What goes around a batch's records in a request body: written in front of them when the batch is sent. */
export interface Envelope {
  /** Bytes kept free at the start of every batch buffer for what goes in front of the records. */
  readonly headroom: number;
  /**
   * Writes what goes in front of the records (which lie at `recordsStart` to `recordsEnd`), ending
   * exactly at `recordsStart`, inside the headroom; returns where the request body starts.
   */
  frame(bytes: Buffer, recordsStart: number, recordsEnd: number): number;
}

export interface RecordQueueOptions {
  /** Records held at most; past it new records are dropped (and counted), never blocking the caller. */
  maxQueue: number;
  /** Records in one batch at most. */
  maxBatch: number;
  /** How often a batch is sent. */
  intervalMs: number;
  /** What every request body has around the records. */
  envelope: Envelope;
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

/**
 * A batch buffer: room for a full batch of the gateway's records (2,048 of them take 520-680 KB as
 * protobuf); a batch also ends when its buffer is full, and a record larger than a buffer gets a
 * buffer of its own size.
 */
const BATCH_BYTES = 1024 * 1024;
/** Spare buffers kept at most: 8 MB. */
const MAX_SPARE = 8;

/**
 * A bounded queue of encoded records, sent in batches in the background (a batch as soon as it is
 * full, what is left every interval): the producer never waits and never fails. Each record is written straight into its batch's request body (write(), then
 * commit()), so a queued record is bytes outside the JS heap, not an object the garbage collector
 * must carry until the send, and a send copies nothing: what goes in front of the records (the
 * envelope, whose lengths depend on them) is written into room kept free at the start of the
 * buffer. The body buffers are reused. For thousands of records a second, retained strings and
 * fresh buffers cost the gateway more than encoding the records.
 * A batch that fails goes back to the front (what no longer fits is dropped), and the next sends
 * back off, doubling up to a minute, so a down receiver is not hammered.
 */
export class RecordQueue {
  private readonly batches: Batch[] = [];
  /**
   * Buffers of sent batches, reused: allocating fresh ones made V8 count external memory and collect
   * often. As many are kept as the queue's bound can fill (a backlog while the logs service is slow
   * is sent and refilled without making buffers anew), at most MAX_SPARE.
   */
  private readonly spare: Buffer[] = [];
  private readonly maxSpare: number;
  private readonly writer = new ProtoWriter(Buffer.alloc(0));
  /** The batch the writer is positioned in, between write() and commit(). */
  private open: Batch | undefined;
  private queued = 0;
  /** The batch being sent: no record is added to it any more. */
  private sending: Batch | undefined;
  private inFlight: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** A send of a full batch, due as soon as the current work is done. */
  private soon: NodeJS.Immediate | undefined;
  private backoffMs = 0;
  private readonly counters = { sent: 0, dropped: 0, failedBatches: 0 };

  constructor(private readonly options: RecordQueueOptions) {
    this.maxSpare = Math.min(MAX_SPARE, Math.max(4, Math.ceil(options.maxQueue / options.maxBatch) + 1));
    this.schedule(options.intervalMs);
  }

  /**
   * Room for one record of at most `maxBytes`: the writer, positioned at the end of the batch it
   * goes into; the record counts once commit() is called. Undefined when the queue is full (the
   * record is dropped and counted).
   */
  write(maxBytes: number): ProtoWriter | undefined {
    if (this.queued >= this.options.maxQueue) {
      this.counters.dropped += 1;
      return undefined;
    }
    let batch = this.batches.at(-1);
    if (!batch || batch === this.sending || batch.count >= this.options.maxBatch || batch.used + maxBytes > batch.bytes.length) {
      const needed = this.options.envelope.headroom + maxBytes;
      const bytes = needed <= BATCH_BYTES ? (this.spare.pop() ?? Buffer.allocUnsafeSlow(BATCH_BYTES)) : Buffer.allocUnsafeSlow(needed);
      batch = { bytes, used: this.options.envelope.headroom, count: 0 };
      this.batches.push(batch);
      // The one before is full (of records or of bytes): it goes now.
      if (this.batches.length > 1) this.sendFull();
    }
    this.open = batch;
    this.writer.buf = batch.bytes;
    this.writer.pos = batch.used;
    return this.writer;
  }

  /** Keeps the record just written; one that ran past its buffer (its size was underestimated) is dropped. */
  commit(): void {
    const batch = this.open;
    if (batch === undefined) return;
    this.open = undefined;
    if (this.writer.pos > batch.bytes.length) return this.discard(batch);
    batch.used = this.writer.pos;
    batch.count += 1;
    this.queued += 1;
    if (batch.count >= this.options.maxBatch) this.sendFull();
  }

  /** Forgets the record being written (its encoding failed): counted as dropped. */
  abandon(): void {
    const batch = this.open;
    this.open = undefined;
    if (batch !== undefined) this.discard(batch);
  }

  private discard(batch: Batch): void {
    this.counters.dropped += 1;
    // A batch made for this record alone must not stay behind empty.
    if (batch.count === 0 && batch !== this.sending && this.batches.at(-1) === batch) {
      this.batches.pop();
      if (batch.bytes.length === BATCH_BYTES && this.spare.length < this.maxSpare) this.spare.push(batch.bytes);
    }
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
    const { headroom } = this.options.envelope;
    const start = this.options.envelope.frame(batch.bytes, headroom, batch.used);
    this.inFlight = this.options
      .send(batch.bytes.subarray(start, batch.used), batch.count)
      .then(() => {
        this.batches.shift();
        this.queued -= batch.count;
        this.counters.sent += batch.count;
        if (batch.bytes.length === BATCH_BYTES && this.spare.length < this.maxSpare) this.spare.push(batch.bytes);
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
        if (this.backoffMs === 0 && this.fullBatchWaits()) this.sendFull();
      });
    return this.inFlight;
  }

  private fullBatchWaits(): boolean {
    return this.batches.length > 1 || (this.batches[0]?.count ?? 0) >= this.options.maxBatch;
  }

  /**
   * A full batch goes at once (after the current request's work, never in it), not at the next
   * interval: at thousands of records a second, full batches waiting for the timer each held a
   * buffer of their own, more than the spares, and the buffers made and dropped every second cost
   * the gateway a major garbage collection a second (docs/benchmarks.md, "Self-watching cost").
   * Not while backing off after a failure: then the timer decides.
   */
  private sendFull(): void {
    if (this.timer === undefined || this.inFlight !== undefined || this.backoffMs > 0 || this.soon !== undefined) return;
    this.soon = setImmediate(() => {
      this.soon = undefined;
      void this.flush();
    });
  }

  /** Stops the timer and sends what is left, batch by batch, giving up at the first failure. */
  async close(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    clearImmediate(this.soon);
    this.soon = undefined;
    await this.inFlight;
    while (this.batches.length > 0) {
      const before = this.counters.failedBatches;
      await this.flush();
      if (this.counters.failedBatches > before) break;
    }
  }

  private async tick(): Promise<void> {
    await this.flush();
    // Full batches are sent as they fill (sendFull); what is left waits an interval (longer after failures).
    if (this.timer) this.schedule(this.backoffMs || this.options.intervalMs);
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => void this.tick(), delayMs);
    this.timer.unref();
  }
}
