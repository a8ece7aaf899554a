import { Counter, Registry, type Metric } from 'prom-client';
import type { UpstreamFailure } from './upstream.js';

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

interface Series {
  /** Observations per bucket (not cumulative); the last slot counts those above every bound. */
  readonly counts: number[];
  sum: number;
  count: number;
}

/**
 * A histogram with one label, `service`, counted in plain arrays on the hot path and turned into
 * prom-client's exposition shape only when scraped: prom-client's own Histogram hashes and
 * validates the label set on every observation, which the proxy feels (docs/performance-notes.md).
 * Registered through prom-client's metric contract (`name`, `help`, `type`, `get`).
 */
class ServiceHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, Series>();

  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  /** The series of one service, made once and then observed into directly. */
  seriesOf(service: string): Series {
    let series = this.series.get(service);
    if (!series) this.series.set(service, (series = { counts: new Array<number>(BUCKETS.length + 1).fill(0), sum: 0, count: 0 }));
    return series;
  }

  static observe(series: Series, seconds: number): void {
    let bucket = 0;
    while (bucket < BUCKETS.length && seconds > BUCKETS[bucket]!) bucket += 1;
    series.counts[bucket]! += 1;
    series.sum += seconds;
    series.count += 1;
  }

  async get() {
    const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
    for (const [service, series] of this.series) {
      let cumulative = 0;
      BUCKETS.forEach((bound, i) => {
        cumulative += series.counts[i]!;
        values.push({ labels: { le: bound, service }, value: cumulative, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { le: '+Inf', service }, value: series.count, metricName: `${this.name}_bucket` });
      values.push({ labels: { service }, value: series.sum, metricName: `${this.name}_sum` });
      values.push({ labels: { service }, value: series.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}

/** The proxy's metrics of one service (ProxyMetrics.forService). */
export interface ServiceMetrics {
  observe(method: string, status: number, totalSeconds: number, upstreamSeconds: number | undefined): void;
}

/**
 * Prometheus metrics of the proxy, in the gateway's own registry (not prom-client's global one, so
 * several gateways in one process, as in tests, do not collide). What every proxied request updates
 * is kept in plain maps and handed to prom-client at scrape time.
 */
export class ProxyMetrics {
  readonly registry = new Registry();
  private readonly bound = new Map<string, ServiceMetrics>();
  private readonly requestCounts = new Map<string, { labels: { service: string; method: string; status: string }; count: number }>();
  private readonly duration = new ServiceHistogram(
    'gateway_proxy_request_duration_seconds',
    'Time from the request to the end of the response, by service',
  );
  private readonly upstreamDuration = new ServiceHistogram(
    'gateway_proxy_upstream_duration_seconds',
    'Time until the upstream answered with its headers, by service',
  );
  private readonly upstreamErrors = new Counter({
    name: 'gateway_proxy_upstream_errors_total',
    help: 'Failed upstream calls by service and kind (refused, dns, reset, timeout, tls, other, circuit_open, aborted_body)',
    labelNames: ['service', 'kind'] as const,
    registers: [this.registry],
  });

  constructor() {
    const counts = this.requestCounts;
    new Counter({
      name: 'gateway_proxy_requests_total',
      help: 'Proxied requests by service, method and status code',
      labelNames: ['service', 'method', 'status'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const { labels, count } of counts.values()) this.inc(labels, count);
      },
    });
    // The duck-typed contract prom-client's registry reads (its type names only its own classes).
    this.registry.registerMetric(this.duration as unknown as Metric);
    this.registry.registerMetric(this.upstreamDuration as unknown as Metric);
  }

  /**
   * What one proxied request of `service` updates, bound once per service: the request counter by
   * method and status and both histograms, with no key or label object made per request.
   */
  forService(service: string): ServiceMetrics {
    let bound = this.bound.get(service);
    if (bound) return bound;
    const counts = this.requestCounts;
    const byMethod = new Map<string, Map<number, { count: number }>>();
    const duration = this.duration.seriesOf(service);
    const upstream = this.upstreamDuration.seriesOf(service);
    bound = {
      observe(method, status, totalSeconds, upstreamSeconds) {
        let byStatus = byMethod.get(method);
        if (!byStatus) byMethod.set(method, (byStatus = new Map<number, { count: number }>()));
        const entry = byStatus.get(status);
        if (entry) entry.count += 1;
        else {
          const made = { labels: { service, method, status: String(status) }, count: 1 };
          byStatus.set(status, made);
          counts.set(`${service} ${method} ${status}`, made);
        }
        ServiceHistogram.observe(duration, totalSeconds);
        if (upstreamSeconds !== undefined) ServiceHistogram.observe(upstream, upstreamSeconds);
      },
    };
    this.bound.set(service, bound);
    return bound;
  }

  observe(service: string, method: string, status: number, totalSeconds: number, upstreamSeconds: number | undefined): void {
    this.forService(service).observe(method, status, totalSeconds, upstreamSeconds);
  }

  upstreamError(service: string, kind: UpstreamFailure | 'aborted_body'): void {
    this.upstreamErrors.inc({ service, kind });
  }
}
