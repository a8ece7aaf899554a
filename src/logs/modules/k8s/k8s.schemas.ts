import { Type, type TSchema } from 'typebox';

/** Response and query schemas of the Kubernetes views; they are also the OpenAPI description. */

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Timestamp = Type.String({ format: 'date-time' });

export const ErrorBody = Type.Object({ error: Type.String() }, { description: 'The logs service error shape' });

const Resources = Type.Object({
  cpuMillicores: Nullable(Type.Integer({ description: 'CPU in millicores (1000 = one core)' })),
  memoryBytes: Nullable(Type.Integer({ description: 'Memory in bytes' })),
  pods: Nullable(Type.Integer({ description: 'Pod slots' })),
});

export const NodeItem = Type.Object({
  name: Type.String(),
  roles: Type.Array(Type.String(), { description: 'From node-role.kubernetes.io/<role> labels; empty for a plain worker' }),
  status: Type.Union([Type.Literal('Ready'), Type.Literal('NotReady'), Type.Literal('Unknown')], {
    description: 'From the Ready condition (Unknown: the kubelet stopped reporting)',
  }),
  ready: Type.Boolean(),
  unschedulable: Type.Boolean({ description: 'Cordoned' }),
  conditions: Type.Array(
    Type.Object({
      type: Type.String(),
      status: Type.String({ description: 'True, False or Unknown' }),
      reason: Nullable(Type.String()),
      message: Nullable(Type.String()),
      lastTransitionTime: Nullable(Timestamp),
    }),
  ),
  capacity: Resources,
  allocatable: Resources,
  usage: Type.Optional(
    Type.Object(
      {
        cpuMillicores: Type.Integer(),
        memoryBytes: Type.Integer(),
        cpuPercent: Nullable(Type.Number({ description: 'Of allocatable CPU' })),
        memoryPercent: Nullable(Type.Number({ description: 'Of allocatable memory' })),
        timestamp: Nullable(Timestamp),
        window: Nullable(Type.String({ description: 'Sampling window, e.g. 20.0s' })),
      },
      { description: 'From metrics-server; absent when it does not answer' },
    ),
  ),
  kubeletVersion: Nullable(Type.String()),
  osImage: Nullable(Type.String()),
  kernelVersion: Nullable(Type.String()),
  containerRuntime: Nullable(Type.String()),
  architecture: Nullable(Type.String()),
  createdAt: Nullable(Timestamp),
  ageSeconds: Nullable(Type.Integer()),
});

export const NodesResponse = Type.Object({
  metricsAvailable: Type.Boolean({ description: 'Whether metrics-server answered (usage is present on nodes only then)' }),
  items: Type.Array(NodeItem),
});

const ContainerItem = Type.Object({
  name: Type.String(),
  image: Nullable(Type.String()),
  ready: Type.Boolean(),
  restarts: Type.Integer(),
  state: Type.Union([Type.Literal('running'), Type.Literal('waiting'), Type.Literal('terminated'), Type.Literal('unknown')]),
  reason: Nullable(Type.String({ description: 'e.g. CrashLoopBackOff, ImagePullBackOff, Completed, OOMKilled' })),
  message: Nullable(Type.String()),
  exitCode: Nullable(Type.Integer()),
  startedAt: Nullable(Timestamp),
  lastTermination: Nullable(
    Type.Object(
      {
        reason: Nullable(Type.String()),
        exitCode: Nullable(Type.Integer()),
        finishedAt: Nullable(Timestamp),
      },
      { description: 'Why the previous run of the container ended (after a restart)' },
    ),
  ),
});

export const PodItem = Type.Object({
  name: Type.String(),
  namespace: Type.String(),
  phase: Type.String({ description: 'Pending, Running, Succeeded, Failed or Unknown' }),
  status: Type.String({ description: 'What `kubectl get pods` shows in STATUS, e.g. CrashLoopBackOff, Init:0/1, Terminating' }),
  readyContainers: Type.Integer(),
  totalContainers: Type.Integer(),
  restarts: Type.Integer({ description: 'Sum over the containers' }),
  node: Nullable(Type.String()),
  qosClass: Nullable(Type.String()),
  createdAt: Nullable(Timestamp),
  ageSeconds: Nullable(Type.Integer()),
  containers: Type.Array(ContainerItem),
});

export const PodsQuery = Type.Object({
  namespace: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 63,
      pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$',
      description: 'Only this namespace (all when absent)',
    }),
  ),
  labelSelector: Type.Optional(
    Type.String({ minLength: 1, maxLength: 1024, description: 'Kubernetes label selector, e.g. app=web,tier!=cache' }),
  ),
  limit: Type.Integer({ minimum: 1, maximum: 1000, default: 500, description: 'Page size' }),
  continue: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, description: 'The `continue` of the previous page' })),
});

export const PodsResponse = Type.Object({
  items: Type.Array(PodItem),
  continue: Nullable(Type.String({ description: 'Pass as `continue` for the next page; null on the last page' })),
});

const Problem = Type.Object({
  severity: Type.Union([Type.Literal('critical'), Type.Literal('warning')]),
  kind: Type.Union([Type.Literal('Node'), Type.Literal('Pod')]),
  name: Type.String(),
  namespace: Nullable(Type.String()),
  reason: Type.String({
    description:
      'NotReady, MemoryPressure, DiskPressure, PIDPressure, NetworkUnavailable, CrashLoopBackOff, ImagePullBackOff, Unschedulable, Failed…',
  }),
  message: Type.String(),
});

export const ClusterHealthResponse = Type.Object({
  status: Type.Union([Type.Literal('healthy'), Type.Literal('degraded'), Type.Literal('unhealthy')], {
    description: 'unhealthy: no node is Ready; degraded: at least one problem; healthy: none',
  }),
  checkedAt: Timestamp,
  apiServer: Type.Object({
    reachable: Type.Literal(true),
    version: Type.String({ description: 'e.g. v1.29.4' }),
    platform: Nullable(Type.String()),
  }),
  nodes: Type.Object({ total: Type.Integer(), ready: Type.Integer(), notReady: Type.Integer() }),
  pods: Type.Object({
    total: Type.Integer(),
    running: Type.Integer(),
    pending: Type.Integer(),
    succeeded: Type.Integer(),
    failed: Type.Integer(),
    unknown: Type.Integer(),
  }),
  problemCount: Type.Integer({ description: 'All problems found; `problems` lists at most 100, critical first' }),
  problems: Type.Array(Problem),
});
