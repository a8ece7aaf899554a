import type { MetricPoint, MetricType } from '../infra/metric-point.js';
import type { Mapping } from './pipeline.js';
import type { AttributeValue } from '../store/log-store.js';
import { isPlainObject, storableText, type PlainObject } from '../../../shared/text/storable-text.js';
import { attributesOf, list, nanos, storableAttributes } from './otlp-common.js';
import { dict } from '../../../shared/dict.js';

const MAX_RESOURCE_KEYS = 24;
const IDENTITY = ['host.name', 'container.id', 'k8s.pod.name', 'k8s.namespace.name'];

const str = (value: AttributeValue | undefined): string | null => (typeof value === 'string' && value !== '' ? value.slice(0, 512) : null);

function numberOf(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string' && /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(value)) return Number(value);
  return null;
}

/**
 * OTLP metrics (JSON or decoded protobuf) -> points. Gauges and sums keep their value; histograms,
 * exponential histograms and summaries keep sum and count (buckets are not stored: the views chart
 * host and container resources, not latency distributions). Unreadable points are counted.
 */
export function mapOtlpMetrics(request: unknown, now: number): Mapping<MetricPoint> {
  const result: Mapping<MetricPoint> = { items: [], rejected: 0, errors: [] };
  if (!isPlainObject(request)) throw new Error('the body must be an ExportMetricsServiceRequest object');
  const reject = (reason: string, count = 1) => {
    result.rejected += count;
    if (result.errors.length < 5 && !result.errors.includes(reason)) result.errors.push(reason);
  };
  for (const resourceMetrics of list(request.resourceMetrics)) {
    if (!isPlainObject(resourceMetrics)) continue;
    const resource = storableAttributes(attributesOf((resourceMetrics.resource as PlainObject | undefined)?.attributes));
    const identity = {
      host: str(resource['host.name']),
      // docker_stats names containers by container.id; kubeletstats by k8s.container.name within the pod.
      container: str(resource['container.id']) ?? str(resource['container.name']) ?? str(resource['k8s.container.name']),
      pod: str(resource['k8s.pod.name']),
      namespace: str(resource['k8s.namespace.name']),
    };
    const rest = dict<AttributeValue>();
    for (const [key, value] of Object.entries(resource)) {
      if (!IDENTITY.includes(key) && Object.keys(rest).length < MAX_RESOURCE_KEYS) rest[key] = value;
    }
    for (const scopeMetrics of list(resourceMetrics.scopeMetrics)) {
      if (!isPlainObject(scopeMetrics)) continue;
      for (const metric of list(scopeMetrics.metrics)) {
        if (!isPlainObject(metric) || typeof metric.name !== 'string' || metric.name === '') {
          reject('a metric has no name');
          continue;
        }
        const name = storableText(metric.name).slice(0, 255);
        const unit = typeof metric.unit === 'string' && metric.unit !== '' ? storableText(metric.unit).slice(0, 64) : null;
        let type: MetricType;
        let data: PlainObject;
        if (isPlainObject(metric.gauge)) [type, data] = ['gauge', metric.gauge];
        else if (isPlainObject(metric.sum)) [type, data] = ['sum', metric.sum];
        else if (isPlainObject(metric.histogram)) [type, data] = ['histogram', metric.histogram];
        else if (isPlainObject(metric.exponentialHistogram)) [type, data] = ['histogram', metric.exponentialHistogram];
        else if (isPlainObject(metric.summary)) [type, data] = ['summary', metric.summary];
        else {
          reject(`metric ${name} has no gauge, sum, histogram or summary`);
          continue;
        }
        const temporalityRaw = Number(data.aggregationTemporality ?? 0);
        const temporality =
          type === 'sum' || type === 'histogram' ? (temporalityRaw === 1 || temporalityRaw === 2 ? temporalityRaw : 2) : null;
        for (const point of list(data.dataPoints)) {
          if (!isPlainObject(point)) {
            reject('a data point is not an object');
            continue;
          }
          const time = nanos(point.timeUnixNano);
          if (time === null) {
            reject('timeUnixNano is not a number of nanoseconds');
            continue;
          }
          let value: number | null;
          let count: number | null = null;
          if (type === 'gauge' || type === 'sum') {
            value = numberOf(point.asDouble ?? point.asInt);
          } else {
            count = numberOf(point.count ?? 0);
            value = point.sum === undefined ? 0 : numberOf(point.sum);
          }
          if (value === null || (type !== 'gauge' && type !== 'sum' && count === null)) {
            reject(`metric ${name}: a data point has no numeric value`);
            continue;
          }
          result.items.push({
            ts: time === undefined ? now : Number(time / 1_000_000n),
            name,
            type,
            temporality,
            unit,
            ...identity,
            resource: rest,
            attributes: storableAttributes(attributesOf(point.attributes)),
            value,
            count,
          });
        }
      }
    }
  }
  return result;
}
