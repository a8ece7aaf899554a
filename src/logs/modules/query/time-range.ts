import { parseDuration } from '../../../shared/config/duration.js';
import { TimeRangeError } from './errors.js';

/**
 * The time ranges and histogram intervals of our API (search, dashboards, infrastructure, traces):
 * parsed and checked here, once; a bad one is a TimeRangeError (400 `invalid json body` with the reason).
 */

export const DEFAULT_RANGE_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/** Nice bucket widths, smallest first. */
const NICE_INTERVALS = ['1s', '5s', '10s', '30s', '1m', '5m', '10m', '30m', '1h', '3h', '6h', '12h', '1d', '7d', '30d'];
/** A histogram with more buckets than this is refused, here and by the store. */
export const MAX_BUCKETS = 10_000;
/** The widest histogram bucket: ten years. Wider (or past 2^53 ms) used to wrap bucket dates around. */
export const MAX_INTERVAL_MS = 3650 * 86_400_000;
/** Timestamps a range may name: ISO 8601 four-digit years (both databases and Date hold these). */
const EARLIEST_MS = Date.parse('0000-01-01T00:00:00.000Z');
const LATEST_MS = Date.parse('9999-12-31T23:59:59.999Z');

/** The request's range in epoch ms; the last 24 hours when absent. Refused when `from` is not before `to`. */
export function rangeOf(timeRange: { from: string; to: string } | undefined, now: number): { from: number; to: number } {
  if (!timeRange) return { from: now - DEFAULT_RANGE_MS, to: now };
  const from = Date.parse(timeRange.from);
  const to = Date.parse(timeRange.to);
  if (Number.isNaN(from) || Number.isNaN(to)) throw new TimeRangeError('timeRange: from and to must be ISO 8601 timestamps');
  if (!withinYears(from) || !withinYears(to)) throw new TimeRangeError('timeRange: from and to must be between the years 0000 and 9999');
  if (from >= to) throw new TimeRangeError('timeRange: from must be before to');
  return { from, to };
}

/** A timestamp a store can hold (years 0000–9999). */
export function withinYears(ms: number): boolean {
  return ms >= EARLIEST_MS && ms <= LATEST_MS;
}

/**
 * The API's ranges are half-open, [from, to): adjacent ranges never count an entry twice and an
 * hour at 1m is 60 buckets. The store's `to` is inclusive, hence the millisecond.
 */
export function storeRange(range: { from: number; to: number }): { from: number; to: number } {
  return { from: range.from, to: range.to - 1 };
}

/** The requested interval, or the smallest nice one giving at most about 60 buckets. */
export function intervalOf(requested: string | undefined, from: number, to: number): { label: string; ms: number } {
  if (requested !== undefined) {
    const ms = parseDuration(requested);
    if (!ms) throw new TimeRangeError('interval must be a positive duration such as 30s, 5m or 1h');
    if (!Number.isSafeInteger(ms) || ms > MAX_INTERVAL_MS) throw new TimeRangeError('interval must be at most 3650d (ten years)');
    if ((to - from) / ms > MAX_BUCKETS) throw new TimeRangeError(`interval too small: more than ${MAX_BUCKETS} buckets`);
    return { label: requested, ms };
  }
  const target = (to - from) / 60;
  for (const label of NICE_INTERVALS) {
    const ms = parseDuration(label)!;
    if (ms >= target) return { label, ms };
  }
  const label = NICE_INTERVALS[NICE_INTERVALS.length - 1]!;
  const ms = parseDuration(label)!;
  if ((to - from) / ms > MAX_BUCKETS) throw new TimeRangeError('timeRange too long for a histogram');
  return { label, ms };
}

/** [from, to) in epoch ms from ISO strings; `to` defaults to now, `from` to `to` minus `defaultMs` (an hour). Refused when from is not before to. */
export function rangeQuery(
  query: { from?: string | undefined; to?: string | undefined },
  now: number,
  defaultMs = HOUR_MS,
): { from: number; to: number } {
  const to = query.to === undefined ? now : Date.parse(query.to);
  const from = query.from === undefined ? to - defaultMs : Date.parse(query.from);
  if (Number.isNaN(from) || Number.isNaN(to)) throw new TimeRangeError('from and to must be ISO 8601 timestamps');
  if (from >= to) throw new TimeRangeError('from must be before to');
  return { from, to };
}
