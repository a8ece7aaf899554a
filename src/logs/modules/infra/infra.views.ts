import type { BucketRow } from './metrics.repository.js';
import { dict, type Dict } from '../../../shared/dict.js';

/**
 * The infrastructure views: from bucketed series (MetricsRepository.buckets) to per-host and
 * per-container time series, with the OpenTelemetry Collector's metric names (docs/infra.md maps
 * each field to its sources). Gauges are averaged per bucket; cumulative counters become per-second
 * rates from the last value of consecutive buckets (a counter reset gives no value, not a negative).
 */

interface Series {
  attributes: Record<string, unknown>;
  buckets: Map<number, BucketRow>;
  sorted: number[];
}
type Metrics = Map<string, Series[]>;
type Pred = (attributes: Record<string, unknown>) => boolean;

const all: Pred = () => true;
const attrIs =
  (key: string, value: string): Pred =>
  (attributes) =>
    attributes[key] === value;
const attrIsNot =
  (key: string, value: string): Pred =>
  (attributes) =>
    attributes[key] !== value;

/** Metric names read by the host view (hostmetrics receiver). */
export const HOST_METRICS = [
  'system.cpu.utilization',
  'system.cpu.time',
  'system.cpu.load_average.1m',
  'system.memory.usage',
  'system.memory.utilization',
  'system.filesystem.usage',
  'system.filesystem.utilization',
  'system.disk.io',
  'system.network.io',
] as const;

/** Metric names read by the container view (kubeletstats and docker_stats receivers). */
export const CONTAINER_METRICS = [
  'container.cpu.usage',
  'container.cpu.time',
  'container.cpu.utilization',
  'container.cpu.usage.total',
  'container.memory.usage',
  'container.memory.usage.total',
  'container.memory.working_set',
  'container.network.io.usage.rx_bytes',
  'container.network.io.usage.tx_bytes',
  'k8s.pod.cpu.usage',
  'k8s.pod.cpu.time',
  'k8s.pod.cpu.utilization',
  'k8s.pod.memory.usage',
  'k8s.pod.memory.working_set',
  'k8s.pod.network.io',
] as const;

function parseAttributes(text: string): Dict<unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? dict(value as Record<string, unknown>) : dict();
  } catch {
    return dict();
  }
}

function collect(rows: BucketRow[]): Metrics {
  const byKey = new Map<string, Series>();
  const metrics: Metrics = new Map();
  for (const row of rows) {
    const key = `${row.name}\u0000${row.attributes}`;
    let series = byKey.get(key);
    if (!series) {
      byKey.set(key, (series = { attributes: parseAttributes(row.attributes), buckets: new Map(), sorted: [] }));
      metrics.set(row.name, [...(metrics.get(row.name) ?? []), series]);
    }
    series.buckets.set(row.bucket, row);
  }
  for (const series of byKey.values()) series.sorted = [...series.buckets.keys()].sort((a, b) => a - b);
  return metrics;
}

const sumOrNull = (values: (number | null)[]): number | null => {
  const present = values.filter((value): value is number => value !== null && Number.isFinite(value));
  return present.length === 0 ? null : present.reduce((a, b) => a + b, 0);
};

/** Sum over the matching series of their average in the bucket. */
function gauge(metrics: Metrics, name: string, bucket: number, pred: Pred = all): number | null {
  return sumOrNull((metrics.get(name) ?? []).filter((s) => pred(s.attributes)).map((s) => s.buckets.get(bucket)?.avg ?? null));
}

/** Average over the matching series of their average in the bucket. */
function gaugeMean(metrics: Metrics, name: string, bucket: number, pred: Pred = all): number | null {
  const values = (metrics.get(name) ?? [])
    .filter((s) => pred(s.attributes))
    .map((s) => s.buckets.get(bucket)?.avg)
    .filter((v): v is number => v !== undefined);
  return values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length;
}

/** Per-second rate of one series in the bucket. */
function seriesRate(series: Series, bucket: number, intervalMs: number): number | null {
  const row = series.buckets.get(bucket);
  if (!row) return null;
  if (row.temporality === 1) return row.sum / (intervalMs / 1000);
  const index = series.sorted.indexOf(bucket);
  const previous = index > 0 ? series.buckets.get(series.sorted[index - 1]!) : undefined;
  if (previous && row.last_ts > previous.last_ts) {
    const delta = row.max - previous.max;
    return delta >= 0 ? delta / ((row.last_ts - previous.last_ts) / 1000) : null;
  }
  if (row.last_ts > row.first_ts) return (row.max - row.min) / ((row.last_ts - row.first_ts) / 1000);
  return null;
}

function rate(metrics: Metrics, name: string, bucket: number, intervalMs: number, pred: Pred = all): number | null {
  return sumOrNull((metrics.get(name) ?? []).filter((s) => pred(s.attributes)).map((s) => seriesRate(s, bucket, intervalMs)));
}

const has = (metrics: Metrics, name: string) => (metrics.get(name)?.length ?? 0) > 0;
const ratio = (part: number | null, whole: number | null) => (part === null || whole === null || whole <= 0 ? null : part / whole);
const hasState = (metrics: Metrics, name: string) => (metrics.get(name) ?? []).some((s) => 'state' in s.attributes);

/** CPU utilisation 0..1 of a host in the bucket. */
function cpuUtilization(metrics: Metrics, bucket: number, intervalMs: number): number | null {
  if (has(metrics, 'system.cpu.utilization')) {
    if (!hasState(metrics, 'system.cpu.utilization')) return gaugeMean(metrics, 'system.cpu.utilization', bucket);
    const series = (metrics.get('system.cpu.utilization') ?? []).filter((s) => s.buckets.has(bucket));
    const cpus = new Set(series.map((s) => JSON.stringify(s.attributes.cpu ?? ''))).size || 1;
    const busy = gauge(metrics, 'system.cpu.utilization', bucket, attrIsNot('state', 'idle'));
    return busy === null ? null : busy / cpus;
  }
  return ratio(
    rate(metrics, 'system.cpu.time', bucket, intervalMs, attrIsNot('state', 'idle')),
    rate(metrics, 'system.cpu.time', bucket, intervalMs),
  );
}

function usedOf(metrics: Metrics, name: string, bucket: number): number | null {
  return hasState(metrics, name) ? gauge(metrics, name, bucket, attrIs('state', 'used')) : gauge(metrics, name, bucket);
}

export interface HostPoint {
  ts: string;
  cpuUtilization: number | null;
  load1m: number | null;
  memoryUsedBytes: number | null;
  memoryUtilization: number | null;
  diskUsedBytes: number | null;
  diskUtilization: number | null;
  diskReadBytesPerSec: number | null;
  diskWriteBytesPerSec: number | null;
  networkReceiveBytesPerSec: number | null;
  networkTransmitBytesPerSec: number | null;
}

export interface ContainerPoint {
  ts: string;
  cpuCores: number | null;
  cpuUtilization: number | null;
  memoryUsageBytes: number | null;
  memoryWorkingSetBytes: number | null;
  networkReceiveBytesPerSec: number | null;
  networkTransmitBytesPerSec: number | null;
}

function hostPoint(metrics: Metrics, bucket: number, ts: string, intervalMs: number): HostPoint {
  const memoryUsed = usedOf(metrics, 'system.memory.usage', bucket);
  const diskUsed = usedOf(metrics, 'system.filesystem.usage', bucket);
  return {
    ts,
    cpuUtilization: cpuUtilization(metrics, bucket, intervalMs),
    load1m: gaugeMean(metrics, 'system.cpu.load_average.1m', bucket),
    memoryUsedBytes: memoryUsed,
    memoryUtilization: has(metrics, 'system.memory.utilization')
      ? usedOf(metrics, 'system.memory.utilization', bucket)
      : hasState(metrics, 'system.memory.usage')
        ? ratio(memoryUsed, gauge(metrics, 'system.memory.usage', bucket))
        : null,
    diskUsedBytes: diskUsed,
    diskUtilization: hasState(metrics, 'system.filesystem.usage')
      ? ratio(diskUsed, gauge(metrics, 'system.filesystem.usage', bucket))
      : gaugeMean(metrics, 'system.filesystem.utilization', bucket),
    diskReadBytesPerSec: rate(metrics, 'system.disk.io', bucket, intervalMs, attrIs('direction', 'read')),
    diskWriteBytesPerSec: rate(metrics, 'system.disk.io', bucket, intervalMs, attrIs('direction', 'write')),
    networkReceiveBytesPerSec: rate(metrics, 'system.network.io', bucket, intervalMs, attrIs('direction', 'receive')),
    networkTransmitBytesPerSec: rate(metrics, 'system.network.io', bucket, intervalMs, attrIs('direction', 'transmit')),
  };
}

const firstOf = (...values: (() => number | null)[]): number | null => {
  for (const value of values) {
    const result = value();
    if (result !== null) return result;
  }
  return null;
};

function containerPoint(metrics: Metrics, bucket: number, ts: string, intervalMs: number): ContainerPoint {
  const docker = (name: string) => rate(metrics, name, bucket, intervalMs);
  return {
    ts,
    cpuCores: firstOf(
      () => gauge(metrics, 'container.cpu.usage', bucket),
      () => gauge(metrics, 'k8s.pod.cpu.usage', bucket),
      () => rate(metrics, 'container.cpu.time', bucket, intervalMs),
      () => rate(metrics, 'k8s.pod.cpu.time', bucket, intervalMs),
      () => {
        const ns = docker('container.cpu.usage.total');
        return ns === null ? null : ns / 1e9;
      },
    ),
    cpuUtilization: firstOf(
      () => gauge(metrics, 'container.cpu.utilization', bucket),
      () => gauge(metrics, 'k8s.pod.cpu.utilization', bucket),
    ),
    memoryUsageBytes: firstOf(
      () => gauge(metrics, 'container.memory.usage', bucket),
      () => gauge(metrics, 'container.memory.usage.total', bucket),
      () => gauge(metrics, 'k8s.pod.memory.usage', bucket),
    ),
    memoryWorkingSetBytes: firstOf(
      () => gauge(metrics, 'container.memory.working_set', bucket),
      () => gauge(metrics, 'k8s.pod.memory.working_set', bucket),
    ),
    networkReceiveBytesPerSec: firstOf(
      () => rate(metrics, 'k8s.pod.network.io', bucket, intervalMs, attrIs('direction', 'receive')),
      () => docker('container.network.io.usage.rx_bytes'),
    ),
    networkTransmitBytesPerSec: firstOf(
      () => rate(metrics, 'k8s.pod.network.io', bucket, intervalMs, attrIs('direction', 'transmit')),
      () => docker('container.network.io.usage.tx_bytes'),
    ),
  };
}

/** The last non-null value of each field over the series. */
function latestOf<T extends { ts: string }>(points: T[]): Omit<T, 'ts'> {
  const latest = dict<unknown>();
  for (const point of points) {
    for (const [key, value] of Object.entries(point)) {
      if (key === 'ts') continue;
      if (value !== null || !(key in latest)) latest[key] = value;
    }
  }
  return latest as Omit<T, 'ts'>;
}

function bucketTimes(from: number, to: number, intervalMs: number): { bucket: number; ts: string }[] {
  const out: { bucket: number; ts: string }[] = [];
  for (let bucket = 0; from + bucket * intervalMs < to; bucket += 1)
    out.push({ bucket, ts: new Date(from + bucket * intervalMs).toISOString() });
  return out;
}

function group(rows: BucketRow[], keyOf: (row: BucketRow) => string): Map<string, BucketRow[]> {
  const groups = new Map<string, BucketRow[]>();
  for (const row of rows) {
    const key = keyOf(row);
    const list = groups.get(key);
    if (list) list.push(row);
    else groups.set(key, [row]);
  }
  return groups;
}

const lastSeenOf = (rows: BucketRow[]) => new Date(Math.max(...rows.map((row) => row.last_ts))).toISOString();

export function hostsView(rows: BucketRow[], from: number, to: number, intervalMs: number) {
  const times = bucketTimes(from, to, intervalMs);
  return [...group(rows, (row) => row.host ?? '')]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([host, hostRows]) => {
      const metrics = collect(hostRows);
      const series = times.map(({ bucket, ts }) => hostPoint(metrics, bucket, ts, intervalMs));
      return { host, lastSeen: lastSeenOf(hostRows), metrics: [...metrics.keys()].sort(), latest: latestOf(series), series };
    });
}

export function containersView(rows: BucketRow[], from: number, to: number, intervalMs: number) {
  const times = bucketTimes(from, to, intervalMs);
  // A container is known by its id within its pod (kubeletstats reuses container names across pods).
  const keyOf = (row: BucketRow) => JSON.stringify([row.container !== null ? 'container' : 'pod', row.namespace, row.pod, row.container]);
  return [...group(rows, keyOf)]
    .map(([key, entityRows]) => {
      const [kind, namespace, pod, container] = JSON.parse(key) as ['container' | 'pod', string | null, string | null, string | null];
      const metrics = collect(entityRows);
      const series = times.map(({ bucket, ts }) => containerPoint(metrics, bucket, ts, intervalMs));
      return {
        kind,
        id: kind === 'container' ? container! : `${namespace ?? ''}/${pod ?? ''}`,
        container,
        pod,
        namespace,
        host: entityRows.find((row) => row.host !== null)?.host ?? null,
        lastSeen: lastSeenOf(entityRows),
        metrics: [...metrics.keys()].sort(),
        latest: latestOf(series),
        series,
      };
    })
    .sort((a, b) => a.kind.localeCompare(b.kind) || a.id.localeCompare(b.id) || (a.pod ?? '').localeCompare(b.pod ?? ''));
}
