import type { Kysely } from 'kysely';
import type { LogsSavedSearchesTable, LogsSchema } from '../../db/schema.js';

/** Saved search rows, always within one tenant: Kysely queries only. */
export class SavedSearchesRepository {
  constructor(private readonly db: Kysely<LogsSchema>) {}

  insert(row: LogsSavedSearchesTable) {
    return this.db.insertInto('logs_saved_searches').values(row).execute();
  }

  find(tenantId: string, id: string) {
    return this.db.selectFrom('logs_saved_searches').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  }

  findByName(tenantId: string, name: string) {
    return this.db
      .selectFrom('logs_saved_searches')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('name', '=', name)
      .executeTakeFirst();
  }

  /** By name, then id; at most `limit`. */
  list(tenantId: string, limit: number) {
    return this.db
      .selectFrom('logs_saved_searches')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .orderBy('name')
      .orderBy('id')
      .limit(limit)
      .execute();
  }

  async count(tenantId: string): Promise<number> {
    const row = await this.db
      .selectFrom('logs_saved_searches')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('tenant_id', '=', tenantId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async update(tenantId: string, id: string, changes: Partial<LogsSavedSearchesTable>): Promise<boolean> {
    const result = await this.db
      .updateTable('logs_saved_searches')
      .set(changes)
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async remove(tenantId: string, id: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('logs_saved_searches')
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}
