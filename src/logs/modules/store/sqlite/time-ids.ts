/**
 * Time-ordered entry ids of the SQLite store: an entry's id is its second times 2^21 plus its place
 * among that second's entries. A time range is then a range of ids, so the full-text index (keyed
 * by id) answers "which matches lie in this hour" and "newest first" by itself, and so does a
 * histogram of whole seconds (docs/log-store.md, "Ids").
 *
 * Ids stay within JavaScript's safe integers: seconds from -2^32 to 2^32 (years 1834 to 2106).
 * An entry outside them, or past the 2^21st of one second, is "displaced": it gets an id in another
 * second and a row in log_displaced, and the reads that touch one fall back to checking times on rows.
 */

/** Ids per second. */
export const IDS_PER_SECOND = 2 ** 21;
const MAX_SECOND = 2 ** 32 - 1;
const MIN_SECOND = -MAX_SECOND;

/** The second an epoch-ms time falls in (floor, also before 1970). */
export function secondOf(ms: number): number {
  return Math.floor(ms / 1000);
}

/** The second whose id block holds `id`. */
export function idSecond(id: number): number {
  return Math.floor(id / IDS_PER_SECOND);
}

/** The first id of a second's block. */
export function firstIdOf(second: number): number {
  return second * IDS_PER_SECOND;
}

/** The last id of a second's block. */
export function lastIdOf(second: number): number {
  return second * IDS_PER_SECOND + IDS_PER_SECOND - 1;
}

/** The ids of entries with times in [from, end): every second that the range touches. */
export function idWindow(from: number, end: number): { lo: number; hi: number } {
  return { lo: firstIdOf(clampSecond(secondOf(from))), hi: lastIdOf(clampSecond(secondOf(end - 1))) };
}

export function clampSecond(second: number): number {
  return Math.min(MAX_SECOND, Math.max(MIN_SECOND, second));
}

/** The second of the ids an entry at `ts` gets (unless displaced). */
export function idSecondOf(ts: number): number {
  return clampSecond(secondOf(ts));
}

export interface AssignedId {
  id: number;
  /** True when the id is not in the block of the entry's own second. */
  displaced: boolean;
}

/**
 * Ids for entries sorted by time, given the last id already used in each second they touch
 * (`lastUsed(second)`, undefined when the second has none; asked once per second). Entries of one
 * second are numbered in order after the ones stored before; a full second spills into the next.
 */
export async function assignIds(
  times: readonly number[],
  lastUsed: (second: number) => Promise<number | undefined>,
): Promise<AssignedId[]> {
  const next = new Map<number, number>();
  const ids: AssignedId[] = [];
  for (const ts of times) {
    const own = secondOf(ts);
    let second = clampSecond(own);
    for (;;) {
      const id = next.get(second) ?? ((await lastUsed(second)) ?? firstIdOf(second) - 1) + 1;
      if (id <= lastIdOf(second)) {
        next.set(second, id + 1);
        ids.push({ id, displaced: second !== own });
        break;
      }
      if (second === MAX_SECOND) throw new RangeError('no id left for an entry at the end of the id range');
      second += 1;
    }
  }
  return ids;
}
