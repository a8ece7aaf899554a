/** The permissions of spec 4.5, plus `logs:write` for ingestion. */
export const PERMISSIONS = [
  'logs:read',
  'logs:write',
  'alerts:read',
  'alerts:write',
  'dashboard:read',
  'audit:read',
  'audit:export',
  'tenants:manage',
  'users:manage',
  'roles:manage',
] as const;

export type Permission = (typeof PERMISSIONS)[number];

export function isPermission(name: string): name is Permission {
  return (PERMISSIONS as readonly string[]).includes(name);
}

/** A permission name known at wiring time (a module's route table); a typo fails at start, not per request. */
export function asPermission(name: string): Permission {
  if (!isPermission(name)) throw new Error(`unknown permission "${name}"`);
  return name;
}

/** Built-in roles (tenant-less, seeded by migration, not editable through the API). */
export const ADMIN_ROLE_ID = 'admin';
export const VIEWER_ROLE_ID = 'viewer';
export const VIEWER_PERMISSIONS: readonly Permission[] = ['logs:read', 'alerts:read', 'dashboard:read'];
/** `logs:write` only: the role of shipping accounts (the gateway's own, see ingest-account.ts). */
export const INGEST_ROLE_ID = 'ingest';

/** The built-in admin role always holds every permission, including ones added by later versions. */
export function permissionsOfRole(role: { id: string; permissions: string }): Permission[] {
  if (role.id === ADMIN_ROLE_ID) return [...PERMISSIONS];
  const parsed = JSON.parse(role.permissions) as unknown;
  return Array.isArray(parsed) ? parsed.filter((p): p is Permission => typeof p === 'string' && isPermission(p)) : [];
}

export const DEFAULT_TENANT_ID = 'default';
