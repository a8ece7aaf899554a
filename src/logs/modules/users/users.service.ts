import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { brokenPasswordRule } from '../../../shared/auth/password-policy.js';
import { hashPassword } from '../../../shared/auth/passwords.js';
import { AppError } from '../../../shared/errors/app-error.js';
import { ERRORS } from '../../../shared/errors/catalogue.js';
import type { LogsRolesTable, LogsSchema, LogsUsersTable } from '../../db/schema.js';
import { invalidBody } from '../../http/errors.js';
import { auditActor, type LogsAuditRepository } from '../audit/audit.repository.js';
import type { Client, LogsAuthContext } from '../auth/authenticate.js';
import type { LogsSessionsRepository } from '../auth/sessions.repository.js';
import { permissionsOfRole } from '../rbac/permissions.js';
import { assertCanActOnUser, assertWithinActor } from '../rbac/privilege.js';
import type { RolesRepository } from '../roles/roles.repository.js';
import type { LogsUsersRepository } from './users.repository.js';

export interface UserView {
  id: string;
  username: string;
  email: string;
  tenant_id: string;
  roles: string[];
  created_at: string;
  updated_at: string;
}

export interface NewLogsUser {
  username: string;
  email: string;
  password: string;
  roles: string[];
}

function view(user: LogsUsersTable, roles: LogsRolesTable[]): UserView {
  return {
    id: user.id,
    username: user.username,
    email: user.email,
    tenant_id: user.tenant_id,
    roles: roles.map((r) => r.name),
    created_at: user.created_at,
    updated_at: user.updated_at,
  };
}

function assertPassword(password: string): void {
  const broken = brokenPasswordRule(password);
  if (broken) throw invalidBody(`password: ${ERRORS[broken].en}`);
}

export interface LogsUsersServiceDeps {
  db: Kysely<LogsSchema>;
  users: LogsUsersRepository;
  roles: RolesRepository;
  sessions: LogsSessionsRepository;
  audit: LogsAuditRepository;
  now: () => number;
}

/** Users of a tenant. The actor is null for the seed (no caller to check grants against). */
export class LogsUsersService {
  constructor(private readonly deps: LogsUsersServiceDeps) {}

  async list(tenantId: string): Promise<UserView[]> {
    const users = await this.deps.users.listInTenant(tenantId);
    const roles = await this.deps.users.rolesOf(users.map((u) => u.id));
    return users.map((user) => view(user, roles.get(user.id) ?? []));
  }

  async get(tenantId: string, id: string): Promise<UserView> {
    const user = await this.deps.users.findInTenant(tenantId, id);
    if (!user) throw new AppError('LOGS_NOT_FOUND');
    return view(user, (await this.deps.users.rolesOf([id])).get(id) ?? []);
  }

  async create(tenantId: string, input: NewLogsUser, actor: LogsAuthContext | null, client: Client): Promise<UserView> {
    assertPassword(input.password);
    const roles = await this.resolveRoles(tenantId, input.roles, actor);
    if (await this.deps.users.findByUsername(input.username)) throw invalidBody(`username "${input.username}" already exists`);
    const at = new Date(this.deps.now()).toISOString();
    const user: LogsUsersTable = {
      id: randomUUID(),
      tenant_id: tenantId,
      username: input.username,
      email: input.email.toLowerCase(),
      password_hash: await hashPassword(input.password),
      created_at: at,
      updated_at: at,
    };
    await this.deps.db.transaction().execute(async (trx) => {
      await this.deps.users.insert(user, trx);
      await this.deps.users.setRoles(
        user.id,
        roles.map((r) => r.id),
        trx,
      );
      await this.deps.audit.record(
        {
          tenantId,
          action: 'user.create',
          outcome: 'success',
          actorId: actor?.userId ?? null,
          actor: actor?.username ?? 'system',
          targetType: 'user',
          targetId: user.id,
          ...client,
          details: { username: user.username, roles: input.roles },
        },
        trx,
      );
    });
    return view(user, roles);
  }

  async update(
    tenantId: string,
    id: string,
    input: { email?: string | undefined; password?: string | undefined; roles?: string[] | undefined },
    actor: LogsAuthContext,
    client: Client,
  ): Promise<UserView> {
    const user = await this.deps.users.findInTenant(tenantId, id);
    if (!user) throw new AppError('LOGS_NOT_FOUND');
    await this.assertCanActOn(actor, id);
    if (input.password !== undefined) assertPassword(input.password);
    const roles = input.roles === undefined ? undefined : await this.resolveRoles(tenantId, input.roles, actor);
    if (roles && id === actor.userId && !roles.some((r) => permissionsOfRole(r).includes('users:manage'))) {
      throw invalidBody('you cannot remove your own users:manage permission');
    }
    const at = new Date(this.deps.now()).toISOString();
    const changes: Partial<LogsUsersTable> = { updated_at: at };
    if (input.email !== undefined) changes.email = input.email.toLowerCase();
    if (input.password !== undefined) changes.password_hash = await hashPassword(input.password);
    await this.deps.db.transaction().execute(async (trx) => {
      await this.deps.users.update(id, changes, trx);
      if (roles)
        await this.deps.users.setRoles(
          id,
          roles.map((r) => r.id),
          trx,
        );
      // A new password ends the user's sessions, as after a suspected compromise.
      if (input.password !== undefined) await this.deps.sessions.revokeAllOfUser(id, at, trx);
      await this.deps.audit.record(
        {
          tenantId,
          action: 'user.update',
          outcome: 'success',
          ...auditActor(actor),
          targetType: 'user',
          targetId: id,
          ...client,
          details: { email: input.email, roles: input.roles, password_changed: input.password !== undefined },
        },
        trx,
      );
    });
    return this.get(tenantId, id);
  }

  async delete(tenantId: string, id: string, actor: LogsAuthContext, client: Client): Promise<void> {
    const user = await this.deps.users.findInTenant(tenantId, id);
    if (!user) throw new AppError('LOGS_NOT_FOUND');
    if (id === actor.userId) throw invalidBody('you cannot delete your own account');
    await this.assertCanActOn(actor, id);
    await this.deps.db.transaction().execute(async (trx) => {
      await this.deps.users.delete(id, trx);
      await this.deps.audit.record(
        {
          tenantId,
          action: 'user.delete',
          outcome: 'success',
          ...auditActor(actor),
          targetType: 'user',
          targetId: id,
          ...client,
          details: { username: user.username },
        },
        trx,
      );
    });
  }

  /** Role names -> roles visible to the tenant; 400 for unknown or repeated names, 403 for grants beyond the actor's own. */
  private async resolveRoles(tenantId: string, names: readonly string[], actor: LogsAuthContext | null): Promise<LogsRolesTable[]> {
    if (new Set(names).size !== names.length) throw invalidBody('duplicate role');
    const roles = await this.deps.roles.findVisibleByNames(tenantId, names);
    const missing = names.find((name) => !roles.some((role) => role.name === name));
    if (missing !== undefined) throw invalidBody(`unknown role "${missing}"`);
    if (actor)
      assertWithinActor(
        actor,
        roles.flatMap((role) => permissionsOfRole(role)),
      );
    return roles;
  }

  private async assertCanActOn(actor: LogsAuthContext, targetId: string): Promise<void> {
    await assertCanActOnUser(actor, this.deps.users, targetId);
  }
}
