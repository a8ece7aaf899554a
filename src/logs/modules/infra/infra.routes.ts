import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses } from '../../http/errors.js';
import type { LogsGuards } from '../auth/authenticate.js';
import { intervalOf, rangeQuery } from '../query/time-range.js';
import { ContainersResponse, HostsResponse, SeriesQuery } from './infra.schemas.js';
import { CONTAINER_METRICS, containersView, HOST_METRICS, hostsView } from './infra.views.js';
import type { BucketQuery, MetricsRepository } from './metrics.repository.js';

export interface InfraDeps {
  metrics: MetricsRepository;
  guards: LogsGuards;
  now: () => number;
}

const SECURED = [{ bearer: [] }];
const tags = ['infrastructure'];
/** Infrastructure views under /api/v1/infra (dashboard:read), over the caller's tenant. */
export function infraRoutes(deps: InfraDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    const preHandler = deps.guards.requirePermission('dashboard:read');
    const errors = errorResponses(400, 401, 403, 429);
    /** The range and bucket width of a series request, and the metric buckets of one kind of entity in it. */
    const series = async (
      tenantId: string,
      query: { from?: string | undefined; to?: string | undefined; interval?: string | undefined; host?: string | undefined },
      entity: BucketQuery['entity'],
      names: readonly string[],
    ) => {
      const { from, to } = rangeQuery(query, deps.now());
      const interval = intervalOf(query.interval, from, to);
      const rows = await deps.metrics.buckets({ tenantId, names, from, to, intervalMs: interval.ms, entity, host: query.host });
      const range = { from: new Date(from).toISOString(), to: new Date(to).toISOString(), interval: interval.label };
      return { range, rows, from, to, intervalMs: interval.ms };
    };

    app.get(
      '/metrics',
      {
        schema: {
          tags,
          security: SECURED,
          summary:
            'Per host: CPU, memory, disk and network over [from, to) in buckets, from OTLP host metrics (hostmetrics receiver names)',
          querystring: SeriesQuery,
          response: { 200: HostsResponse, ...errors },
        },
        preHandler,
      },
      async (request) => {
        const { range, rows, from, to, intervalMs } = await series(request.tenantId, request.query, 'host', HOST_METRICS);
        return { ...range, hosts: hostsView(rows, from, to, intervalMs) };
      },
    );

    app.get(
      '/containers',
      {
        schema: {
          tags,
          security: SECURED,
          summary:
            'Per container (container.id) or pod (k8s.pod.name): CPU, memory and network over [from, to), from kubeletstats / docker_stats metrics',
          querystring: SeriesQuery,
          response: { 200: ContainersResponse, ...errors },
        },
        preHandler,
      },
      async (request) => {
        const { range, rows, from, to, intervalMs } = await series(request.tenantId, request.query, 'container', CONTAINER_METRICS);
        return { ...range, containers: containersView(rows, from, to, intervalMs) };
      },
    );
  };
}
