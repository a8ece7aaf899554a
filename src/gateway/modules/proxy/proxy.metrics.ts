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

  observe(service: string, seconds: number): void {
    let series = this.series.get(service);
    if (!series) this.series.set(service, (series = { counts: new Array<number>(BUCKETS.length + 1).fill(0), sum: 0, count: 0 }));
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

/**
 * Prometheus metrics of the proxy, in the gateway's own registry (not prom-client's global one, so
 * several gateways in one process, as in tests, do not collide). What every proxied request updates
 * is kept in plain maps and handed to prom-client at scrape time.
 */
export class ProxyMetrics {
  readonly registry = new Registry();
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

  observe(service: string, method: string, status: number, totalSeconds: number, upstreamSeconds: number | undefined): void {
    const key = `${service} ${method} ${status}`;
    const entry = this.requestCounts.get(key);
    if (entry) entry.count += 1;
    else this.requestCounts.set(key, { labels: { service, method, status: String(status) }, count: 1 });
    this.duration.observe(service, totalSeconds);
    if (upstreamSeconds !== undefined) this.upstreamDuration.observe(service, upstreamSeconds);
  }

  upstreamError(service: string, kind: UpstreamFailure | 'aborted_body'): void {
    this.upstreamErrors.inc({ service, kind });
  }
}
