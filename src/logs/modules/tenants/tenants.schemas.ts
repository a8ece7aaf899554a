import { Type } from 'typebox';

/** Request and response schemas of /api/tenants; also the console's types (web/src/api-types.ts). */

const Name = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$' });
const RetentionDays = Type.Integer({ minimum: 1, maximum: 36_500, description: 'Days of logs kept' });

export const Tenant = Type.Object({
  id: Type.String(),
  name: Type.String(),
  retention_days: Type.Integer(),
  created_at: Type.String(),
  updated_at: Type.String(),
});
export const TenantsResponse = Type.Object({ tenants: Type.Array(Tenant) });
export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
export const TenantCreateBody = Type.Object({ name: Name, retention_days: Type.Optional(RetentionDays) });
/** retention_days null: back to the service's default. */
export const TenantUpdateBody = Type.Object({
  name: Type.Optional(Name),
  retention_days: Type.Optional(Type.Union([RetentionDays, Type.Null()])),
});
