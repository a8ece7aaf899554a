import type { Kysely } from 'kysely';
import type { LogsApiKeysTable, LogsSchema } from '../../db/schema.js';

/** API key rows: Kysely queries only. */
export class ApiKeysRepository {
  constructor(private readonly db: Kysely<LogsSchema>) {}

  insert(row: LogsApiKeysTable, db: Kysely<LogsSchema> = this.db) {
    return db.insertInto('logs_api_keys').values(row).execute();
  }

  find(id: string) {
    return this.db.selectFrom('logs_api_keys').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Newest first; `userId` undefined: every user's keys in the tenant. */
  list(tenantId: string, userId: string | undefined) {
    let query = this.db.selectFrom('logs_api_keys').selectAll().where('tenant_id', '=', tenantId);
    if (userId !== undefined) query = query.where('user_id', '=', userId);
    return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(1000).execute();
  }

  async revoke(id: string, at: string, db: Kysely<LogsSchema> = this.db): Promise<boolean> {
    const result = await db
      .updateTable('logs_api_keys')
      .set({ revoked_at: at })
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async touch(id: string, at: string): Promise<void> {
    await this.db.updateTable('logs_api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
  }
}
