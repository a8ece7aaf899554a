import { Type } from 'typebox';

const Iso = Type.String({ format: 'date-time', description: 'ISO 8601 UTC' });
const NO_NUL = '^[^\\u0000]*$';
const FIELD_NAME = '^[^\\u0000-\\u001f]+$';

/** How many saved searches a tenant may keep (a list is one page). */
export const MAX_SAVED_SEARCHES = 1000;

export const SavedSearchRange = Type.Union(
  [
    Type.Object(
      { relative: Type.String({ pattern: '^now-[1-9][0-9]{0,5}[smhdw]$', description: 'Up to now: now-15m, now-1h, now-7d' }) },
      { additionalProperties: false },
    ),
    Type.Object({ from: Iso, to: Iso }, { additionalProperties: false }),
  ],
  { description: 'A relative range ending now, or an absolute one' },
);

export const SavedSearchFields = {
  name: Type.String({ minLength: 1, maxLength: 200, pattern: '^[^\\u0000-\\u001f]*\\S[^\\u0000-\\u001f]*$' }),
  query: Type.String({ maxLength: 4096, pattern: NO_NUL }),
  range: SavedSearchRange,
  columns: Type.Array(Type.String({ minLength: 1, maxLength: 256, pattern: FIELD_NAME }), {
    maxItems: 50,
    description: 'Fields shown as columns, in order (empty: the default columns)',
  }),
  sort: Type.Union([Type.Literal('desc'), Type.Literal('asc')], { description: 'By @timestamp: newest (desc) or oldest (asc) first' }),
};

export const SavedSearchCreateBody = Type.Object(
  {
    name: SavedSearchFields.name,
    query: Type.Optional(SavedSearchFields.query),
    range: Type.Optional(SavedSearchFields.range),
    columns: Type.Optional(SavedSearchFields.columns),
    sort: Type.Optional(SavedSearchFields.sort),
  },
  { additionalProperties: false },
);

export const SavedSearchUpdateBody = Type.Object(
  {
    name: Type.Optional(SavedSearchFields.name),
    query: Type.Optional(SavedSearchFields.query),
    range: Type.Optional(SavedSearchFields.range),
    columns: Type.Optional(SavedSearchFields.columns),
    sort: Type.Optional(SavedSearchFields.sort),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const SavedSearch = Type.Object({
  id: Type.String(),
  ...SavedSearchFields,
  owner: Type.Object({ id: Type.String(), username: Type.String() }),
  created_at: Type.String(),
  updated_at: Type.String(),
  can_edit: Type.Boolean({ description: 'Whether the caller may rename, change or delete it (its owner, or users:manage)' }),
});

export const SavedSearchesResponse = Type.Object({ data: Type.Array(SavedSearch, { description: 'By name' }) });

export const SavedSearchParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
