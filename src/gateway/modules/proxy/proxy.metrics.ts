import { Counter, Histogram, Registry } from 'prom-client';
import type { UpstreamFailure } from './upstream.js';

/**
 * Prometheus metrics of the proxy, in the gateway's own registry (not prom-client's global one, so
 * several gateways in one process, as in tests, do not collide).
 */
export class ProxyMetrics {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: 'gateway_proxy_requests_total',
    help: 'Proxied requests by service, method and status code',
    labelNames: ['service', 'method', 'status'] as const,
    registers: [this.registry],
  });
  private readonly duration = new Histogram({
    name: 'gateway_proxy_request_duration_seconds',
    help: 'Time from the request to the end of the response, by service',
    labelNames: ['service'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  private readonly upstreamDuration = new Histogram({
    name: 'gateway_proxy_upstream_duration_seconds',
    help: 'Time until the upstream answered with its headers, by service',
    labelNames: ['service'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  private readonly upstreamErrors = new Counter({
    name: 'gateway_proxy_upstream_errors_total',
    help: 'Failed upstream calls by service and kind (refused, dns, reset, timeout, tls, other, circuit_open, aborted_body)',
    labelNames: ['service', 'kind'] as const,
    registers: [this.registry],
  });

  observe(service: string, method: string, status: number, totalSeconds: number, upstreamSeconds: number | undefined): void {
    this.requests.inc({ service, method, status: String(status) });
    this.duration.observe({ service }, totalSeconds);
    if (upstreamSeconds !== undefined) this.upstreamDuration.observe({ service }, upstreamSeconds);
  }

  upstreamError(service: string, kind: UpstreamFailure | 'aborted_body'): void {
    this.upstreamErrors.inc({ service, kind });
  }
}
