/** Minute and day arithmetic of the store (rollups are per minute, retention per day), on epoch ms. */

export const MINUTE = 60_000;
export const HOUR = 3_600_000;
export const DAY = 86_400_000;

/** The remainder with the sign of the divisor, so times before 1970 fall in the right minute. */
export function mod(a: number, b: number): number {
  return ((a % b) + b) % b;
}

/** Code-unit order, the same on both databases' results. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Splits [from, to] into whole minutes (answered from the rollups) and the ragged edges (answered from
 * the entries). Half-open ranges.
 */
export function splitByMinute(from: number, to: number): { minutes: [number, number] | null; edges: [number, number][] } {
  const end = to + 1;
  const fullStart = from + mod(-from, MINUTE);
  const fullEnd = end - mod(end, MINUTE);
  if (fullStart >= fullEnd) return { minutes: null, edges: [[from, end]] };
  const edges: [number, number][] = [];
  if (from < fullStart) edges.push([from, fullStart]);
  if (fullEnd < end) edges.push([fullEnd, end]);
  return { minutes: [fullStart, fullEnd], edges };
}
