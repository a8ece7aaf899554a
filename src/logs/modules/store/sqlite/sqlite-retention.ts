import { sql, type Kysely } from 'kysely';
import { nextTurn, ROLLUP_TABLE_NAMES } from '../write-batch.js';
import { ftsTableName, hourOfId } from './fts-hours.js';
import { inWriteTransaction } from './sqlite-writes.js';
import { idWindow } from './time-ids.js';

/** Rows deleted per retention transaction, so ingestion is never blocked for long. */
const RETENTION_CHUNK = 5_000;

/**
 * Removes the tenant's entries before `cutoff` (00:00 UTC of a day; SqliteLogStore.removeOlderThan
 * hides them from reads first): their index tables (an hour each) and rollups, then their rows,
 * 5,000 per transaction, so ingestion interleaves with a large purge; last, the index and rollups
 * once more, for an entry older than the cutoff that arrived meanwhile. Returns the entries removed.
 */
export async function removeBefore(db: Kysely<any>, tenantId: string, cutoff: number): Promise<number> {
  const { hi } = idWindow(Number.MIN_SAFE_INTEGER, cutoff);
  await removeIndexAndCounts(db, tenantId, cutoff, hi);
  let removed = 0;
  // Time-ordered ids: the tenant's entries before the cutoff are its ids up to `hi`, deleted a range
  // of 5,000 at a time from where the last range ended (a range is one walk over adjacent pages; the
  // same entries deleted id by id cost twice as long).
  let lo = Number.MIN_SAFE_INTEGER;
  for (;;) {
    const deleted = await inWriteTransaction(db, async ({ connection }) => {
      const { rows } = await sql<{ upTo: number | null; n: number }>`SELECT max(id) AS upTo, count(*) AS n FROM
        (SELECT id FROM log_entries WHERE id BETWEEN ${lo} AND ${hi} AND tenant_id = ${tenantId} AND ts < ${cutoff}
          ORDER BY id LIMIT ${RETENTION_CHUNK})`.execute(connection);
      const { upTo, n } = rows[0]!;
      if (upTo === null) return 0;
      await sql`DELETE FROM log_entries WHERE id BETWEEN ${lo} AND ${upTo} AND tenant_id = ${tenantId} AND ts < ${cutoff}`.execute(
        connection,
      );
      lo = Number(upTo) + 1;
      return Number(n);
    });
    removed += deleted;
    if (deleted === 0) break;
    // Let waiting writes take the connection between chunks: without it the next chunk took the
    // lock first every time, and ingestion waited for the whole purge (docs/performance-notes.md, "SQLite store").
    await nextTurn();
  }
  // Displaced entries (time-ids.ts) before the cutoff, wherever their ids are.
  for (;;) {
    const deleted = await inWriteTransaction(db, async ({ connection }) => {
      const { rows } = await sql<{ id: number }>`SELECT id FROM log_displaced WHERE tenant_id = ${tenantId} AND ts < ${cutoff}
        LIMIT ${RETENTION_CHUNK}`.execute(connection);
      if (rows.length === 0) return 0;
      const ids = JSON.stringify(rows.map((row) => row.id));
      const result = await sql`DELETE FROM log_entries WHERE id IN (SELECT value FROM json_each(${ids}))`.execute(connection);
      await sql`DELETE FROM log_displaced WHERE id IN (SELECT value FROM json_each(${ids}))`.execute(connection);
      removed += Number(result.numAffectedRows ?? 0);
      return rows.length;
    });
    if (deleted === 0) break;
    await nextTurn();
  }
  await removeIndexAndCounts(db, tenantId, cutoff, hi);
  return removed;
}

/**
 * The tenant's index tables of whole hours of ids up to `hi` (one transaction each; a displaced
 * entry's hour may be later, it stays) and its rollups before the cutoff.
 */
async function removeIndexAndCounts(db: Kysely<any>, tenantId: string, cutoff: number, hi: number): Promise<void> {
  const { rows: hours } = await sql<{ hour: number }>`SELECT hour FROM log_fts_hours
    WHERE tenant_id = ${tenantId} AND hour < ${hourOfId(hi + 1)}`.execute(db);
  for (const { hour } of hours) {
    await inWriteTransaction(db, async ({ connection }) => {
      await sql`DROP TABLE IF EXISTS ${sql.table(ftsTableName(tenantId, hour))}`.execute(connection);
      await sql`DELETE FROM log_fts_hours WHERE tenant_id = ${tenantId} AND hour = ${hour}`.execute(connection);
    });
    await nextTurn();
  }
  await inWriteTransaction(db, async ({ connection }) => {
    for (const table of ROLLUP_TABLE_NAMES) {
      await sql`DELETE FROM ${sql.table(table)} WHERE tenant_id = ${tenantId} AND minute < ${cutoff}`.execute(connection);
    }
  });
}
