import { Type } from 'typebox';
import { PERMISSIONS } from '../rbac/permissions.js';

/** Request and response schemas of /api/roles; also the console's types (web/src/api-types.ts). */

const Name = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9._ -]*$' });
const PermissionList = Type.Array(Type.String({ maxLength: 64 }), { maxItems: 64, description: `Any of: ${PERMISSIONS.join(', ')}` });

export const Role = Type.Object({
  id: Type.String(),
  name: Type.String(),
  permissions: Type.Array(Type.String()),
  builtin: Type.Boolean(),
  tenant_id: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  updated_at: Type.String(),
});
export const RolesResponse = Type.Object({ roles: Type.Array(Role) });
export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
export const RoleCreateBody = Type.Object({ name: Name, permissions: PermissionList });
export const RoleUpdateBody = Type.Object({ name: Type.Optional(Name), permissions: Type.Optional(PermissionList) });
