import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { ChunkPosition } from '../../../../shared/db/migrator.js';

/**
 * How PostgreSQL's data migrations walk the stored rows of log_entries in committed chunks
 * (migrator.ts, ResumableMigration): a partition (an hour) at a time, in name order, and in each in
 * (tenant_id, ts, id) order through its index. The position of a chunk is the partition and the
 * last row it did, so the next chunk, in this process or the next, starts right after it.
 */

/** The partition and the last (tenant_id, ts, id) done in it. */
export type WalkPosition = [partition: string, tenant: string, ts: number, id: number];

export interface WalkedRow {
  tenant_id: string;
  ts: string | number;
  id: string | number;
}

/** The rows of the next chunk, the partition they are in, and the position after them; null when no row is left. */
export interface WalkChunk<R extends WalkedRow> {
  partition: string;
  rows: R[];
  position: WalkPosition;
}

/** log_entries' partitions in name order (hours in time order). */
export async function entryPartitions(db: Kysely<any>): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
    WHERE i.inhparent = 'log_entries'::regclass ORDER BY 1`.execute(db);
  return rows.map((row) => row.name);
}

/** Rows of log_entries in every partition (what a walk over them has to do), meeting `where` (alias `l`) if given. */
export async function countEntries(db: Kysely<any>, where: RawBuilder<unknown> = sql`true`): Promise<number> {
  const { rows } = await sql<{ total: string }>`SELECT count(*)::text AS total FROM log_entries l WHERE ${where}`.execute(db);
  return Number(rows[0]!.total);
}

/**
 * At most `limit` rows after `position` (null: from the start), all from one partition, with the
 * columns `columns` (the partition's alias is `l`) among those meeting `where`.
 */
export async function nextEntries<R extends WalkedRow>(
  db: Kysely<any>,
  position: ChunkPosition | null,
  limit: number,
  columns: RawBuilder<unknown>,
  where: RawBuilder<unknown> = sql`true`,
): Promise<WalkChunk<R> | null> {
  const partitions = await entryPartitions(db);
  const at = position as WalkPosition | null;
  for (const partition of partitions) {
    if (at !== null && partition < at[0]) continue;
    const after =
      at !== null && partition === at[0] ? sql`AND (l.tenant_id, l.ts, l.id) > (${at[1]}, ${at[2]}::bigint, ${at[3]}::bigint)` : sql``;
    const { rows } = await sql<R>`SELECT ${columns} FROM ${sql.table(partition)} l WHERE ${where} ${after}
      ORDER BY l.tenant_id, l.ts, l.id LIMIT ${limit}`.execute(db);
    if (rows.length === 0) continue;
    const last = rows.at(-1)!;
    return { partition, rows, position: [partition, last.tenant_id, Number(last.ts), Number(last.id)] };
  }
  return null;
}

/** The rows' runs of one tenant, in order. */
export function byTenant<R extends WalkedRow>(rows: readonly R[]): { tenant: string; rows: R[] }[] {
  const runs: { tenant: string; rows: R[] }[] = [];
  for (const row of rows) {
    const run = runs.at(-1);
    if (run?.tenant === row.tenant_id) run.rows.push(row);
    else runs.push({ tenant: row.tenant_id, rows: [row] });
  }
  return runs;
}
