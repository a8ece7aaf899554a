import type { V1ContainerStatus, V1Node, V1Pod, VersionInfo } from '@kubernetes/client-node';
import type { NodeUsage } from './k8s.cluster.js';
import { cpuMillicores, wholeUnits } from './quantity.js';

/**
 * Pure functions from Kubernetes objects to what the console shows. Kept apart from the client so
 * the rules (what is a problem, what a pod's status reads) sit in one place.
 */

export interface Resources {
  cpuMillicores: number | null;
  memoryBytes: number | null;
  pods: number | null;
}

export interface NodeView {
  name: string;
  roles: string[];
  status: 'Ready' | 'NotReady' | 'Unknown';
  ready: boolean;
  unschedulable: boolean;
  conditions: { type: string; status: string; reason: string | null; message: string | null; lastTransitionTime: string | null }[];
  capacity: Resources;
  allocatable: Resources;
  usage?: {
    cpuMillicores: number;
    memoryBytes: number;
    cpuPercent: number | null;
    memoryPercent: number | null;
    timestamp: string | null;
    window: string | null;
  };
  kubeletVersion: string | null;
  osImage: string | null;
  kernelVersion: string | null;
  containerRuntime: string | null;
  architecture: string | null;
  createdAt: string | null;
  ageSeconds: number | null;
}

export interface ContainerView {
  name: string;
  image: string | null;
  ready: boolean;
  restarts: number;
  state: 'running' | 'waiting' | 'terminated' | 'unknown';
  reason: string | null;
  message: string | null;
  exitCode: number | null;
  startedAt: string | null;
  lastTermination: { reason: string | null; exitCode: number | null; finishedAt: string | null } | null;
}

export interface PodView {
  name: string;
  namespace: string;
  phase: string;
  status: string;
  readyContainers: number;
  totalContainers: number;
  restarts: number;
  node: string | null;
  qosClass: string | null;
  createdAt: string | null;
  ageSeconds: number | null;
  containers: ContainerView[];
}

export interface Problem {
  severity: 'critical' | 'warning';
  kind: 'Node' | 'Pod';
  name: string;
  namespace: string | null;
  reason: string;
  message: string;
}

export interface ClusterHealth {
  status: 'healthy' | 'degraded' | 'unhealthy';
  checkedAt: string;
  apiServer: { reachable: true; version: string; platform: string | null };
  nodes: { total: number; ready: number; notReady: number };
  pods: { total: number; running: number; pending: number; succeeded: number; failed: number; unknown: number };
  problemCount: number;
  problems: Problem[];
}

/** At most this many problems are listed (most severe first); problemCount has them all. */
export const MAX_PROBLEMS = 100;
/** Node conditions that mean trouble when their status is "True". */
const PRESSURE_CONDITIONS = ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'NetworkUnavailable'];
/** Container waiting reasons that will not clear by themselves. */
const BAD_WAITING_REASONS = new Set([
  'CrashLoopBackOff',
  'ImagePullBackOff',
  'ErrImagePull',
  'InvalidImageName',
  'CreateContainerConfigError',
  'CreateContainerError',
  'RunContainerError',
]);

function iso(value: Date | string | undefined): string | null {
  if (value === undefined) return null;
  const date = value instanceof Date ? value : new Date(value);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

function ageSeconds(created: Date | string | undefined, now: number): number | null {
  const at = iso(created);
  return at === null ? null : Math.max(0, Math.floor((now - Date.parse(at)) / 1000));
}

function resources(list: Record<string, string> | undefined): Resources {
  return {
    cpuMillicores: cpuMillicores(list?.cpu) ?? null,
    memoryBytes: wholeUnits(list?.memory) ?? null,
    pods: wholeUnits(list?.pods) ?? null,
  };
}

/** `node-role.kubernetes.io/<role>` labels, or the older `kubernetes.io/role` value, as kubectl shows them. */
function nodeRoles(labels: Record<string, string> | undefined): string[] {
  const roles = new Set<string>();
  for (const [key, value] of Object.entries(labels ?? {})) {
    if (key.startsWith('node-role.kubernetes.io/') && key.length > 'node-role.kubernetes.io/'.length)
      roles.add(key.slice('node-role.kubernetes.io/'.length));
    else if (key === 'kubernetes.io/role' && value) roles.add(value);
  }
  return [...roles].sort();
}

function nodeStatus(node: V1Node): NodeView['status'] {
  const ready = node.status?.conditions?.find((condition) => condition.type === 'Ready');
  if (ready?.status === 'True') return 'Ready';
  if (ready?.status === 'False') return 'NotReady';
  return 'Unknown';
}

function percent(part: number, whole: number | null): number | null {
  return whole ? Math.round((part / whole) * 1000) / 10 : null;
}

export function nodeView(node: V1Node, now: number, usage?: NodeUsage): NodeView {
  const status = nodeStatus(node);
  const info = node.status?.nodeInfo;
  const allocatable = resources(node.status?.allocatable);
  const view: NodeView = {
    name: node.metadata?.name ?? '',
    roles: nodeRoles(node.metadata?.labels),
    status,
    ready: status === 'Ready',
    unschedulable: node.spec?.unschedulable === true,
    conditions: (node.status?.conditions ?? []).map((condition) => ({
      type: condition.type,
      status: condition.status,
      reason: condition.reason ?? null,
      message: condition.message ?? null,
      lastTransitionTime: iso(condition.lastTransitionTime),
    })),
    capacity: resources(node.status?.capacity),
    allocatable,
    kubeletVersion: info?.kubeletVersion ?? null,
    osImage: info?.osImage ?? null,
    kernelVersion: info?.kernelVersion ?? null,
    containerRuntime: info?.containerRuntimeVersion ?? null,
    architecture: info?.architecture ?? null,
    createdAt: iso(node.metadata?.creationTimestamp),
    ageSeconds: ageSeconds(node.metadata?.creationTimestamp, now),
  };
  const cpu = cpuMillicores(usage?.cpu);
  const memory = wholeUnits(usage?.memory);
  if (usage && cpu !== undefined && memory !== undefined) {
    view.usage = {
      cpuMillicores: cpu,
      memoryBytes: memory,
      // Of allocatable, as `kubectl top nodes` computes it.
      cpuPercent: percent(cpu, allocatable.cpuMillicores),
      memoryPercent: percent(memory, allocatable.memoryBytes),
      timestamp: iso(usage.timestamp),
      window: usage.window ?? null,
    };
  }
  return view;
}

function containerView(name: string, image: string | undefined, status: V1ContainerStatus | undefined): ContainerView {
  const state = status?.state;
  const last = status?.lastState?.terminated;
  const base = {
    name,
    image: status?.image ?? image ?? null,
    ready: status?.ready ?? false,
    restarts: status?.restartCount ?? 0,
    lastTermination: last ? { reason: last.reason ?? null, exitCode: last.exitCode ?? null, finishedAt: iso(last.finishedAt) } : null,
  };
  if (state?.running)
    return { ...base, state: 'running', reason: null, message: null, exitCode: null, startedAt: iso(state.running.startedAt) };
  if (state?.waiting)
    return {
      ...base,
      state: 'waiting',
      reason: state.waiting.reason ?? null,
      message: state.waiting.message ?? null,
      exitCode: null,
      startedAt: null,
    };
  if (state?.terminated) {
    const t = state.terminated;
    return {
      ...base,
      state: 'terminated',
      reason: t.reason ?? null,
      message: t.message ?? null,
      exitCode: t.exitCode ?? null,
      startedAt: iso(t.startedAt),
    };
  }
  return { ...base, state: 'unknown', reason: null, message: null, exitCode: null, startedAt: null };
}

/** The STATUS column of `kubectl get pods` (its printer's rules, without the rarely seen cases). */
export function podDisplayStatus(pod: V1Pod): string {
  const phase = pod.status?.phase ?? 'Unknown';
  let reason = pod.status?.reason || phase;
  const inits = pod.status?.initContainerStatuses ?? [];
  let initializing = false;
  for (const [index, init] of inits.entries()) {
    const terminated = init.state?.terminated;
    const waiting = init.state?.waiting;
    if (terminated && terminated.exitCode === 0) continue;
    initializing = true;
    if (terminated)
      reason = `Init:${terminated.reason || (terminated.signal ? `Signal:${terminated.signal}` : `ExitCode:${terminated.exitCode}`)}`;
    else if (waiting?.reason && waiting.reason !== 'PodInitializing') reason = `Init:${waiting.reason}`;
    else reason = `Init:${index}/${inits.length}`;
    break;
  }
  if (!initializing) {
    let hasRunning = false;
    for (const container of [...(pod.status?.containerStatuses ?? [])].reverse()) {
      const { waiting, terminated, running } = container.state ?? {};
      if (waiting?.reason) reason = waiting.reason;
      else if (terminated?.reason) reason = terminated.reason;
      else if (terminated) reason = terminated.signal ? `Signal:${terminated.signal}` : `ExitCode:${terminated.exitCode}`;
      else if (container.ready && running) hasRunning = true;
    }
    if (reason === 'Completed' && hasRunning) reason = 'Running';
  }
  if (pod.metadata?.deletionTimestamp) reason = pod.status?.reason === 'NodeLost' ? 'Unknown' : 'Terminating';
  return reason;
}

export function podView(pod: V1Pod, now: number): PodView {
  const statuses = pod.status?.containerStatuses ?? [];
  const specContainers = pod.spec?.containers ?? [];
  // Spec order, which is what the user wrote; statuses can be missing while a pod is scheduled.
  const containers =
    specContainers.length > 0
      ? specContainers.map((container) =>
          containerView(
            container.name,
            container.image,
            statuses.find((status) => status.name === container.name),
          ),
        )
      : statuses.map((status) => containerView(status.name, status.image, status));
  return {
    name: pod.metadata?.name ?? '',
    namespace: pod.metadata?.namespace ?? '',
    phase: pod.status?.phase ?? 'Unknown',
    status: podDisplayStatus(pod),
    readyContainers: containers.filter((container) => container.ready).length,
    totalContainers: containers.length,
    restarts: containers.reduce((sum, container) => sum + container.restarts, 0),
    node: pod.spec?.nodeName ?? null,
    qosClass: pod.status?.qosClass ?? null,
    createdAt: iso(pod.metadata?.creationTimestamp),
    ageSeconds: ageSeconds(pod.metadata?.creationTimestamp, now),
    containers,
  };
}

function nodeProblems(node: V1Node): Problem[] {
  const name = node.metadata?.name ?? '';
  const problems: Problem[] = [];
  const ready = node.status?.conditions?.find((condition) => condition.type === 'Ready');
  if (ready?.status !== 'True') {
    problems.push({
      severity: 'critical',
      kind: 'Node',
      name,
      namespace: null,
      reason: 'NotReady',
      message: ready?.message || ready?.reason || 'the node reports no Ready condition',
    });
  }
  for (const condition of node.status?.conditions ?? []) {
    if (PRESSURE_CONDITIONS.includes(condition.type) && condition.status === 'True') {
      problems.push({
        severity: 'warning',
        kind: 'Node',
        name,
        namespace: null,
        reason: condition.type,
        message: condition.message || condition.reason || condition.type,
      });
    }
  }
  return problems;
}

function podProblems(pod: V1Pod): Problem[] {
  const name = pod.metadata?.name ?? '';
  const namespace = pod.metadata?.namespace ?? '';
  const problem = (reason: string, message: string): Problem => ({ severity: 'warning', kind: 'Pod', name, namespace, reason, message });
  const phase = pod.status?.phase;
  if (phase === 'Succeeded') return [];
  const problems: Problem[] = [];
  for (const container of [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]) {
    const waiting = container.state?.waiting;
    if (waiting?.reason && BAD_WAITING_REASONS.has(waiting.reason)) {
      const last = container.lastState?.terminated;
      const lastText = last ? `, last terminated: ${last.reason ?? 'exit'} (exit code ${last.exitCode})` : '';
      problems.push(problem(waiting.reason, `container ${container.name}: ${container.restartCount} restarts${lastText}`));
    }
  }
  if (phase === 'Failed') problems.push(problem('Failed', pod.status?.message || pod.status?.reason || 'the pod failed'));
  if (phase === 'Unknown') problems.push(problem('Unknown', 'the pod state cannot be obtained (its node may be unreachable)'));
  if (phase === 'Pending') {
    const scheduled = pod.status?.conditions?.find((condition) => condition.type === 'PodScheduled');
    if (scheduled?.status === 'False')
      problems.push(problem(scheduled.reason || 'Unschedulable', scheduled.message || 'the pod cannot be scheduled'));
  }
  return problems;
}

export function clusterHealth(version: VersionInfo, nodes: V1Node[], pods: V1Pod[], now: number): ClusterHealth {
  const ready = nodes.filter((node) => nodeStatus(node) === 'Ready').length;
  const phases = { running: 0, pending: 0, succeeded: 0, failed: 0, unknown: 0 };
  for (const pod of pods) {
    const key = (pod.status?.phase ?? 'Unknown').toLowerCase() as keyof typeof phases;
    phases[key in phases ? key : 'unknown'] += 1;
  }
  const problems = [...nodes.flatMap(nodeProblems), ...pods.flatMap(podProblems)];
  // Critical first; the sort is stable, so nodes come before pods within a severity.
  problems.sort((a, b) => (a.severity === b.severity ? 0 : a.severity === 'critical' ? -1 : 1));
  const status = ready === 0 ? 'unhealthy' : problems.length > 0 ? 'degraded' : 'healthy';
  return {
    status,
    checkedAt: new Date(now).toISOString(),
    apiServer: { reachable: true, version: version.gitVersion, platform: version.platform || null },
    nodes: { total: nodes.length, ready, notReady: nodes.length - ready },
    pods: { total: pods.length, ...phases },
    problemCount: problems.length,
    problems: problems.slice(0, MAX_PROBLEMS),
  };
}
