import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError } from '../../../shared/errors/app-error.js';
import { errorResponses } from '../../http/errors.js';
import type { LogsGuards } from '../auth/authenticate.js';
import { rangeQuery } from '../query/time-range.js';
import { RangeQuery, ServiceMapResponse, TraceParams, TraceResponse, TracesQuery, TracesResponse } from './apm.schemas.js';
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
          querystring: TracesQuery,
          response: { 200: TracesResponse, ...errors },
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
          params: TraceParams,
          response: { 200: TraceResponse, ...errorResponses(400, 401, 403, 404, 429) },
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

    app.get(
      '/service-map',
      {
        schema: {
          tags,
          security: SECURED,
          summary:
            'Services (nodes) and calls between them (edges) over [from, to), each with request rate, error rate and p50/p95 latency',
          querystring: RangeQuery,
          response: { 200: ServiceMapResponse, ...errors },
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
