import { readFile, statfs } from 'node:fs/promises';
import os from 'node:os';
import type { MetricPoint } from './metric-point.js';
import { dict } from '../../../shared/dict.js';
import type { Job } from '../../../shared/lifecycle.js';

/**
 * The logs service's own host, sampled in process with the hostmetrics receiver's names, so a
 * single machine shows infrastructure data without an OpenTelemetry Collector. Cumulative values
 * (CPU time, network bytes) are written as the receiver does; the views turn them into rates.
 */
export interface SelfMetricsOptions {
  write: (tenantId: string, points: MetricPoint[]) => Promise<void>;
  tenantId: string;
  now: () => number;
  hostName?: string;
  /** The filesystem reported (statfs). */
  mountpoint?: string;
  /** Where network counters are read (Linux); absent or unreadable: no network points. */
  netDevPath?: string;
}

const CPU_STATES: [keyof os.CpuInfo['times'], string][] = [
  ['user', 'user'],
  ['nice', 'nice'],
  ['sys', 'system'],
  ['idle', 'idle'],
  ['irq', 'interrupt'],
];

/** /proc/net/dev -> bytes received and transmitted per device. */
export function parseNetDev(text: string): { device: string; receive: number; transmit: number }[] {
  return text
    .split('\n')
    .slice(2)
    .flatMap((line) => {
      const match = /^\s*([^:\s]+):\s*(.*)$/.exec(line);
      if (!match) return [];
      const fields = match[2]!.trim().split(/\s+/).map(Number);
      if (fields.length < 9 || fields.some((n) => !Number.isFinite(n))) return [];
      return [{ device: match[1]!, receive: fields[0]!, transmit: fields[8]! }];
    });
}

export class SelfMetricsSampler {
  private readonly hostName: string;

  constructor(private readonly options: SelfMetricsOptions) {
    this.hostName = options.hostName ?? os.hostname();
  }

  /** Takes one sample and stores it; returns the points written. */
  async sample(): Promise<MetricPoint[]> {
    const ts = this.options.now();
    const host = this.hostName;
    const point = (
      name: string,
      type: 'gauge' | 'sum',
      unit: string,
      value: number,
      attributes: Record<string, string | number> = dict(),
      temporality: number | null = null,
    ): MetricPoint => ({
      ts,
      name,
      type,
      temporality,
      unit,
      host,
      container: null,
      pod: null,
      namespace: null,
      resource: { 'os.type': os.platform() },
      attributes,
      value,
      count: null,
    });
    const points: MetricPoint[] = [];
    os.cpus().forEach((cpu, index) => {
      for (const [key, state] of CPU_STATES)
        points.push(point('system.cpu.time', 'sum', 's', cpu.times[key] / 1000, { cpu: `cpu${index}`, state }, 2));
    });
    const [load1, load5, load15] = os.loadavg();
    points.push(
      point('system.cpu.load_average.1m', 'gauge', '{thread}', load1!),
      point('system.cpu.load_average.5m', 'gauge', '{thread}', load5!),
      point('system.cpu.load_average.15m', 'gauge', '{thread}', load15!),
    );
    const total = os.totalmem();
    const free = os.freemem();
    points.push(
      point('system.memory.usage', 'sum', 'By', total - free, { state: 'used' }, 2),
      point('system.memory.usage', 'sum', 'By', free, { state: 'free' }, 2),
      point('system.memory.utilization', 'gauge', '1', (total - free) / total, { state: 'used' }),
      point('system.memory.utilization', 'gauge', '1', free / total, { state: 'free' }),
    );
    const mountpoint = this.options.mountpoint ?? '/';
    try {
      const fs = await statfs(mountpoint);
      const attributes = { device: mountpoint, mountpoint };
      points.push(
        point('system.filesystem.usage', 'sum', 'By', (fs.blocks - fs.bfree) * fs.bsize, dict({ ...attributes, state: 'used' }), 2),
        point('system.filesystem.usage', 'sum', 'By', fs.bavail * fs.bsize, dict({ ...attributes, state: 'free' }), 2),
        point('system.filesystem.usage', 'sum', 'By', (fs.bfree - fs.bavail) * fs.bsize, dict({ ...attributes, state: 'reserved' }), 2),
      );
    } catch {
      // No filesystem figures on this platform: the other metrics still go out.
    }
    try {
      for (const device of parseNetDev(await readFile(this.options.netDevPath ?? '/proc/net/dev', 'utf8'))) {
        if (device.device === 'lo') continue;
        points.push(
          point('system.network.io', 'sum', 'By', device.receive, { device: device.device, direction: 'receive' }, 2),
          point('system.network.io', 'sum', 'By', device.transmit, { device: device.device, direction: 'transmit' }, 2),
        );
      }
    } catch {
      // Not Linux, or no procfs: no network counters.
    }
    const memory = process.memoryUsage();
    points.push({
      ...point('process.memory.usage', 'sum', 'By', memory.rss, dict(), 2),
      resource: { 'os.type': os.platform(), 'process.pid': process.pid, 'service.name': 'gerbang-logs' },
    });
    await this.options.write(this.options.tenantId, points);
    return points;
  }
}

/** A sample at start, then every `intervalMs` (LOGS_SELF_METRICS_INTERVAL; 0: never). */
export function selfMetricsJob(sampler: SelfMetricsSampler, intervalMs: number): Job {
  return { name: 'self metrics sample', intervalMs, runAtStart: true, run: () => sampler.sample() };
}
