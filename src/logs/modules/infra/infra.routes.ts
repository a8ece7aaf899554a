import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type TSchema } from 'typebox';
import { errorResponses } from '../../http/errors.js';
import type { LogsGuards } from '../auth/authenticate.js';
import { intervalOf, rangeQuery } from '../query/time-range.js';
import { CONTAINER_METRICS, containersView, HOST_METRICS, hostsView } from './infra.views.js';
import type { BucketQuery, MetricsRepository } from './metrics.repository.js';

export interface InfraDeps {
  metrics: MetricsRepository;
  guards: LogsGuards;
  now: () => number;
}

const SECURED = [{ bearer: [] }];
const tags = ['infrastructure'];
const Iso = Type.String({ format: 'date-time' });
const Value = Type.Union([Type.Number(), Type.Null()]);
const SeriesQuery = Type.Object({
  from: Type.Optional(Iso),
  to: Type.Optional(Iso),
  interval: Type.Optional(Type.String({ maxLength: 16, description: 'bucket width such as 30s, 1m, 1h; about 60 buckets when absent' })),
  host: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
});
const HostPoint = Type.Object({
  ts: Type.String(),
  cpuUtilization: Value,
  load1m: Value,
  memoryUsedBytes: Value,
  memoryUtilization: Value,
  diskUsedBytes: Value,
  diskUtilization: Value,
  diskReadBytesPerSec: Value,
  diskWriteBytesPerSec: Value,
  networkReceiveBytesPerSec: Value,
  networkTransmitBytesPerSec: Value,
});
const ContainerPoint = Type.Object({
  ts: Type.String(),
  cpuCores: Value,
  cpuUtilization: Value,
  memoryUsageBytes: Value,
  memoryWorkingSetBytes: Value,
  networkReceiveBytesPerSec: Value,
  networkTransmitBytesPerSec: Value,
});
const Nullable = Type.Union([Type.String(), Type.Null()]);
/** Every series answer starts with its range and bucket width. */
const SeriesRange = { from: Type.String(), to: Type.String(), interval: Type.String() };
/** What a view says of each entity (host, container or pod) besides its identity (infra.views.ts). */
const entitySeries = <P extends TSchema>(point: P) => ({
  lastSeen: Type.String(),
  metrics: Type.Array(Type.String()),
  latest: Type.Record(Type.String(), Value),
  series: Type.Array(point),
});

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
          response: {
            200: Type.Object({ ...SeriesRange, hosts: Type.Array(Type.Object({ host: Type.String(), ...entitySeries(HostPoint) })) }),
            ...errors,
          },
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
          response: {
            200: Type.Object({
              ...SeriesRange,
              containers: Type.Array(
                Type.Object({
                  kind: Type.String(),
                  id: Type.String(),
                  container: Nullable,
                  pod: Nullable,
                  namespace: Nullable,
                  host: Nullable,
                  ...entitySeries(ContainerPoint),
                }),
              ),
            }),
            ...errors,
          },
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
