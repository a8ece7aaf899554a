import { Type } from 'typebox';

/** Request and response schemas of login, refresh, logout and /me; also the console's types (web/src/api-types.ts). */

export const LoginBody = Type.Object({
  username: Type.String({ minLength: 1, maxLength: 128 }),
  password: Type.String({ minLength: 1, maxLength: 1024 }),
});
export const RefreshBody = Type.Object({ refresh_token: Type.String({ minLength: 1, maxLength: 512 }) });

const TokenObject = Type.Object({
  access_token: Type.String({ description: 'JWT (ES256)' }),
  expires_in: Type.Integer({ description: 'Seconds (300 by default)' }),
  refresh_token: Type.String({ description: 'Opaque, single use' }),
  token_type: Type.Literal('Bearer'),
});
export const Me = Type.Object({
  username: Type.String(),
  email: Type.String(),
  roles: Type.Array(Type.String()),
  permissions: Type.Array(Type.String(), { description: 'What the user may do now (the console shows only what they may use)' }),
  tenant_id: Type.String(),
});
export const LoginResponse = Type.Object({
  token: TokenObject,
  user: Type.Object({ username: Type.String(), roles: Type.Array(Type.String()), email: Type.String() }),
});
export const RefreshResponse = Type.Object({ token: TokenObject });
export const LogoutResponse = Type.Object({ status: Type.Literal('ok') });
