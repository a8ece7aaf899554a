import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses } from '../../http/errors.js';
import type { LogsGuards } from '../auth/authenticate.js';
import type { DashboardsService } from './dashboards.service.js';
import {
  DcQuery,
  DcResponse,
  OverviewQuery,
  OverviewResponse,
  PipelineResponse,
  ThroughputQuery,
  ThroughputResponse,
} from './dashboards.schemas.js';

const SECURED = [{ bearer: [] }];
const tags = ['dashboards'];
const errors = errorResponses(400, 401, 403, 429);

/** Spec 4.5 dashboards (dashboard:read), over the caller's tenant (X-Tenant-Id for tenants:manage). Read-only. */
export function dashboardsRoutes({ dashboards, guards }: { dashboards: DashboardsService; guards: LogsGuards }): FastifyPluginAsyncTypebox {
  const preHandler = guards.requirePermission('dashboard:read');
  return async (app) => {
    app.get(
      '/overview',
      {
        schema: {
          tags,
          security: SECURED,
          querystring: OverviewQuery,
          response: { 200: OverviewResponse, ...errors },
          summary: 'Log volume, error rate, top services, top error messages and active alerts over a range (default the last 24 hours)',
        },
        preHandler,
      },
      async (request) => dashboards.overview(request.tenantId, request.query),
    );

    app.get(
      '/pipeline/status',
      {
        schema: {
          tags,
          security: SECURED,
          response: { 200: PipelineResponse, ...errors },
          summary:
            "The ingestion pipeline now: per source (otlp, bulk, gateway) rates, counts, last ingest, backlog and status; the store's health",
        },
        preHandler,
      },
      async (request) => dashboards.pipelineStatus(request.tenantId),
    );

    app.get(
      '/dc/status',
      {
        schema: {
          tags,
          security: SECURED,
          querystring: DcQuery,
          response: { 200: DcResponse, ...errors },
          summary:
            'Data centers (sites) from configuration with their store health and the services reporting from them (default the last hour)',
        },
        preHandler,
      },
      async (request) => dashboards.dcStatus(request.tenantId, request.query),
    );

    app.get(
      '/throughput',
      {
        schema: {
          tags,
          security: SECURED,
          querystring: ThroughputQuery,
          response: { 200: ThroughputResponse, ...errors },
          summary:
            'Events per second over a range, per ingestion source and per service, every bucket included (default the last 24 hours)',
        },
        preHandler,
      },
      async (request) => dashboards.throughput(request.tenantId, request.query),
    );
  };
}
