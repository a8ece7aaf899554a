import type { Kysely } from 'kysely';
import type { LogsPasskeysTable, LogsSchema } from '../../db/schema.js';

/** The passkeys (WebAuthn credentials) of the logs service's users. */
export class PasskeysRepository {
  constructor(private readonly db: Kysely<LogsSchema>) {}

  find(id: string) {
    return this.db.selectFrom('logs_passkeys').selectAll().where('id', '=', id).executeTakeFirst();
  }

  listOf(userId: string) {
    return this.db.selectFrom('logs_passkeys').selectAll().where('user_id', '=', userId).orderBy('created_at').orderBy('id').execute();
  }

  async insert(row: LogsPasskeysTable): Promise<void> {
    await this.db.insertInto('logs_passkeys').values(row).execute();
  }

  /** The signature counter moves forward and the use is recorded; false when another use got there first. */
  async used(id: string, previousCounter: number, counter: number, at: string): Promise<boolean> {
    const result = await this.db
      .updateTable('logs_passkeys')
      .set({ counter, last_used_at: at })
      .where('id', '=', id)
      .where('counter', '=', previousCounter)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async remove(userId: string, id: string): Promise<boolean> {
    const result = await this.db.deleteFrom('logs_passkeys').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }
}
