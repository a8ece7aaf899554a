import { AppError } from '../../../shared/errors/app-error.js';
import type { LogsRolesTable } from '../../db/schema.js';
import { permissionsOfRole, type Permission } from './permissions.js';

/** The caller's permissions, as the guards resolved them. */
export interface Actor {
  readonly permissions: ReadonlySet<Permission>;
}

/**
 * Least privilege, the one rule for every users:manage / roles:manage action: an actor may only
 * hand out permissions they hold (a grant), and may only act on a user or role whose permissions
 * are all their own (a target no more powerful than the actor). Otherwise 403.
 */
export function assertWithinActor(actor: Actor, permissions: Iterable<Permission>): void {
  for (const permission of permissions) if (!actor.permissions.has(permission)) throw new AppError('LOGS_PERMISSION_DENIED');
}

/** 403 unless every permission the target user holds is also the actor's (no acting on a more powerful user). */
export async function assertCanActOnUser(
  actor: Actor,
  users: { rolesOf(userIds: readonly string[]): Promise<Map<string, LogsRolesTable[]>> },
  targetId: string,
): Promise<void> {
  const roles = (await users.rolesOf([targetId])).get(targetId) ?? [];
  assertWithinActor(
    actor,
    roles.flatMap((role) => permissionsOfRole(role)),
  );
}
