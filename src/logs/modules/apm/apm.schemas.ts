import { Type } from 'typebox';

/** Query and response schemas of the APM views; also the console's types (web/src/api-types.ts). */

const Iso = Type.String({ format: 'date-time' });
const Range = {
  from: Type.Optional(Iso),
  to: Type.Optional(Iso),
};
export const RangeQuery = Type.Object(Range);

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);
const Stats = {
  requests: Type.Integer(),
  errors: Type.Integer(),
  requestRate: Type.Number({ description: 'per second over the range' }),
  errorRate: Type.Number({ description: 'errors / requests, 0..1' }),
  p50Ms: Nullable(Type.Number()),
  p95Ms: Nullable(Type.Number()),
};

export const SpanBody = Type.Object({
  traceId: Type.String(),
  spanId: Type.String(),
  parentSpanId: Nullable(Type.String()),
  service: Type.String(),
  name: Type.String(),
  kind: Type.String(),
  startTime: Type.String(),
  startTimeUs: Type.Number(),
  durationMs: Type.Number(),
  status: Type.Object({ code: Type.String(), message: Nullable(Type.String()) }),
  peerService: Nullable(Type.String()),
  attributes: Type.Record(Type.String(), Type.Unknown()),
  events: Type.Array(Type.Object({ name: Type.String(), time: Type.String(), attributes: Type.Record(Type.String(), Type.Unknown()) })),
});

export const TraceSummary = Type.Object({
  traceId: Type.String(),
  startTime: Type.String(),
  durationMs: Type.Number(),
  spanCount: Type.Integer(),
  errorCount: Type.Integer(),
  error: Type.Boolean(),
  root: Nullable(
    Type.Object({ service: Type.String(), name: Type.String(), kind: Type.String(), durationMs: Type.Number(), status: Type.String() }),
  ),
  services: Type.Array(Type.Object({ service: Type.String(), spans: Type.Integer() })),
});

export const TracesQuery = Type.Object({
  ...Range,
  service: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
  operation: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'span name' })),
  minDurationMs: Type.Optional(Type.Number({ minimum: 0, maximum: 86_400_000 })),
  errorsOnly: Type.Optional(Type.Boolean()),
  page: Type.Integer({ minimum: 1, maximum: 100_000, default: 1 }),
  limit: Type.Integer({ minimum: 1, maximum: 1000, default: 50 }),
});

export const TracesResponse = Type.Object({
  data: Type.Array(TraceSummary),
  page: Type.Integer(),
  limit: Type.Integer(),
  total: Type.Integer(),
  pages: Type.Integer(),
});

export const TraceParams = Type.Object({ traceId: Type.String({ pattern: '^[0-9a-fA-F]{32}$' }) });

export const TraceResponse = Type.Object({
  traceId: Type.String(),
  startTime: Type.String(),
  durationMs: Type.Number(),
  services: Type.Array(Type.String()),
  spans: Type.Array(SpanBody),
});

export const MapNode = Type.Object({ id: Type.String(), name: Type.String(), instrumented: Type.Boolean(), ...Stats });
export const MapEdge = Type.Object({ source: Type.String(), target: Type.String(), ...Stats });

export const ServiceMapResponse = Type.Object({
  from: Type.String(),
  to: Type.String(),
  truncated: Type.Boolean(),
  nodes: Type.Array(MapNode),
  edges: Type.Array(MapEdge),
});
