import { sql, type RawBuilder } from 'kysely';
import { firstIdOf, idSecond, lastIdOf } from './time-ids.js';

/**
 * The SQLite store's full-text index is one FTS5 table per tenant and hour of ids
 * (`log_fts_<tenant in hex>_<hour>`, listed in log_fts_hours). FTS5 reaches an id inside a long
 * doclist by reading every entry before it (whatever the page size), so in one table per tenant a
 * lookup in the last hour of a day would read the whole day's postings of the word
 * first. An hour's table bounds that to an hour, whatever the store holds; and retention drops whole
 * tables instead of deleting from the index entry by entry (docs/log-store.md).
 */

const SECONDS_PER_HOUR = 3_600;
/** Added to hour numbers in table names, so that hours before 1970 are names too (time-ids.ts's range fits). */
const HOUR_NAME_OFFSET = 2 ** 23;
/** Tables per compound SELECT (SQLite allows 500 terms in one). */
const UNION_CHUNK = 400;

export function hourOfId(id: number): number {
  return Math.floor(idSecond(id) / SECONDS_PER_HOUR);
}

/** The ids of an hour. */
export function idsOfHour(hour: number): { lo: number; hi: number } {
  return { lo: firstIdOf(hour * SECONDS_PER_HOUR), hi: lastIdOf(hour * SECONDS_PER_HOUR + SECONDS_PER_HOUR - 1) };
}

export function ftsTableName(tenantId: string, hour: number): string {
  return `log_fts_${Buffer.from(tenantId, 'utf8').toString('hex')}_${String(hour + HOUR_NAME_OFFSET).padStart(8, '0')}`;
}

/** One hour's table and the ids of [lo, hi] that lie in it. */
export interface HourSlice {
  table: string;
  lo: number;
  hi: number;
}

/** A tenant's hour tables, ascending, as a read sees them. */
export class FtsHours {
  constructor(
    readonly tenantId: string,
    readonly hours: readonly number[],
  ) {}

  /** The tables that hold ids of [lo, hi], with the part of the range each holds, in `order`. */
  slices(lo: number, hi: number, order: 'asc' | 'desc' = 'asc'): HourSlice[] {
    const slices: HourSlice[] = [];
    for (const hour of this.hours) {
      const ids = idsOfHour(hour);
      if (ids.hi < lo || ids.lo > hi) continue;
      slices.push({ table: ftsTableName(this.tenantId, hour), lo: Math.max(lo, ids.lo), hi: Math.min(hi, ids.hi) });
    }
    return order === 'asc' ? slices : slices.reverse();
  }

  /** `SELECT rowid … UNION ALL …`: the ids of [lo, hi] matching an FTS5 query, over every table (`SELECT NULL` when none). */
  matchingIds(match: string, lo: number, hi: number): RawBuilder<unknown> {
    const selects = this.slices(lo, hi).map(
      (slice) =>
        sql`SELECT rowid FROM ${sql.table(slice.table)} WHERE ${sql.table(slice.table)} MATCH ${match} AND rowid BETWEEN ${slice.lo} AND ${slice.hi}`,
    );
    if (selects.length === 0) return sql`SELECT NULL AS rowid WHERE 0`;
    // Nested in chunks: one compound SELECT takes at most 500 terms.
    let chunks = selects;
    while (chunks.length > 1) {
      const next: RawBuilder<unknown>[] = [];
      for (let start = 0; start < chunks.length; start += UNION_CHUNK) {
        const part = chunks.slice(start, start + UNION_CHUNK);
        next.push(part.length === 1 ? part[0]! : sql`SELECT rowid FROM (${sql.join(part, sql` UNION ALL `)})`);
      }
      chunks = next;
    }
    return chunks[0]!;
  }
}
