import { Type, type TSchema } from 'typebox';

/** Query and response schemas of the infrastructure views; also the console's types (web/src/api-types.ts). */

const Iso = Type.String({ format: 'date-time' });
const Value = Type.Union([Type.Number(), Type.Null()]);
export const SeriesQuery = Type.Object({
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

export const HostsResponse = Type.Object({
  ...SeriesRange,
  hosts: Type.Array(Type.Object({ host: Type.String(), ...entitySeries(HostPoint) })),
});

export const ContainersResponse = Type.Object({
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
});
