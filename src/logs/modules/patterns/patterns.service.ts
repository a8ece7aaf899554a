import type { Condition } from '../query/condition.js';
import { intervalOf } from '../query/time-range.js';
import type { LogStore, StoredLogEntry } from '../store/log-store.js';
import { DEFAULT_DRAIN, Drain, patternQuery, patternText, type DrainOptions } from './drain.js';

export const DEFAULT_SAMPLE = 5000;
export const DEFAULT_PATTERNS = 50;

export interface PatternsRequest {
  tenantId: string;
  condition: Condition | undefined;
  /** The query as the client wrote it (each pattern's `query` narrows it). */
  query: string;
  /** Epoch ms, both inclusive (the store's range). */
  from: number;
  to: number;
  sample: number;
  limit: number;
}

export interface PatternView {
  pattern: string;
  count: number;
  estimated_count: number;
  share: number;
  query: string;
  example: { id: string; '@timestamp': string; message: string };
}

export interface PatternsAnswer {
  patterns: PatternView[];
  total: number;
  sampled: boolean;
  sample_size: number;
  clusters: number;
  method: 'drain';
}

/**
 * How many entries to take from each slice of the range: all of them when the range holds no more
 * than `sample`, else shares in proportion to each slice's count (largest remainders), so a busy
 * hour weighs what it weighs in the range.
 */
export function quotas(counts: readonly number[], sample: number): number[] {
  const total = counts.reduce((sum, count) => sum + count, 0);
  if (total <= sample) return [...counts];
  const exact = counts.map((count) => (count * sample) / total);
  const taken = exact.map(Math.floor);
  let left = sample - taken.reduce((sum, count) => sum + count, 0);
  const byRemainder = exact.map((value, i) => [value - Math.floor(value), i] as const).sort((a, b) => b[0] - a[0]);
  for (const [, i] of byRemainder) {
    if (left <= 0) break;
    if (taken[i]! < counts[i]!) {
      taken[i]! += 1;
      left -= 1;
    }
  }
  return taken;
}

/**
 * Groups the entries of a search into message patterns (drain.ts). The range is cut into the
 * histogram's buckets (about 60; their counts are exact and cheap); each gives its quota of entries
 * (its newest), at most `sample` in all; a pattern's `estimated_count` scales its sample count to the
 * range's total.
 */
export async function findPatterns(
  store: LogStore,
  request: PatternsRequest,
  options: DrainOptions = DEFAULT_DRAIN,
): Promise<PatternsAnswer> {
  const { tenantId, condition, from, to } = request;
  const interval = intervalOf(undefined, from, to + 1);
  const buckets = await store.histogram({ tenantId, condition, from, to, intervalMs: interval.ms });
  const counts = buckets.map((bucket) => bucket.count);
  const total = counts.reduce((sum, count) => sum + count, 0);
  const shares = quotas(counts, request.sample);

  const entries: StoredLogEntry[] = [];
  for (const [i, bucket] of buckets.entries()) {
    const limit = shares[i]!;
    if (limit === 0) continue;
    const slice = { from: Math.max(from, bucket.ts), to: Math.min(to, bucket.ts + interval.ms - 1) };
    const result = await store.search({ tenantId, condition, ...slice, page: 1, limit, trackTotal: limit });
    entries.push(...result.entries);
  }

  const drain = new Drain(options);
  for (const [i, entry] of entries.entries()) drain.add(entry.message, i);
  const size = entries.length;
  const scale = size === 0 ? 0 : total / size;
  const patterns = [...drain.clusters]
    .sort((a, b) => b.count - a.count || a.id - b.id)
    .slice(0, request.limit)
    .map((cluster): PatternView => {
      const example = entries[cluster.example]!;
      return {
        pattern: patternText(cluster.template),
        count: cluster.count,
        estimated_count: Math.round(cluster.count * scale),
        share: size === 0 ? 0 : cluster.count / size,
        query: patternQuery(cluster.template, request.query),
        example: { id: example.id, '@timestamp': new Date(example.timestamp).toISOString(), message: example.message },
      };
    });
  return { patterns, total, sampled: size < total, sample_size: size, clusters: drain.clusters.length, method: 'drain' };
}
