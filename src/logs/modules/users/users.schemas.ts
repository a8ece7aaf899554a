import { Type } from 'typebox';

/** Request and response schemas of /api/users; also the console's types (web/src/api-types.ts). */

const Username = Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9][A-Za-z0-9._@-]*$' });
const Email = Type.String({ format: 'email', maxLength: 254 });
/** Rules are checked by the password policy, for a message naming the rule. */
const Password = Type.String({ maxLength: 1024 });
const RoleNames = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 32 });

export const User = Type.Object({
  id: Type.String(),
  username: Type.String(),
  email: Type.String(),
  tenant_id: Type.String(),
  roles: Type.Array(Type.String()),
  created_at: Type.String(),
  updated_at: Type.String(),
});
export const UsersResponse = Type.Object({ users: Type.Array(User) });
export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
export const UserCreateBody = Type.Object({ username: Username, email: Email, password: Password, roles: RoleNames });
export const UserUpdateBody = Type.Object({
  email: Type.Optional(Email),
  password: Type.Optional(Password),
  roles: Type.Optional(RoleNames),
});
