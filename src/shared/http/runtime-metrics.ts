import { collectDefaultMetrics, type Registry } from 'prom-client';

/**
 * prom-client's totals of the `nodejs_active_{resources,handles,requests}` gauges: gauges named
 * `_total`, which `promtool check metrics` refuses (only counters end in `_total`). Their value is
 * `sum(nodejs_active_handles)` and so on, so they are dropped rather than renamed.
 */
const MISNAMED_GAUGES = ['nodejs_active_resources_total', 'nodejs_active_handles_total', 'nodejs_active_requests_total'];

/** The process and Node runtime series (CPU, memory, event loop lag, GC, handles) in `registry` (docs/metrics.md). */
export function collectRuntimeMetrics(registry: Registry): void {
  collectDefaultMetrics({ register: registry });
  for (const name of MISNAMED_GAUGES) registry.removeSingleMetric(name);
}
