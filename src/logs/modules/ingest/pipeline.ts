import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../../shared/errors/app-error.js';
import { toAppError } from '../../../shared/errors/handler.js';
import type { StorageWatch } from '../store/storage-watch.js';
import { boundedGunzip, DEFAULT_MAX_INFLATE_RATIO } from './inflate.js';
import { canonicalLevel } from '../query/levels.js';
import type { IngestSource, PipelineStats } from './pipeline-stats.js';
import { dict } from '../../../shared/dict.js';
import { Gate } from '../../../shared/gate.js';
import type { AttributeValue, LogEntry } from '../store/log-store.js';

/**
 * The one ingestion pipeline. Every entry point (OTLP logs, traces and metrics, Elasticsearch
 * `_bulk`) runs: authenticate (in `onRequest`, before any byte of the body is read) -> inflate
 * (acceptGzip) -> decode -> map, which counts what it could not read (and makes spans' and metric
 * points' text storable; the log store does that for log entries) -> store in one committed write
 * -> account (ingestBatch) -> answer. What differs per signal is a row in signals.ts.
 */

/** What a mapping made of a request: the items to store and what it refused. */
export interface Mapping<T> {
  items: T[];
  rejected: number;
  /** The first few reasons, for the OTLP partial-success message. */
  errors: string[];
}

export interface Accounting {
  stats: PipelineStats;
  now: () => number;
  /** Turns a failed write into its 503 (full, read-only, database down) and raises readiness `storage`. */
  storage?: StorageWatch | undefined;
}

/** Requests whose failed batch ingestBatch already counted (countFailedBatch must not count it again). */
const counted = new WeakSet<FastifyRequest>();

/** The tenant label of a batch refused before its sender was known (no tenant id can start with `-`). */
export const UNKNOWN_TENANT = '-';

/**
 * A route's `onError` hook: a batch that fails with a 5xx anywhere before its store write (the
 * credentials' look-up with the database down, for instance) was not stored either, and counts in
 * `logs_ingest_store_failures_total` like one whose write failed (ingestBatch counts those).
 */
export function countFailedBatch(stats: PipelineStats, source: (request: FastifyRequest) => IngestSource) {
  return async (request: FastifyRequest, _reply: FastifyReply, error: unknown): Promise<void> => {
    if (counted.has(request) || toAppError(error).status < 500) return;
    counted.add(request);
    stats.record(request.tenantId || UNKNOWN_TENANT, source(request), { received: 0, stored: 0, rejected: 0 }, { failed: true });
  };
}

/**
 * Stores a mapped batch and accounts for it, the one accounting path of every signal: in flight
 * (received, not yet stored) while the write runs, then received/stored/rejected and the write's
 * latency, or a failed write. The caller answers 2xx only after this resolves (durable).
 */
export async function ingestBatch<T>(
  accounting: Accounting,
  request: FastifyRequest,
  source: IngestSource,
  mapping: Mapping<T>,
  store: (items: T[]) => Promise<unknown>,
): Promise<void> {
  const { stats, now, storage } = accounting;
  const { tenantId } = request;
  const stored = mapping.items.length;
  const received = stored + mapping.rejected;
  const started = now();
  stats.enter(tenantId, source, stored);
  try {
    if (stored > 0) await store(mapping.items);
  } catch (error) {
    stats.leave(tenantId, source, stored);
    stats.record(tenantId, source, { received, stored: 0, rejected: received }, { failed: true, latencyMs: now() - started });
    counted.add(request);
    throw storage ? await storage.explain(error) : error;
  }
  if (stored > 0) storage?.succeeded();
  stats.leave(tenantId, source, stored);
  stats.record(tenantId, source, { received, stored, rejected: mapping.rejected }, { latencyMs: now() - started });
}

/**
 * Items (`_bulk` actions, OTLP log records) decoded between turns of the event loop: a body of
 * thousands of them in one go would hold it for tens of milliseconds, and with it the SQLite
 * writer's reply to another batch (the writer then idles).
 */
export const DECODE_CHUNK = 500;

/**
 * The log batches of `_bulk` and OTLP logs from their decoding to their commit (one, made in app.ts):
 * three at once, one being written, one ready for the writer, one being decoded and prepared for the
 * store. They are decoded one at a time, until the store calls `prepared` (AppendOptions): two
 * decoded together share the event loop's turns, and the writer waits for both. The others wait, as
 * the request bodies they arrived as: a decoded batch (thousands of objects) that waits for the
 * writer is copied by every young-generation collection meanwhile, and then by the old generation's;
 * a body is one string or buffer, never copied (docs/benchmarks.md, "the fourth pass").
 */
export class LogBatches {
  readonly #batches = new Gate(3);
  readonly #decoding = new Gate(1);

  /** `work` decodes a batch and appends it with `prepared` as AppendOptions.prepared. */
  run<T>(work: (prepared: () => void) => Promise<T>): Promise<T> {
    return this.#batches.run(async () => {
      const prepared = await this.#decoding.enter();
      try {
        return await work(prepared);
      } finally {
        prepared();
      }
    });
  }
}

/**
 * The sender's level as one of ours (levels.ts), blank as none, and the sender's own text kept as
 * `severity_text` when it said more than the level. Text is not cleaned here: the store does that
 * once, for every writer (store/write-batch.ts prepareEntries).
 */
export function withCanonicalLevel(entry: LogEntry): LogEntry {
  const level = entry.level === undefined || entry.level.trim() === '' ? undefined : canonicalLevel(entry.level);
  if (level?.original === undefined) return { ...entry, level: level?.level };
  return {
    ...entry,
    level: level.level,
    attributes: Object.assign(dict<AttributeValue>(), entry.attributes, { severity_text: level.original }),
  };
}

/**
 * canonicalLevel of the levels senders use, remembered: a batch repeats a handful of them. At most
 * LEVEL_MEMORY texts (a client's), starting over when full; blank is none (undefined). The answer
 * is shared: only read.
 */
const LEVEL_MEMORY = 256;
const levels = new Map<string, { level: string; original?: string } | undefined>();
export function rememberedLevel(sent: string): { level: string; original?: string } | undefined {
  let level = levels.get(sent);
  if (level !== undefined || levels.has(sent)) return level;
  level = sent.trim() === '' ? undefined : canonicalLevel(sent);
  if (levels.size >= LEVEL_MEMORY) levels.clear();
  levels.set(sent, level);
  return level;
}

/**
 * withCanonicalLevel on an entry the caller just made and owns, with attributes of its own (a
 * dictionary): changed in place, no copy of every entry of a batch.
 */
export function canonicalizeLevel(entry: LogEntry): LogEntry {
  const level = entry.level === undefined ? undefined : rememberedLevel(entry.level);
  entry.level = level?.level;
  if (level?.original !== undefined) entry.attributes!.severity_text = level.original;
  return entry;
}

/**
 * Accepts `Content-Encoding: gzip`. The body limit applies to the decompressed bytes (Fastify counts
 * what this stream yields), and inflation stops with 413 past `maxInflateRatio` (inflate.ts).
 * Only for routes that authenticate in `onRequest`: a body is never inflated for an unknown
 * client (a request that reaches this hook unauthenticated is refused, fail closed).
 */
export function acceptGzip(app: FastifyInstance, maxInflateRatio: number = DEFAULT_MAX_INFLATE_RATIO): void {
  app.addHook('preParsing', async (request, reply, payload) => {
    const encoding = request.headers['content-encoding']?.trim().toLowerCase();
    if (!encoding || encoding === 'identity') return payload;
    if (!request.logsAuth) throw new AppError('LOGS_MISSING_TOKEN');
    if (encoding !== 'gzip' && encoding !== 'x-gzip') throw new AppError('LOGS_UNSUPPORTED_MEDIA_TYPE');
    const inflated = boundedGunzip(payload, maxInflateRatio);
    // Once the answer is out (a 413 at the body limit, a parse error) nothing more is inflated.
    reply.raw.once('finish', () => inflated.stop());
    reply.raw.once('close', () => inflated.stop());
    return inflated;
  });
}

/** Protobuf bodies as buffers, in the plugin that registers the OTLP routes. */
export function acceptProtobuf(app: FastifyInstance, bodyLimit: number): void {
  app.addContentTypeParser(['application/x-protobuf', 'application/protobuf'], { parseAs: 'buffer', bodyLimit }, (_request, body, done) =>
    done(null, body),
  );
}
