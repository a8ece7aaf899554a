import type { AttributeValue } from '../store/log-store.js';
import { dict } from '../../../shared/dict.js';

export type MetricType = 'gauge' | 'sum' | 'histogram' | 'summary';

/** A metric data point as stored (infra_metric_points). */
export interface MetricPoint {
  ts: number;
  name: string;
  type: MetricType;
  /** Sums and histograms: 1 delta, 2 cumulative; null for gauges and summaries. */
  temporality: number | null;
  unit: string | null;
  host: string | null;
  container: string | null;
  pod: string | null;
  namespace: string | null;
  /** Resource attributes other than the identity columns. */
  resource: Record<string, AttributeValue>;
  attributes: Record<string, AttributeValue>;
  /** Gauge/sum: the value; histogram/summary: the sum of the observations. */
  value: number;
  /** Histogram/summary: the number of observations. */
  count: number | null;
}

/** Stable JSON (keys sorted): the views group a series by its exact attribute set. */
export function canonicalJson(attributes: Record<string, AttributeValue>): string {
  return JSON.stringify(dict(Object.entries(attributes).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
}
