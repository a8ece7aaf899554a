import { Type } from 'typebox';
import { PERMISSIONS } from '../rbac/permissions.js';

/** Request and response schemas of /api/v1/api-keys; also the console's types (web/src/api-types.ts). */

const Nullable = Type.Union([Type.String(), Type.Null()]);

/** A key as listed: never its secret. */
export const ApiKey = Type.Object({
  id: Type.String(),
  name: Type.String(),
  tenant_id: Type.String(),
  user_id: Type.String(),
  permissions: Type.Array(Type.String()),
  created_by: Type.String(),
  created_at: Type.String(),
  expires_at: Nullable,
  revoked_at: Nullable,
  last_used_at: Nullable,
});
/** The answer to a creation, the only one holding the secret. */
export const ApiKeyCreated = Type.Intersect([ApiKey, Type.Object({ api_key: Type.String(), encoded: Type.String() })]);
export const ApiKeysResponse = Type.Object({ api_keys: Type.Array(ApiKey) });
export const ApiKeysQuery = Type.Object({ user_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })) });
export const ApiKeyIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
export const ApiKeyCreateBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 128 }),
  permissions: Type.Array(Type.String({ maxLength: 64 }), {
    minItems: 1,
    maxItems: 64,
    description: `Any of: ${PERMISSIONS.join(', ')}`,
  }),
  expires_at: Type.Optional(Type.String({ maxLength: 64, description: 'ISO 8601; none: the key does not expire' })),
  user_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'The owner; default the caller' })),
});
