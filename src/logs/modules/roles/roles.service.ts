import { randomUUID } from 'node:crypto';
import { AppError } from '../../../shared/errors/app-error.js';
import type { LogsRolesTable } from '../../db/schema.js';
import { invalidBody } from '../../http/errors.js';
import { auditActor, type LogsAuditRepository } from '../audit/audit.repository.js';
import type { Client, LogsAuthContext } from '../auth/authenticate.js';
import { isPermission, permissionsOfRole, type Permission } from '../rbac/permissions.js';
import { assertWithinActor } from '../rbac/privilege.js';
import type { RolesRepository } from './roles.repository.js';

export interface RoleView {
  id: string;
  name: string;
  permissions: Permission[];
  builtin: boolean;
  tenant_id: string | null;
  created_at: string;
  updated_at: string;
}

export function roleView(role: LogsRolesTable): RoleView {
  return {
    id: role.id,
    name: role.name,
    permissions: permissionsOfRole(role),
    builtin: role.builtin === 1,
    tenant_id: role.tenant_id,
    created_at: role.created_at,
    updated_at: role.updated_at,
  };
}

/** Roles: the built-in `admin` and `viewer`, and each tenant's own. */
export class RolesService {
  constructor(
    private readonly roles: RolesRepository,
    private readonly audit: LogsAuditRepository,
    private readonly now: () => number,
  ) {}

  async list(tenantId: string): Promise<RoleView[]> {
    return (await this.roles.listVisible(tenantId)).map(roleView);
  }

  async get(tenantId: string, id: string): Promise<RoleView> {
    const role = await this.roles.findVisible(tenantId, id);
    if (!role) throw new AppError('LOGS_NOT_FOUND');
    return roleView(role);
  }

  async create(
    tenantId: string,
    input: { name: string; permissions: string[] },
    actor: LogsAuthContext,
    client: Client,
  ): Promise<RoleView> {
    const permissions = checkedPermissions(input.permissions);
    assertWithinActor(actor, permissions);
    await this.assertNameFree(tenantId, input.name);
    const at = new Date(this.now()).toISOString();
    const row: LogsRolesTable = {
      id: randomUUID(),
      tenant_id: tenantId,
      name: input.name,
      permissions: JSON.stringify(permissions),
      builtin: 0,
      created_at: at,
      updated_at: at,
    };
    await this.roles.insert(row);
    await this.audit.record({
      tenantId,
      action: 'role.create',
      outcome: 'success',
      ...auditActor(actor),
      targetType: 'role',
      targetId: row.id,
      ...client,
      details: { name: row.name, permissions },
    });
    return roleView(row);
  }

  async update(
    tenantId: string,
    id: string,
    input: { name?: string | undefined; permissions?: string[] | undefined },
    actor: LogsAuthContext,
    client: Client,
  ): Promise<RoleView> {
    const role = await this.editable(tenantId, id, actor);
    const changes: { name?: string; permissions?: string; updated_at: string } = { updated_at: new Date(this.now()).toISOString() };
    if (input.permissions !== undefined) {
      const permissions = checkedPermissions(input.permissions);
      assertWithinActor(actor, permissions);
      changes.permissions = JSON.stringify(permissions);
    }
    if (input.name !== undefined && input.name !== role.name) {
      await this.assertNameFree(tenantId, input.name);
      changes.name = input.name;
    }
    await this.roles.update(id, changes);
    await this.audit.record({
      tenantId,
      action: 'role.update',
      outcome: 'success',
      ...auditActor(actor),
      targetType: 'role',
      targetId: id,
      ...client,
      details: { name: changes.name, permissions: input.permissions },
    });
    return roleView({ ...role, ...changes });
  }

  /** Users who held the role simply lose it. */
  async delete(tenantId: string, id: string, actor: LogsAuthContext, client: Client): Promise<void> {
    const role = await this.editable(tenantId, id, actor);
    await this.roles.delete(id);
    await this.audit.record({
      tenantId,
      action: 'role.delete',
      outcome: 'success',
      ...auditActor(actor),
      targetType: 'role',
      targetId: id,
      ...client,
      details: { name: role.name },
    });
  }

  /**
   * A role the actor may change or delete: not built-in, no permission beyond the actor's, and not
   * held by anyone more powerful than the actor (changing it would change what they can do).
   */
  private async editable(tenantId: string, id: string, actor: LogsAuthContext): Promise<LogsRolesTable> {
    const role = await this.roles.findVisible(tenantId, id);
    if (!role) throw new AppError('LOGS_NOT_FOUND');
    if (role.builtin === 1) throw invalidBody('built-in roles cannot be changed');
    assertWithinActor(actor, permissionsOfRole(role));
    assertWithinActor(
      actor,
      (await this.roles.rolesOfHolders(id)).flatMap((held) => permissionsOfRole(held)),
    );
    return role;
  }

  private async assertNameFree(tenantId: string, name: string): Promise<void> {
    if ((await this.roles.findVisibleByNames(tenantId, [name])).length > 0) throw invalidBody(`role "${name}" already exists`);
  }
}

/** 400 for unknown or repeated permission names. */
function checkedPermissions(names: readonly string[]): Permission[] {
  const seen = new Set<string>();
  for (const name of names) {
    if (!isPermission(name)) throw invalidBody(`unknown permission "${name}"`);
    if (seen.has(name)) throw invalidBody(`duplicate permission "${name}"`);
    seen.add(name);
  }
  return names as Permission[];
}
