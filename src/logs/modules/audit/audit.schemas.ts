import { Type } from 'typebox';

/** Query and response schemas of the audit search and exports; also the console's types (web/src/api-types.ts). */

const Iso = Type.String({ format: 'date-time' });
const FilterQuery = {
  q: Type.Optional(Type.String({ maxLength: 256, description: 'Case-insensitive text in action, actor, target, address or details' })),
  actor: Type.Optional(Type.String({ maxLength: 200 })),
  action: Type.Optional(Type.String({ maxLength: 100 })),
  from: Type.Optional(Iso),
  to: Type.Optional(Iso),
};

export const AuditRow = Type.Object({
  id: Type.String(),
  at: Type.String(),
  tenant_id: Type.String(),
  actor: Type.Union([Type.String(), Type.Null()]),
  actor_id: Type.Union([Type.String(), Type.Null()]),
  action: Type.String(),
  outcome: Type.String(),
  target_type: Type.Union([Type.String(), Type.Null()]),
  target_id: Type.Union([Type.String(), Type.Null()]),
  ip: Type.Union([Type.String(), Type.Null()]),
  user_agent: Type.Union([Type.String(), Type.Null()]),
  request_id: Type.Union([Type.String(), Type.Null()]),
  details: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
});

/** The filter of an export: the search's, without paging. */
export const AuditExportQuery = Type.Object(FilterQuery);

export const AuditSearchQuery = Type.Object({
  ...FilterQuery,
  page: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 }),
  limit: Type.Integer({ minimum: 1, maximum: 1000, default: 50 }),
});

export const AuditSearchResponse = Type.Object({
  data: Type.Array(AuditRow),
  page: Type.Integer(),
  limit: Type.Integer(),
  total: Type.Integer(),
  pages: Type.Integer(),
});
