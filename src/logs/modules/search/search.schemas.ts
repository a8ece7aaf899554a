import { Type } from 'typebox';

const Iso = Type.String({ format: 'date-time', description: 'ISO 8601 UTC' });
/**
 * No NUL anywhere (PostgreSQL text cannot hold it; SQLite JSON paths stop at it) and no control
 * characters in field names: a 400 from validation instead of a database error.
 */
const NO_NUL = '^[^\\u0000]*$';
const FIELD_NAME = '^[^\\u0000-\\u001f]+$';
const FieldName = Type.String({ minLength: 1, maxLength: 256, pattern: FIELD_NAME });

/** Spec 2.6, shared by paginate and histogram. */
export const SearchFields = {
  query: Type.Optional(
    Type.String({
      maxLength: 4096,
      pattern: NO_NUL,
      description: 'Query language: words, "phrases", field:value, prefix*, NOT/-, AND/OR, parentheses (docs/logs-api.md)',
    }),
  ),
  timeRange: Type.Optional(Type.Object({ from: Iso, to: Iso }, { description: 'Default: the last 24 hours' })),
  filters: Type.Optional(
    Type.Array(Type.Object({ field: FieldName, value: Type.String({ maxLength: 4096, pattern: NO_NUL }) }), { maxItems: 50 }),
  ),
};

export const SearchBody = Type.Object({
  ...SearchFields,
  sort: Type.Optional(Type.Object({ field: FieldName, order: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])) })),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  searchAfter: Type.Optional(
    Type.Object(
      { '@timestamp': Iso, id: Type.String({ minLength: 1, maxLength: 64 }) },
      {
        description:
          'Keyset paging (sort on @timestamp only): the entries after this one, the last of the previous page, in the sort order; `page` is then ignored. Reaches every entry of a range, however many',
      },
    ),
  ),
  trackTotal: Type.Optional(
    Type.Union([Type.Literal(true), Type.Integer({ minimum: 1, maximum: 100_000_000 })], {
      description:
        'Count matches up to this many (default 10,000) and then report totalRelation "gte"; true counts every match (slower for common words)',
    }),
  ),
});

export const HistogramBody = Type.Object({
  ...SearchFields,
  interval: Type.Optional(
    Type.String({ pattern: '^\\d+(ms|s|m|h|d)$', description: 'Bucket width (e.g. 30s, 5m, 1h); chosen for about 60 buckets when absent' }),
  ),
  groupBy: Type.Optional(
    Type.String({ minLength: 1, maxLength: 256, pattern: FIELD_NAME, description: 'Split each bucket by this field (e.g. level)' }),
  ),
});

export const LogEntryView = Type.Object({
  id: Type.String(),
  '@timestamp': Type.String(),
  message: Type.String(),
  level: Type.Optional(Type.String()),
  service: Type.Optional(Type.String()),
  host: Type.Optional(Type.String()),
  trace_id: Type.Optional(Type.String()),
  span_id: Type.Optional(Type.String()),
  tenant_id: Type.String(),
  attributes: Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean()])),
});

export const PageResponse = Type.Object({
  data: Type.Array(LogEntryView),
  page: Type.Integer(),
  limit: Type.Integer(),
  total: Type.Integer(),
  totalRelation: Type.Union([Type.Literal('eq'), Type.Literal('gte')], {
    description: 'eq: total is every match; gte: at least total (counting stopped at trackTotal)',
  }),
  pages: Type.Integer(),
});

export const HistogramResponse = Type.Object({
  interval: Type.String({ description: 'Bucket width, e.g. 1m' }),
  interval_ms: Type.Integer(),
  buckets: Type.Array(
    Type.Object({ ts: Type.String(), count: Type.Integer(), groups: Type.Optional(Type.Record(Type.String(), Type.Integer())) }),
  ),
});

export const FieldsResponse = Type.Object({
  fields: Type.Array(Type.Object({ name: Type.String(), type: Type.String() })),
});

export const DistinctParams = Type.Object({ field: FieldName });
export const DistinctQuery = Type.Object({
  q: Type.Optional(Type.String({ maxLength: 256, pattern: NO_NUL })),
  limit: Type.Integer({ minimum: 1, maximum: 1000, default: 20 }),
  from: Type.Optional(Iso),
  to: Type.Optional(Iso),
});
export const DistinctResponse = Type.Object({
  field: Type.String(),
  values: Type.Array(Type.Object({ value: Type.String(), count: Type.Integer() })),
});

/** Matches a field's statistics are counted in at most, by default (Kibana's Discover shows its sample's size likewise). */
export const DEFAULT_FIELD_STATS_SAMPLE = 2_000;

export const FieldStatsBody = Type.Object({
  ...SearchFields,
  size: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'How many of the most frequent values (default 10)' })),
  sample: Type.Optional(
    Type.Integer({
      minimum: 100,
      maximum: 100_000,
      description: `Matches counted at most: with more, present, distinct and values are of the newest this many (default ${DEFAULT_FIELD_STATS_SAMPLE.toLocaleString('en')}; see sampled)`,
    }),
  ),
});
export const FieldStatsResponse = Type.Object({
  field: Type.String(),
  type: Type.Union([Type.Literal('string'), Type.Literal('number'), Type.Literal('boolean'), Type.Literal('date'), Type.Null()], {
    description: "The field's type in the tenant's logs; null when no entry of the tenant has it",
  }),
  matched: Type.Integer({ description: 'Entries matching the query in the range (always every one)' }),
  sampled: Type.Integer({
    description:
      'Entries present, coverage, distinct and values were counted in: every match (sampled = matched), or with more matches than `sample` the newest `sample` of them by @timestamp (sampled < matched), for a field that the store counts on the rows (level, service and host are counted in every match where the store keeps their counts)',
  }),
  present: Type.Integer({ description: 'Of the entries counted (sampled), those that have the field' }),
  coverage: Type.Number({ description: 'present / sampled (0 when nothing matched)' }),
  distinct: Type.Integer({ description: 'Distinct values of the field among the entries counted' }),
  values: Type.Array(
    Type.Object({
      value: Type.String(),
      count: Type.Integer({ description: 'Entries counted (of sampled) with this value' }),
      share: Type.Number({ description: 'count / sampled' }),
    }),
    { description: 'Most frequent first' },
  ),
});

export const ExportBody = Type.Object({
  ...SearchFields,
  format: Type.Union([Type.Literal('csv'), Type.Literal('ndjson')]),
  order: Type.Optional(
    Type.Union([Type.Literal('desc'), Type.Literal('asc')], { description: 'By @timestamp: newest first (default) or oldest first' }),
  ),
  columns: Type.Optional(
    Type.Array(FieldName, {
      minItems: 1,
      maxItems: 50,
      description:
        "Fields to export, in order (a top-level field or an attribute's dotted name). CSV default: @timestamp, level, service, host, message; NDJSON default: the whole entry",
    }),
  ),
});

export const ContextBody = Type.Object({
  '@timestamp': Type.String({ format: 'date-time', description: "The entry's @timestamp" }),
  id: Type.String({ minLength: 1, maxLength: 64, description: "The entry's id" }),
  by: Type.Optional(
    Type.Union([Type.Literal('host'), Type.Literal('service'), Type.Literal('none')], {
      description: 'Surrounding entries of the same host (default) or service, or of the whole tenant',
    }),
  ),
  before: Type.Optional(Type.Integer({ minimum: 0, maximum: 200, description: 'Entries before it (default 10)' })),
  after: Type.Optional(Type.Integer({ minimum: 0, maximum: 200, description: 'Entries after it (default 10)' })),
});

export const ContextResponse = Type.Object({
  entry: LogEntryView,
  by: Type.String(),
  value: Type.Union([Type.String(), Type.Null()], { description: "The entry's host or service (null: it has none, or by is none)" }),
  before: Type.Array(LogEntryView, { description: 'Oldest first, up to the entry' }),
  after: Type.Array(LogEntryView, { description: 'Oldest first, from the entry on' }),
});

export const PatternsBody = Type.Object({
  ...SearchFields,
  sample: Type.Optional(
    Type.Integer({ minimum: 100, maximum: 50_000, description: 'Entries read at most, spread over the range (default 10,000)' }),
  ),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, description: 'Patterns returned, most frequent first (default 50)' })),
});

export const PatternsResponse = Type.Object({
  matched: Type.Integer({ description: 'Entries matching the search (at least, when matchedRelation is gte)' }),
  matchedRelation: Type.Union([Type.Literal('eq'), Type.Literal('gte')]),
  sampled: Type.Integer({ description: 'Entries grouped: every match, or a sample of them spread over the range' }),
  patterns: Type.Array(
    Type.Object({
      pattern: Type.String({ description: 'The message with its variable parts as <*>' }),
      count: Type.Integer({ description: 'Sampled entries of the pattern' }),
      share: Type.Number({ description: 'count / sampled' }),
      query: Type.String({ description: "A query finding the pattern's entries: its fixed parts as phrases" }),
      example: Type.String(),
    }),
  ),
});
