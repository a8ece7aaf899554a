import type { Kysely } from 'kysely';
import type { LogsSchema, LogsTenantsTable } from '../../db/schema.js';

export class TenantsRepository {
  constructor(private readonly db: Kysely<LogsSchema>) {}

  list() {
    return this.db.selectFrom('logs_tenants').selectAll().orderBy('name').execute();
  }

  find(id: string) {
    return this.db.selectFrom('logs_tenants').selectAll().where('id', '=', id).executeTakeFirst();
  }

  findByName(name: string) {
    return this.db.selectFrom('logs_tenants').selectAll().where('name', '=', name).executeTakeFirst();
  }

  insert(row: LogsTenantsTable, db: Kysely<LogsSchema> = this.db) {
    return db.insertInto('logs_tenants').values(row).execute();
  }

  update(id: string, changes: Partial<Omit<LogsTenantsTable, 'id'>>, db: Kysely<LogsSchema> = this.db) {
    return db.updateTable('logs_tenants').set(changes).where('id', '=', id).execute();
  }

  delete(id: string, db: Kysely<LogsSchema> = this.db) {
    return db.deleteFrom('logs_tenants').where('id', '=', id).execute();
  }

  async countUsers(id: string): Promise<number> {
    const row = await this.db
      .selectFrom('logs_users')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('tenant_id', '=', id)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }
}
