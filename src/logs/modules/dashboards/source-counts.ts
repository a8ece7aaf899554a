import { sql, type Kysely } from 'kysely';
import type { Job } from '../../../shared/lifecycle.js';
import type { RecordedBatch } from '../ingest/pipeline-stats.js';

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

export interface SourceBucket {
  /** Bucket start, epoch ms. */
  bucket: number;
  source: string;
  received: number;
  stored: number;
  rejected: number;
}

interface Pending {
  tenantId: string;
  minute: number;
  source: string;
  received: number;
  stored: number;
  rejected: number;
}

/**
 * Per-minute ingestion counts by source (table logs_ingest_source_minutes), fed by PipelineStats for
 * every batch. Counted in memory and written every few seconds rather than inside the ingest
 * request: a batch is acknowledged at store speed, and a failed counter write can never fail (and
 * so duplicate, on retry) an already stored batch. A crash loses at most the unwritten seconds of
 * counts, never logs. Readers flush first, so what was counted is what they see.
 */
export class SourceCounts {
  #pending = new Map<string, Pending>();
  #flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Kysely<any>,
    private readonly dialect: 'sqlite' | 'postgres',
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  /** Counts a batch in the minute it was ingested. */
  add(batch: RecordedBatch): void {
    const minute = batch.at - (((batch.at % MINUTE) + MINUTE) % MINUTE);
    const key = `${batch.tenantId}\u0000${minute}\u0000${batch.source}`;
    const row = this.#pending.get(key);
    if (row) {
      row.received += batch.received;
      row.stored += batch.stored;
      row.rejected += batch.rejected;
    } else {
      this.#pending.set(key, {
        tenantId: batch.tenantId,
        minute,
        source: batch.source,
        received: batch.received,
        stored: batch.stored,
        rejected: batch.rejected,
      });
    }
  }

  /** Writes the counts so far (one flush at a time); a failed write keeps them for the next one. */
  flush(): Promise<void> {
    this.#flushing = this.#flushing.then(() => this.#write());
    return this.#flushing;
  }

  async #write(): Promise<void> {
    if (this.#pending.size === 0) return;
    const rows = [...this.#pending.values()].sort((a, b) => a.minute - b.minute || cmp(a.tenantId, b.tenantId) || cmp(a.source, b.source));
    this.#pending = new Map();
    try {
      await this.db.transaction().execute(async (trx) => {
        for (const row of rows) {
          await sql`INSERT INTO logs_ingest_source_minutes (tenant_id, minute, source, received, stored, rejected)
            VALUES (${row.tenantId}, ${this.#big(row.minute)}, ${row.source}, ${this.#big(row.received)}, ${this.#big(row.stored)}, ${this.#big(row.rejected)})
            ON CONFLICT (tenant_id, minute, source) DO UPDATE SET
              received = logs_ingest_source_minutes.received + excluded.received,
              stored = logs_ingest_source_minutes.stored + excluded.stored,
              rejected = logs_ingest_source_minutes.rejected + excluded.rejected`.execute(trx);
        }
      });
    } catch (error) {
      for (const row of rows)
        this.add({
          tenantId: row.tenantId,
          source: row.source,
          received: row.received,
          stored: row.stored,
          rejected: row.rejected,
          at: row.minute,
        });
      this.onError(error);
    }
  }

  /** Sums per bucket (aligned to the epoch) and source of the minutes in [from, to). */
  async buckets(tenantId: string, from: number, to: number, intervalMs: number): Promise<SourceBucket[]> {
    await this.flush();
    const first = from - (((from % MINUTE) + MINUTE) % MINUTE);
    const { rows } = await sql<{
      bucket: number | string;
      source: string;
      received: number | string;
      stored: number | string;
      rejected: number | string;
    }>`
      SELECT minute - (minute % ${this.#big(intervalMs)}) AS bucket, source, sum(received) AS received, sum(stored) AS stored, sum(rejected) AS rejected
      FROM logs_ingest_source_minutes
      WHERE tenant_id = ${tenantId} AND minute >= ${this.#big(first)} AND minute < ${this.#big(to)}
      GROUP BY 1, 2`.execute(this.db);
    return rows.map((row) => ({
      bucket: Number(row.bucket),
      source: row.source,
      received: Number(row.received),
      stored: Number(row.stored),
      rejected: Number(row.rejected),
    }));
  }

  /** Removes the minutes before `before` (every tenant); returns rows removed. */
  async removeOlderThan(before: number): Promise<number> {
    await this.flush();
    const result = await sql`DELETE FROM logs_ingest_source_minutes WHERE minute < ${this.#big(before)}`.execute(this.db);
    return Number(result.numAffectedRows ?? 0);
  }

  #big(value: number) {
    return this.dialect === 'postgres' ? sql`${value}::bigint` : sql`${value}`;
  }
}

/**
 * The counts are written every `flushMs` (LOGS_SOURCE_COUNTS_FLUSH_INTERVAL), and at most once an
 * hour the minutes older than the default retention are removed instead (which writes them first);
 * a last flush at close.
 */
export function sourceCountsJob(counts: SourceCounts, options: { flushMs: number; retentionDays: number; now: () => number }): Job {
  const { now } = options;
  let prunedAt = 0;
  return {
    name: 'source counts upkeep',
    intervalMs: options.flushMs,
    run: () => {
      if (now() - prunedAt < HOUR) return counts.flush();
      prunedAt = now();
      return counts.removeOlderThan(now() - options.retentionDays * DAY);
    },
    close: () => counts.flush(),
  };
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
