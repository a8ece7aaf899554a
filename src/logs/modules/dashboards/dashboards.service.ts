import { invalidBody } from '../../http/errors.js';
import type { PipelineStats, SourceCounters, WindowCounters } from '../ingest/pipeline-stats.js';
import type { LogStore } from '../store/index.js';
import { DAY, MINUTE, mod } from '../store/minutes.js';
import { filtersToCondition } from '../query/condition.js';
import { intervalOf, rangeQuery } from '../query/time-range.js';
import type { DashboardsConfig } from './dashboards.config.js';
import type { SourceCounts } from './source-counts.js';
import { dict, type Dict } from '../../../shared/dict.js';

/** Levels counted as errors by the overview (levels are stored lower-case). */
export const ERROR_LEVELS = ['error', 'fatal'] as const;
/** The sources every pipeline and throughput view lists, even before their first batch. */
export const KNOWN_SOURCES = ['otlp', 'bulk', 'gateway'] as const;
export const NO_SERVICE = '(none)';
export const OTHER_SERVICES = '(other)';

export type Health = 'healthy' | 'degraded' | 'down';

export interface StoreHealth {
  status: 'up' | 'down' | 'unknown';
  latency_ms: number | null;
  checked_at: string | null;
  error?: string;
}

export interface DashboardsDeps {
  /** Every read of log entries and rollups (within the store's read budget, on its read side). */
  store: LogStore;
  stats: PipelineStats;
  sourceCounts: SourceCounts;
  config: DashboardsConfig;
  now: () => number;
  /** Active (firing, acknowledged) alerts of the tenant by severity; the alerts module provides it. */
  activeAlertsBySeverity: (tenantId: string) => Promise<Record<string, number>>;
  /** Where a failed store check or alerts provider is logged (never in the response). */
  logError?: (error: unknown, what: string) => void;
}

export interface RangeInput {
  from?: string | undefined;
  to?: string | undefined;
}

const iso = (ms: number) => new Date(ms).toISOString();
const ratio = (part: number, whole: number) => (whole > 0 ? round(part / whole, 6) : 0);
const round = (value: number, digits = 3) => Number(value.toFixed(digits));

/**
 * The read side of the operations dashboards (docs/dashboards.md): everything is computed per
 * tenant from the log store, the persisted per-minute source counts and the in-process pipeline
 * counters.
 */
export class DashboardsService {
  constructor(private readonly deps: DashboardsDeps) {}

  async overview(tenantId: string, input: RangeInput & { interval?: string | undefined; top: number }) {
    const { store } = this.deps;
    const { from, to } = rangeQuery(input, this.deps.now(), DAY);
    const interval = intervalOf(input.interval, from, to);
    const last = to - 1; // the store's `to` is inclusive
    const [byLevel, services, errorsByService, topErrors, alerts] = await Promise.all([
      store.histogram({ tenantId, from, to: last, intervalMs: interval.ms, groupBy: 'level' }),
      store.distinct({ tenantId, field: 'service', from, to: last, limit: 10_000 }),
      Promise.all(
        ERROR_LEVELS.map((level) =>
          store.histogram({
            tenantId,
            from,
            to: last,
            intervalMs: interval.ms,
            groupBy: 'service',
            condition: filtersToCondition([{ field: 'level', value: level }]),
          }),
        ),
      ),
      this.topErrors(tenantId, from, to, input.top),
      this.alerts(tenantId),
    ]);

    const byLevelTotal = dict<number>();
    const series = byLevel.map((bucket) => {
      let errors = 0;
      for (const [level, count] of Object.entries(bucket.groups ?? {})) {
        byLevelTotal[level] = (byLevelTotal[level] ?? 0) + count;
        if ((ERROR_LEVELS as readonly string[]).includes(level)) errors += count;
      }
      return { ts: iso(bucket.ts), count: bucket.count, errors };
    });
    const total = series.reduce((sum, bucket) => sum + bucket.count, 0);
    const errorTotal = series.reduce((sum, bucket) => sum + bucket.errors, 0);

    const serviceErrors = new Map<string, number>();
    for (const buckets of errorsByService) {
      for (const bucket of buckets) {
        for (const [service, count] of Object.entries(bucket.groups ?? {}))
          serviceErrors.set(service, (serviceErrors.get(service) ?? 0) + count);
      }
    }
    // distinct() leaves out entries without a service: they are the rest of the total.
    const counted = services.reduce((sum, item) => sum + item.count, 0);
    const allServices = total - counted > 0 ? [...services, { value: '', count: total - counted }] : services;
    const topServices = allServices
      .sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : 1))
      .slice(0, input.top)
      .map(({ value, count }) => {
        const errors = serviceErrors.get(value) ?? 0;
        return { service: value === '' ? NO_SERVICE : value, count, share: ratio(count, total), errors, error_rate: ratio(errors, count) };
      });

    const errorLevels = dict<number>();
    for (const level of ERROR_LEVELS) errorLevels[level] = byLevelTotal[level] ?? 0;
    return {
      range: { from: iso(from), to: iso(to) },
      interval: interval.label,
      interval_ms: interval.ms,
      volume: { total, series },
      errors: { total: errorTotal, rate: ratio(errorTotal, total), by_level: errorLevels },
      top_services: topServices,
      top_errors: topErrors,
      alerts,
    };
  }

  /** The most frequent error messages of the range, grouped by exact message. */
  private async topErrors(tenantId: string, from: number, to: number, limit: number) {
    const top = await this.deps.store.topMessages({ tenantId, from, to, levels: ERROR_LEVELS, limit });
    return top.map((row) => ({
      message: row.message.slice(0, 1000),
      count: row.count,
      last_seen: iso(row.lastSeen),
      services: row.services,
    }));
  }

  private async alerts(tenantId: string) {
    try {
      const bySeverity = await this.deps.activeAlertsBySeverity(tenantId);
      const clean = dict<number>();
      for (const [severity, count] of Object.entries(bySeverity))
        if (Number.isFinite(count) && count > 0) clean[severity] = Math.floor(count);
      return { available: true, active_total: Object.values(clean).reduce((a, b) => a + b, 0), by_severity: clean };
    } catch (error) {
      this.deps.logError?.(error, 'active alerts provider failed');
      return { available: false, active_total: 0, by_severity: {} };
    }
  }

  /** A cheap query on the store's tables. */
  async storeHealth(): Promise<StoreHealth> {
    const started = performance.now();
    const checkedAt = iso(this.deps.now());
    try {
      await this.deps.store.ping();
      return { status: 'up', latency_ms: round(performance.now() - started, 1), checked_at: checkedAt };
    } catch (error) {
      this.deps.logError?.(error, 'store health check failed');
      return { status: 'down', latency_ms: null, checked_at: checkedAt, error: 'store query failed' };
    }
  }

  async pipelineStatus(tenantId: string) {
    const { stats, config } = this.deps;
    const now = this.deps.now();
    const store = await this.storeHealth();
    const counters = stats.snapshot(tenantId);
    const last1m = stats.window(tenantId, MINUTE);
    const last5m = stats.window(tenantId, 5 * MINUTE);
    const names = [...new Set<string>([...KNOWN_SOURCES, ...Object.keys(counters), ...Object.keys(last5m)])];
    const sources = names.map((source) => sourceStatus(source, counters[source], last1m[source], last5m[source], store, config, now));
    const backlog = sources.reduce((sum, source) => sum + source.backlog, 0);
    return {
      status: worst([store.status === 'down' ? 'down' : 'healthy', ...sources.map((source) => source.status)]),
      checked_at: iso(now),
      since: iso(stats.since),
      store,
      backlog,
      thresholds: {
        down_after_ms: config.downAfterMs,
        degraded_rejected_percent: config.degradedRejectedPercent,
        slow_ingest_ms: config.slowIngestMs,
      },
      sources,
    };
  }

  async dcStatus(tenantId: string, input: RangeInput) {
    const { config } = this.deps;
    const now = this.deps.now();
    const { from, to } = rangeQuery(input, this.deps.now(), 60 * MINUTE);
    const localHealth = await this.storeHealth();
    const rows = await this.siteRows(tenantId, from, to);
    const single = config.sites.length === 1;
    const siteOf = (dc: string | null): string | null => {
      if (single || dc === null) return config.localSiteId;
      return config.sites.find((site) => site.id.toLowerCase() === dc.toLowerCase())?.id ?? null;
    };
    const bySite = new Map<string, typeof rows>();
    const unassigned = new Map<string, typeof rows>();
    for (const row of rows) {
      const site = siteOf(row.dc);
      const [map, key] = site === null ? [unassigned, row.dc!] : [bySite, site];
      map.set(key, [...(map.get(key) ?? []), row]);
    }
    const servicesOf = (list: typeof rows) => {
      const merged = new Map<string, { count: number; last: number }>();
      for (const row of list) {
        const name = row.service ?? NO_SERVICE;
        const item = merged.get(name) ?? { count: 0, last: 0 };
        merged.set(name, { count: item.count + row.count, last: Math.max(item.last, row.last) });
      }
      return [...merged.entries()]
        .sort((a, b) => b[1].count - a[1].count || (a[0] < b[0] ? -1 : 1))
        .map(([service, item]) => ({
          service,
          count: item.count,
          last_seen: iso(item.last),
          status: (now - item.last > config.downAfterMs ? 'stale' : 'up') as 'up' | 'stale',
        }));
    };
    const sites = config.sites.map((site) => {
      const local = site.id === config.localSiteId;
      const services = servicesOf(bySite.get(site.id) ?? []);
      const store: StoreHealth = local ? localHealth : { status: 'unknown', latency_ms: null, checked_at: null };
      const lastSeen = services.reduce((max, service) => Math.max(max, Date.parse(service.last_seen)), 0);
      const stale = services.filter((service) => service.status === 'stale').length;
      const reasons: string[] = [];
      let status: Health | 'unknown';
      if (local && store.status === 'down') {
        status = 'down';
        reasons.push('store check failed');
      } else if (services.length === 0) {
        status = local ? 'healthy' : 'unknown';
        reasons.push('no data in the range');
      } else if (stale === services.length) {
        status = local ? 'degraded' : 'down';
        reasons.push(`no service reported for more than ${config.downAfterMs / 1000}s`);
      } else if (stale > 0) {
        status = 'degraded';
        reasons.push(`${stale} of ${services.length} services reported nothing for more than ${config.downAfterMs / 1000}s`);
      } else {
        status = 'healthy';
      }
      return {
        id: site.id,
        name: site.name,
        local,
        status,
        reasons: status === 'healthy' && services.length > 0 ? [] : reasons,
        store,
        volume: services.reduce((sum, service) => sum + service.count, 0),
        last_seen: lastSeen > 0 ? iso(lastSeen) : null,
        services,
      };
    });
    return {
      range: { from: iso(from), to: iso(to) },
      checked_at: iso(now),
      local_site: config.localSiteId,
      sites,
      unassigned: [...unassigned.entries()]
        .sort((a, b) => (a[0] < b[0] ? -1 : 1))
        .map(([dc, list]) => {
          const services = servicesOf(list);
          return {
            dc,
            volume: services.reduce((sum, service) => sum + service.count, 0),
            last_seen: iso(Math.max(...list.map((row) => row.last))),
            services,
          };
        }),
    };
  }

  /** Entries of the range per `dc` (else `cloud.region`) attribute value and service. */
  private async siteRows(tenantId: string, from: number, to: number) {
    const rows = await this.deps.store.groupCounts({ tenantId, from, to, groups: [['dc', 'cloud.region'], ['service']], limit: 10_000 });
    return rows.map(({ keys: [dc, service], count, lastSeen }) => ({
      dc: dc === '' ? null : (dc ?? null),
      service: service ?? null,
      count,
      last: lastSeen,
    }));
  }

  async throughput(tenantId: string, input: RangeInput & { interval?: string | undefined; services: number }) {
    const { from, to } = rangeQuery(input, this.deps.now(), DAY);
    const interval = throughputInterval(input.interval, from, to);
    const seconds = interval.ms / 1000;
    const first = from - mod(from, interval.ms);
    const starts: number[] = [];
    for (let ts = first; ts < to; ts += interval.ms) starts.push(ts);
    const point = (ts: number, count: number) => ({ ts: iso(ts), count, eps: round(count / seconds) });

    const [sourceRows, byService] = await Promise.all([
      this.deps.sourceCounts.buckets(tenantId, from, to, interval.ms),
      this.deps.store.histogram({ tenantId, from, to: to - 1, intervalMs: interval.ms, groupBy: 'service' }),
    ]);

    const names = [...new Set<string>([...KNOWN_SOURCES, ...sourceRows.map((row) => row.source)])];
    const sources = names.map((source) => {
      const counts = new Map<number, number>();
      let rejected = 0;
      for (const row of sourceRows) {
        if (row.source !== source) continue;
        counts.set(row.bucket, (counts.get(row.bucket) ?? 0) + row.stored);
        rejected += row.rejected;
      }
      const series = starts.map((ts) => point(ts, counts.get(ts) ?? 0));
      return { source, total: series.reduce((sum, item) => sum + item.count, 0), rejected, series };
    });

    const totals = new Map<string, number>();
    for (const bucket of byService)
      for (const [service, count] of Object.entries(bucket.groups ?? {})) totals.set(service, (totals.get(service) ?? 0) + count);
    const ranked = [...totals.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    const top = ranked.slice(0, input.services).map(([service]) => service);
    const rest = new Set(ranked.slice(input.services).map(([service]) => service));
    const bucketsByTs = new Map(byService.map((bucket) => [bucket.ts, bucket.groups ?? dict<number>()]));
    const serviceSeries = (pick: (groups: Dict<number>) => number) => starts.map((ts) => point(ts, pick(bucketsByTs.get(ts) ?? dict())));
    const services = top.map((service) => {
      const series = serviceSeries((groups) => groups[service] ?? 0);
      return { service: service === '' ? NO_SERVICE : service, total: totals.get(service) ?? 0, series };
    });
    if (rest.size > 0) {
      const series = serviceSeries((groups) => [...rest].reduce((sum, service) => sum + (groups[service] ?? 0), 0));
      services.push({ service: OTHER_SERVICES, total: series.reduce((sum, item) => sum + item.count, 0), series });
    }
    return { range: { from: iso(from), to: iso(to) }, interval: interval.label, interval_ms: interval.ms, sources, services };
  }
}

/** Whole minutes (source counts are per minute): the requested width, or the nice one giving about 60 buckets. */
export function throughputInterval(requested: string | undefined, from: number, to: number): { label: string; ms: number } {
  if (requested !== undefined) {
    // The search API's bounds (positive, at most ten years, at most MAX_BUCKETS buckets), then whole minutes.
    const interval = intervalOf(requested, from, to);
    if (interval.ms % MINUTE !== 0) throw invalidBody('interval must be a whole number of minutes, such as 1m, 5m or 1h');
    return interval;
  }
  const auto = intervalOf(undefined, from, to);
  return auto.ms < MINUTE ? { label: '1m', ms: MINUTE } : auto;
}

const SEVERITY: Record<Health, number> = { healthy: 0, degraded: 1, down: 2 };

export function worst(statuses: readonly Health[]): Health {
  return statuses.reduce<Health>((acc, status) => (SEVERITY[status] > SEVERITY[acc] ? status : acc), 'healthy');
}

const EMPTY_WINDOW: WindowCounters = {
  batches: 0,
  received: 0,
  stored: 0,
  rejected: 0,
  storeFailures: 0,
  latencyMsTotal: 0,
  latencyMsMax: 0,
};

/**
 * One source's status (docs/dashboards.md, "Thresholds"):
 * - down: the store check fails; or its last store write failed; or it stored data before and
 *   nothing for longer than LOGS_PIPELINE_DOWN_AFTER.
 * - degraded: over the last 5 minutes, more than LOGS_PIPELINE_DEGRADED_REJECTED_PERCENT of the
 *   received entries were rejected, or a store write took LOGS_PIPELINE_SLOW_INGEST or more on average.
 */
export function sourceStatus(
  source: string,
  counters: SourceCounters | undefined,
  last1m: WindowCounters | undefined = EMPTY_WINDOW,
  last5m: WindowCounters | undefined = EMPTY_WINDOW,
  store: StoreHealth,
  config: Pick<DashboardsConfig, 'downAfterMs' | 'degradedRejectedPercent' | 'slowIngestMs'>,
  now: number,
) {
  const down: string[] = [];
  const degraded: string[] = [];
  const lastIngest = counters?.lastIngestAt ?? null;
  const lastFailure = counters?.lastFailureAt ?? null;
  if (store.status === 'down') down.push('store check failed');
  if (counters?.lastWriteFailed) down.push('the last store write failed');
  if (lastIngest !== null && now - lastIngest > config.downAfterMs) down.push(`nothing stored for more than ${config.downAfterMs / 1000}s`);
  const rejectedRatio = ratio(last5m.rejected, last5m.received);
  if (last5m.received > 0 && rejectedRatio * 100 > config.degradedRejectedPercent) {
    degraded.push(`${round(rejectedRatio * 100, 1)}% of entries rejected in 5 minutes (threshold ${config.degradedRejectedPercent}%)`);
  }
  const avgLatency = last5m.batches > 0 ? round(last5m.latencyMsTotal / last5m.batches, 1) : null;
  if (avgLatency !== null && avgLatency >= config.slowIngestMs)
    degraded.push(`average store write ${avgLatency} ms in 5 minutes (threshold ${config.slowIngestMs} ms)`);
  const status: Health = down.length > 0 ? 'down' : degraded.length > 0 ? 'degraded' : 'healthy';
  return {
    source,
    status,
    reasons: [...down, ...degraded],
    active: lastIngest !== null,
    rates: {
      stored_per_second_1m: round(last1m.stored / 60),
      stored_per_second_5m: round(last5m.stored / 300),
      received_per_second_1m: round(last1m.received / 60),
      received_per_second_5m: round(last5m.received / 300),
    },
    last_5m: {
      batches: last5m.batches,
      received: last5m.received,
      stored: last5m.stored,
      rejected: last5m.rejected,
      rejected_ratio: rejectedRatio,
      store_failures: last5m.storeFailures,
      avg_ingest_latency_ms: avgLatency,
      max_ingest_latency_ms: last5m.batches > 0 ? last5m.latencyMsMax : null,
    },
    totals: {
      batches: counters?.batches ?? 0,
      received: counters?.received ?? 0,
      accepted: counters?.stored ?? 0,
      rejected: counters?.rejected ?? 0,
      store_failures: counters?.storeFailures ?? 0,
    },
    last_ingest_at: lastIngest === null ? null : iso(lastIngest),
    last_failure_at: lastFailure === null ? null : iso(lastFailure),
    backlog: counters?.inFlight ?? 0,
  };
}
