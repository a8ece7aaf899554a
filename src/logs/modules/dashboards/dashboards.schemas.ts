import { Type } from 'typebox';

const Iso = Type.String({ format: 'date-time', description: 'ISO 8601 UTC' });
const NullableIso = Type.Union([Iso, Type.Null()]);
const Interval = Type.String({
  pattern: '^\\d+(ms|s|m|h|d)$',
  description: 'Bucket width (e.g. 1m, 5m, 1h); chosen for about 60 buckets when absent',
});
const Health = Type.Union([Type.Literal('healthy'), Type.Literal('degraded'), Type.Literal('down')]);

const RangeQuery = {
  from: Type.Optional(Type.String({ format: 'date-time', description: 'Range start (inclusive), ISO 8601' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'Range end (exclusive), ISO 8601; default now' })),
};

export const OverviewQuery = Type.Object(
  {
    ...RangeQuery,
    interval: Type.Optional(Interval),
    top: Type.Integer({ minimum: 1, maximum: 50, default: 10, description: 'How many top services and top error messages' }),
  },
  { additionalProperties: false },
);

export const DcQuery = Type.Object({ ...RangeQuery }, { additionalProperties: false });

export const ThroughputQuery = Type.Object(
  {
    ...RangeQuery,
    interval: Type.Optional(
      Type.String({ pattern: '^\\d+(m|h|d)$', description: 'Bucket width, whole minutes (1m, 5m, 1h, 1d); about 60 buckets when absent' }),
    ),
    services: Type.Integer({
      minimum: 1,
      maximum: 50,
      default: 10,
      description: 'Services with their own series; the rest are summed into `other`',
    }),
  },
  { additionalProperties: false },
);

const RangeView = Type.Object({ from: Iso, to: Iso });

const StoreHealth = Type.Object({
  status: Type.Union([Type.Literal('up'), Type.Literal('down'), Type.Literal('unknown')], {
    description: 'unknown: a remote site, whose store this service cannot reach',
  }),
  latency_ms: Type.Union([Type.Number(), Type.Null()]),
  checked_at: NullableIso,
  error: Type.Optional(Type.String()),
});

export const OverviewResponse = Type.Object({
  range: RangeView,
  interval: Type.String(),
  interval_ms: Type.Integer(),
  volume: Type.Object({
    total: Type.Integer({ description: 'Entries in the range' }),
    series: Type.Array(Type.Object({ ts: Iso, count: Type.Integer(), errors: Type.Integer() }), {
      description: 'Every bucket of the range, empty ones included',
    }),
  }),
  errors: Type.Object({
    total: Type.Integer({ description: 'Entries of level error or fatal' }),
    rate: Type.Number({ description: 'errors.total / volume.total, 0..1 (0 without entries)' }),
    by_level: Type.Record(Type.String(), Type.Integer()),
  }),
  top_services: Type.Array(
    Type.Object({
      service: Type.String({ description: '"(none)" for entries without a service' }),
      count: Type.Integer(),
      share: Type.Number({ description: 'count / volume.total, 0..1' }),
      errors: Type.Integer(),
      error_rate: Type.Number({ description: 'errors / count, 0..1' }),
    }),
  ),
  top_errors: Type.Array(
    Type.Object({
      message: Type.String({ description: 'The message (first 1,000 characters)' }),
      count: Type.Integer(),
      last_seen: Iso,
      services: Type.Array(Type.String(), { description: 'Services that logged it (at most 5)' }),
    }),
  ),
  alerts: Type.Object({
    available: Type.Boolean({ description: 'false when the alerts provider failed' }),
    active_total: Type.Integer(),
    by_severity: Type.Record(Type.String(), Type.Integer()),
  }),
});

const SourceStatus = Type.Object({
  source: Type.String({ description: 'otlp, bulk, gateway, or another ingestion source' }),
  status: Health,
  reasons: Type.Array(Type.String(), { description: 'Why the status is not healthy; empty when healthy' }),
  active: Type.Boolean({ description: 'Has stored data since the service started' }),
  rates: Type.Object({
    stored_per_second_1m: Type.Number(),
    stored_per_second_5m: Type.Number(),
    received_per_second_1m: Type.Number(),
    received_per_second_5m: Type.Number(),
  }),
  last_5m: Type.Object({
    batches: Type.Integer(),
    received: Type.Integer(),
    stored: Type.Integer(),
    rejected: Type.Integer(),
    rejected_ratio: Type.Number({ description: 'rejected / received, 0..1' }),
    store_failures: Type.Integer(),
    avg_ingest_latency_ms: Type.Union([Type.Number(), Type.Null()]),
    max_ingest_latency_ms: Type.Union([Type.Number(), Type.Null()]),
  }),
  totals: Type.Object(
    {
      batches: Type.Integer(),
      received: Type.Integer(),
      accepted: Type.Integer({ description: 'Entries durably stored' }),
      rejected: Type.Integer(),
      store_failures: Type.Integer(),
    },
    { description: 'Since the service started (`since`)' },
  ),
  last_ingest_at: NullableIso,
  last_failure_at: NullableIso,
  backlog: Type.Integer({ description: 'Entries received and being written now; append is synchronous, so 0 when idle' }),
});

export const PipelineResponse = Type.Object({
  status: Health,
  checked_at: Iso,
  since: Type.String({ format: 'date-time', description: 'When the service started counting' }),
  store: StoreHealth,
  backlog: Type.Integer(),
  thresholds: Type.Object({
    down_after_ms: Type.Integer(),
    degraded_rejected_percent: Type.Number(),
    slow_ingest_ms: Type.Integer(),
  }),
  sources: Type.Array(SourceStatus),
});

const SiteService = Type.Object({
  service: Type.String(),
  count: Type.Integer({ description: 'Entries in the range' }),
  last_seen: Iso,
  status: Type.Union([Type.Literal('up'), Type.Literal('stale')], { description: 'stale: nothing for longer than the down threshold' }),
});

export const DcResponse = Type.Object({
  range: RangeView,
  checked_at: Iso,
  local_site: Type.String(),
  sites: Type.Array(
    Type.Object({
      id: Type.String(),
      name: Type.String(),
      local: Type.Boolean(),
      status: Type.Union([Health, Type.Literal('unknown')]),
      reasons: Type.Array(Type.String()),
      store: StoreHealth,
      volume: Type.Integer(),
      last_seen: NullableIso,
      services: Type.Array(SiteService),
    }),
  ),
  unassigned: Type.Array(
    Type.Object({
      dc: Type.String({ description: 'A dc / cloud.region value matching no configured site' }),
      volume: Type.Integer(),
      last_seen: Iso,
      services: Type.Array(SiteService),
    }),
  ),
});

const Point = Type.Object({
  ts: Iso,
  count: Type.Integer(),
  eps: Type.Number({ description: 'Events per second: count / bucket seconds' }),
});

export const ThroughputResponse = Type.Object({
  range: RangeView,
  interval: Type.String(),
  interval_ms: Type.Integer(),
  sources: Type.Array(
    Type.Object({
      source: Type.String(),
      total: Type.Integer({ description: 'Entries stored in the range (by ingestion time)' }),
      rejected: Type.Integer(),
      series: Type.Array(Point),
    }),
    { description: 'By ingestion time, per source' },
  ),
  services: Type.Array(
    Type.Object({
      service: Type.String({ description: '"(none)" without a service; "(other)" sums the services beyond the top ones' }),
      total: Type.Integer(),
      series: Type.Array(Point),
    }),
    { description: 'By event time (@timestamp), per service' },
  ),
});
