import type { Kysely } from 'kysely';
import type { LogsRolesTable, LogsSchema } from '../../db/schema.js';

export class RolesRepository {
  constructor(private readonly db: Kysely<LogsSchema>) {}

  /** The built-in roles and the tenant's own. */
  listVisible(tenantId: string) {
    return this.db
      .selectFrom('logs_roles')
      .selectAll()
      .where((eb) => eb.or([eb('tenant_id', 'is', null), eb('tenant_id', '=', tenantId)]))
      .orderBy('builtin', 'desc')
      .orderBy('name')
      .execute();
  }

  /** A role the tenant may see and assign (built-in or its own). */
  findVisible(tenantId: string, id: string) {
    return this.db
      .selectFrom('logs_roles')
      .selectAll()
      .where('id', '=', id)
      .where((eb) => eb.or([eb('tenant_id', 'is', null), eb('tenant_id', '=', tenantId)]))
      .executeTakeFirst();
  }

  findVisibleByNames(tenantId: string, names: readonly string[]) {
    if (names.length === 0) return Promise.resolve([] as LogsRolesTable[]);
    return this.db
      .selectFrom('logs_roles')
      .selectAll()
      .where('name', 'in', [...names])
      .where((eb) => eb.or([eb('tenant_id', 'is', null), eb('tenant_id', '=', tenantId)]))
      .execute();
  }

  /** Every role held by any user who holds this one (what those users can do, together). */
  rolesOfHolders(roleId: string) {
    return this.db
      .selectFrom('logs_user_roles')
      .innerJoin('logs_roles', 'logs_roles.id', 'logs_user_roles.role_id')
      .selectAll('logs_roles')
      .where('logs_user_roles.user_id', 'in', (eb) => eb.selectFrom('logs_user_roles').select('user_id').where('role_id', '=', roleId))
      .execute();
  }

  insert(row: LogsRolesTable, db: Kysely<LogsSchema> = this.db) {
    return db.insertInto('logs_roles').values(row).execute();
  }

  update(id: string, changes: Partial<Pick<LogsRolesTable, 'name' | 'permissions' | 'updated_at'>>, db: Kysely<LogsSchema> = this.db) {
    return db.updateTable('logs_roles').set(changes).where('id', '=', id).execute();
  }

  delete(id: string, db: Kysely<LogsSchema> = this.db) {
    return db.deleteFrom('logs_roles').where('id', '=', id).execute();
  }
}
