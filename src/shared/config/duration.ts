import { dict } from '../dict.js';
/** Durations in configuration: `90d`, `12h`, `30m`, `300s`, `250ms`, or `0` (= never / disabled). */
const UNIT_MS = dict<number>({ ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 });
const DURATION = /^(\d+)(ms|s|m|h|d)?$/;

/** Returns milliseconds, or undefined when the text is not a duration. A bare number means seconds. */
export function parseDuration(text: string): number | undefined {
  const match = DURATION.exec(text.trim());
  if (!match) return undefined;
  const amount = Number(match[1]);
  return amount * UNIT_MS[match[2] ?? 's']!;
}
