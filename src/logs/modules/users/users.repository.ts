import type { Kysely } from 'kysely';
import type { LogsRolesTable, LogsSchema, LogsUsersTable } from '../../db/schema.js';

export class LogsUsersRepository {
  constructor(private readonly db: Kysely<LogsSchema>) {}

  countAll() {
    return this.db
      .selectFrom('logs_users')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow()
      .then((row) => Number(row.n));
  }

  findById(id: string) {
    return this.db.selectFrom('logs_users').selectAll().where('id', '=', id).executeTakeFirst();
  }

  findByUsername(username: string) {
    return this.db.selectFrom('logs_users').selectAll().where('username', '=', username).executeTakeFirst();
  }

  findInTenant(tenantId: string, id: string) {
    return this.db.selectFrom('logs_users').selectAll().where('id', '=', id).where('tenant_id', '=', tenantId).executeTakeFirst();
  }

  listInTenant(tenantId: string) {
    return this.db.selectFrom('logs_users').selectAll().where('tenant_id', '=', tenantId).orderBy('username').execute();
  }

  /** Roles of each user, by user id. */
  async rolesOf(userIds: readonly string[]): Promise<Map<string, LogsRolesTable[]>> {
    const byUser = new Map<string, LogsRolesTable[]>(userIds.map((id) => [id, []]));
    if (userIds.length === 0) return byUser;
    const rows = await this.db
      .selectFrom('logs_user_roles')
      .innerJoin('logs_roles', 'logs_roles.id', 'logs_user_roles.role_id')
      .selectAll('logs_roles')
      .select('logs_user_roles.user_id')
      .where('logs_user_roles.user_id', 'in', [...userIds])
      .orderBy('logs_roles.name')
      .execute();
    for (const { user_id, ...role } of rows) byUser.get(user_id)?.push(role);
    return byUser;
  }

  insert(row: LogsUsersTable, db: Kysely<LogsSchema> = this.db) {
    return db.insertInto('logs_users').values(row).execute();
  }

  update(id: string, changes: Partial<Omit<LogsUsersTable, 'id' | 'created_at'>>, db: Kysely<LogsSchema> = this.db) {
    return db.updateTable('logs_users').set(changes).where('id', '=', id).execute();
  }

  async setRoles(userId: string, roleIds: readonly string[], db: Kysely<LogsSchema> = this.db): Promise<void> {
    await db.deleteFrom('logs_user_roles').where('user_id', '=', userId).execute();
    if (roleIds.length > 0)
      await db
        .insertInto('logs_user_roles')
        .values(roleIds.map((role_id) => ({ user_id: userId, role_id })))
        .execute();
  }

  delete(id: string, db: Kysely<LogsSchema> = this.db) {
    return db.deleteFrom('logs_users').where('id', '=', id).execute();
  }
}
