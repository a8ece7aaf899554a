import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AppError } from '../../../shared/errors/app-error.js';
import { errorResponses } from '../../http/errors.js';
import type { LogsGuards } from '../auth/authenticate.js';
import { rangeQuery } from '../query/time-range.js';
import { buildServiceMap, spanView, traceSummaryView } from './apm.views.js';
import type { SpansRepository } from './spans.repository.js';

export interface ApmDeps {
  spans: SpansRepository;
  guards: LogsGuards;
  now: () => number;
}

/** Spans the service map reads at most; beyond, the answer says `truncated`. */
export const SERVICE_MAP_MAX_SPANS = 500_000;
const SECURED = [{ bearer: [] }];
const tags = ['apm'];
const Iso = Type.String({ format: 'date-time' });
const RangeQuery = {
  from: Type.Optional(Iso),
  to: Type.Optional(Iso),
};

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);
const Stats = {
  requests: Type.Integer(),
  errors: Type.Integer(),
  requestRate: Type.Number({ description: 'per second over the range' }),
  errorRate: Type.Number({ description: 'errors / requests, 0..1' }),
  p50Ms: Nullable(Type.Number()),
  p95Ms: Nullable(Type.Number()),
};
const SpanBody = Type.Object({
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
const TraceSummary = Type.Object({
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

/** APM views under /api/v1/apm (dashboard:read), over the caller's tenant. */
export function apmRoutes(deps: ApmDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    const preHandler = deps.guards.requirePermission('dashboard:read');
    const errors = errorResponses(400, 401, 403, 429);

    app.get(
      '/traces',
      {
        schema: {
          tags,
          security: SECURED,
          summary:
            'Traces (one row per trace) with a span starting in [from, to), newest first; filters by service, operation, minimum duration, errors',
          querystring: Type.Object({
            ...RangeQuery,
            service: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
            operation: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'span name' })),
            minDurationMs: Type.Optional(Type.Number({ minimum: 0, maximum: 86_400_000 })),
            errorsOnly: Type.Optional(Type.Boolean()),
            page: Type.Integer({ minimum: 1, maximum: 100_000, default: 1 }),
            limit: Type.Integer({ minimum: 1, maximum: 1000, default: 50 }),
          }),
          response: {
            200: Type.Object({
              data: Type.Array(TraceSummary),
              page: Type.Integer(),
              limit: Type.Integer(),
              total: Type.Integer(),
              pages: Type.Integer(),
            }),
            ...errors,
          },
        },
        preHandler,
      },
      async (request) => {
        const { from, to } = rangeQuery(request.query, deps.now());
        const { page, limit } = request.query;
        const { rows, total } = await deps.spans.listTraces({
          tenantId: request.tenantId,
          fromUs: from * 1000,
          toUs: to * 1000,
          service: request.query.service,
          operation: request.query.operation,
          minDurationUs: request.query.minDurationMs === undefined ? undefined : Math.round(request.query.minDurationMs * 1000),
          errorsOnly: request.query.errorsOnly,
          limit,
          offset: (page - 1) * limit,
        });
        const described = await deps.spans.describeTraces(
          request.tenantId,
          rows.map((row) => row.trace_id),
        );
        return {
          data: rows.map((row) => traceSummaryView(row, described.get(row.trace_id))),
          page,
          limit,
          total,
          pages: Math.ceil(total / limit),
        };
      },
    );

    app.get(
      '/traces/:traceId',
      {
        schema: {
          tags,
          security: SECURED,
          summary: 'One trace with all its spans (by start time; parentSpanId makes the tree)',
          params: Type.Object({ traceId: Type.String({ pattern: '^[0-9a-fA-F]{32}$' }) }),
          response: {
            200: Type.Object({
              traceId: Type.String(),
              startTime: Type.String(),
              durationMs: Type.Number(),
              services: Type.Array(Type.String()),
              spans: Type.Array(SpanBody),
            }),
            ...errorResponses(400, 401, 403, 404, 429),
          },
        },
        preHandler,
      },
      async (request) => {
        const traceId = request.params.traceId.toLowerCase();
        const spans = await deps.spans.trace(request.tenantId, traceId);
        if (spans.length === 0) throw new AppError('LOGS_NOT_FOUND');
        const start = Math.min(...spans.map((span) => span.startUs));
        const end = Math.max(...spans.map((span) => span.endUs));
        return {
          traceId,
          startTime: new Date(Math.floor(start / 1000)).toISOString(),
          durationMs: (end - start) / 1000,
          services: [...new Set(spans.map((span) => span.service))].sort(),
          spans: spans.map(spanView),
        };
      },
    );

    const NodeBody = Type.Object({ id: Type.String(), name: Type.String(), instrumented: Type.Boolean(), ...Stats });
    const EdgeBody = Type.Object({ source: Type.String(), target: Type.String(), ...Stats });
    app.get(
      '/service-map',
      {
        schema: {
          tags,
          security: SECURED,
          summary:
            'Services (nodes) and calls between them (edges) over [from, to), each with request rate, error rate and p50/p95 latency',
          querystring: Type.Object(RangeQuery),
          response: {
            200: Type.Object({
              from: Type.String(),
              to: Type.String(),
              truncated: Type.Boolean(),
              nodes: Type.Array(NodeBody),
              edges: Type.Array(EdgeBody),
            }),
            ...errors,
          },
        },
        preHandler,
      },
      async (request) => {
        const { from, to } = rangeQuery(request.query, deps.now());
        const [rows, services] = await Promise.all([
          deps.spans.mapSpans(request.tenantId, from * 1000, to * 1000, SERVICE_MAP_MAX_SPANS + 1),
          deps.spans.services(request.tenantId, from * 1000, to * 1000),
        ]);
        const truncated = rows.length > SERVICE_MAP_MAX_SPANS;
        const map = buildServiceMap(truncated ? rows.slice(0, SERVICE_MAP_MAX_SPANS) : rows, new Set(services), (to - from) / 1000);
        return { from: new Date(from).toISOString(), to: new Date(to).toISOString(), truncated, ...map };
      },
    );
  };
}
