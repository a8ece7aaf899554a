import { sql, type SelectQueryBuilder } from 'kysely';

/**
 * One page of a filtered table, newest first (by `timeColumn`, then `id` so that equal times keep
 * a stable order), with the total number of matching rows.
 */
export async function newestFirstPage<DB, TB extends keyof DB, Row>(
  filtered: SelectQueryBuilder<DB, TB, object>,
  timeColumn: string,
  page: number,
  limit: number,
): Promise<{ rows: Row[]; total: number }> {
  const [rows, count] = await Promise.all([
    filtered
      .selectAll()
      .orderBy(sql.ref(timeColumn), 'desc')
      .orderBy(sql.ref('id'), 'desc')
      .limit(limit)
      .offset((page - 1) * limit)
      .execute(),
    filtered.select(sql<number | string>`count(*)`.as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows: rows as Row[], total: Number((count as { total: number | string }).total) };
}
