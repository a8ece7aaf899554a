import type { MapSpanRow, StoredSpan, TraceSummaryRow } from './spans.repository.js';
import { SPAN_KINDS, STATUS_CODES } from './span-record.js';

/** Span as the API returns it: ms times (fractional), names for kind and status. */
export function spanView(span: StoredSpan) {
  return {
    traceId: span.traceId,
    spanId: span.spanId,
    parentSpanId: span.parentSpanId,
    service: span.service,
    name: span.name,
    kind: SPAN_KINDS[span.kind] ?? 'unspecified',
    startTime: new Date(Math.floor(span.startUs / 1000)).toISOString(),
    startTimeUs: span.startUs,
    durationMs: span.durationUs / 1000,
    status: { code: STATUS_CODES[span.statusCode] ?? 'unset', message: span.statusMessage },
    peerService: span.peerService,
    attributes: span.attributes,
    events: span.events.map((event) => ({
      name: event.name,
      time: new Date(Math.floor(event.timeUs / 1000)).toISOString(),
      attributes: event.attributes,
    })),
  };
}

export function traceSummaryView(
  row: TraceSummaryRow,
  described: { root: StoredSpan | null; services: { service: string; spans: number }[] } | undefined,
) {
  const root = described?.root ?? null;
  return {
    traceId: row.trace_id,
    startTime: new Date(Math.floor(row.start_us / 1000)).toISOString(),
    durationMs: (row.end_us - row.start_us) / 1000,
    spanCount: row.span_count,
    errorCount: row.error_count,
    error: row.error_count > 0,
    root: root
      ? {
          service: root.service,
          name: root.name,
          kind: SPAN_KINDS[root.kind] ?? 'unspecified',
          durationMs: root.durationUs / 1000,
          status: STATUS_CODES[root.statusCode] ?? 'unset',
        }
      : null,
    services: described?.services ?? [],
  };
}

/**
 * Requests, errors and durations of a node or an edge. Each span counts as the spans it stands for
 * (its adjusted count: 1 / the probability it was sampled with), so rates and percentiles stay
 * right when the sender samples its traces (docs/apm.md).
 */
interface Accumulator {
  count: number;
  errors: number;
  durations: { us: number; weight: number }[];
}

const accumulator = (): Accumulator => ({ count: 0, errors: 0, durations: [] });

function add(acc: Accumulator, row: MapSpanRow): void {
  acc.count += row.adjusted_count;
  if (row.status_code === 2) acc.errors += row.adjusted_count;
  acc.durations.push({ us: row.duration_us, weight: row.adjusted_count });
}

/** Nearest-rank percentile of durations (µs) weighted by the spans each stands for, in ms. */
function percentileMs(sorted: { us: number; weight: number }[], total: number, p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = (p / 100) * total;
  let seen = 0;
  for (const { us, weight } of sorted) {
    seen += weight;
    if (seen >= rank) return us / 1000;
  }
  return sorted.at(-1)!.us / 1000;
}

function statsOf(acc: Accumulator, rangeSeconds: number) {
  const sorted = [...acc.durations].sort((a, b) => a.us - b.us);
  return {
    requests: Math.round(acc.count),
    errors: Math.round(acc.errors),
    requestRate: acc.count / rangeSeconds,
    errorRate: acc.count === 0 ? 0 : acc.errors / acc.count,
    p50Ms: percentileMs(sorted, acc.count, 50),
    p95Ms: percentileMs(sorted, acc.count, 95),
  };
}

/**
 * The service map from the rows of SpansRepository.mapSpans:
 * - a span whose parent belongs to another service is a call parent.service -> span.service;
 * - a span without a parent in the data, or with a parent of another service, is a request INTO
 *   its service (the node's rate, errors and latency);
 * - a CLIENT span with peer.service naming a service that sends no spans itself (an uninstrumented
 *   upstream, e.g. the gateway's proxied services) is a call span.service -> peer.service, and also
 *   the requests of that peer's node. A peer that does send spans is covered by its own server span.
 */
export function buildServiceMap(rows: MapSpanRow[], instrumented: Set<string>, rangeSeconds: number) {
  const nodes = new Map<string, Accumulator>();
  const edges = new Map<string, { source: string; target: string; acc: Accumulator }>();
  const node = (name: string) => {
    let acc = nodes.get(name);
    if (!acc) nodes.set(name, (acc = accumulator()));
    return acc;
  };
  const edge = (source: string, target: string) => {
    const key = JSON.stringify([source, target]);
    let entry = edges.get(key);
    if (!entry) edges.set(key, (entry = { source, target, acc: accumulator() }));
    return entry.acc;
  };
  for (const service of instrumented) node(service);
  for (const row of rows) {
    if (row.parent_service === null || row.parent_service !== row.service) {
      add(node(row.service), row);
      if (row.parent_service !== null) {
        node(row.parent_service);
        add(edge(row.parent_service, row.service), row);
      }
    }
    if (row.kind === 3 && row.peer_service !== null && row.peer_service !== row.service && !instrumented.has(row.peer_service)) {
      add(node(row.peer_service), row);
      add(edge(row.service, row.peer_service), row);
    }
  }
  return {
    nodes: [...nodes]
      .map(([name, acc]) => ({ id: name, name, instrumented: instrumented.has(name), ...statsOf(acc, rangeSeconds) }))
      .sort((a, b) => a.name.localeCompare(b.name)),
    edges: [...edges.values()]
      .map(({ source, target, acc }) => ({ source, target, ...statsOf(acc, rangeSeconds) }))
      .sort((a, b) => a.source.localeCompare(b.source) || a.target.localeCompare(b.target)),
  };
}
