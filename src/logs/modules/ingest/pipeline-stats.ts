import { GATEWAY_SERVICE_NAME } from '../../../shared/telemetry/gateway-records.js';
import { dict, type Dict } from '../../../shared/dict.js';

/** Where a batch came from: `otlp`, `gateway`, `bulk`, `otlp-traces`, `otlp-metrics`. */
export type IngestSource = 'otlp' | 'bulk' | (string & {});

/**
 * The source an OTLP log batch is counted under (docs/dashboards.md): `gateway` when it came through
 * the gateway's ingest account (LOGS_GATEWAY_SHIPPER), or when every entry has the service name
 * `gerbang-gateway` (a gateway shipping with another account); else `otlp`.
 */
export function otlpSourceOf(entries: readonly { service?: string | undefined }[], fromGatewayAccount = false): IngestSource {
  if (fromGatewayAccount) return 'gateway';
  return entries.length > 0 && entries.every((entry) => entry.service === GATEWAY_SERVICE_NAME) ? 'gateway' : 'otlp';
}

export interface SourceCounters {
  /** Batches (requests) accepted for processing. */
  batches: number;
  /** Entries received, good or bad. */
  received: number;
  /** Entries durably stored. */
  stored: number;
  /** Entries refused (malformed, or lost with a failed store write). */
  rejected: number;
  /** Epoch ms of the last stored batch; null before the first. */
  lastIngestAt: number | null;
  /** Batches whose store write failed. */
  storeFailures: number;
  /** Epoch ms of the last failed store write; null when none. */
  lastFailureAt: number | null;
  /** Whether the latest store write of this source failed (a later successful write clears it). */
  lastWriteFailed: boolean;
  /** Entries received and being written right now (received, not yet stored). */
  inFlight: number;
}

/** One recorded batch, as given to listeners (e.g. the persisted per-minute source counts). */
export interface RecordedBatch {
  tenantId: string;
  source: IngestSource;
  received: number;
  stored: number;
  rejected: number;
  /** Epoch ms when counted. */
  at: number;
}

/** Sums over a recent window (PipelineStats.window). */
export interface WindowCounters {
  batches: number;
  received: number;
  stored: number;
  rejected: number;
  storeFailures: number;
  /** Sum of store write latencies of the window's batches, ms. */
  latencyMsTotal: number;
  /** Largest store write latency of the window, ms. */
  latencyMsMax: number;
}

/** Recent activity is kept in slots of this width, for as long as the longest window the dashboards read. */
export const SLOT_MS = 10_000;
export const WINDOW_KEEP_MS = 5 * 60_000;

interface Slot extends WindowCounters {
  start: number;
}

/**
 * In-process counters of the ingestion pipeline, per source and per tenant and source, for the
 * pipeline dashboards. They restart from zero with the process; the per-minute counts that must
 * survive restarts are persisted by a listener (modules/dashboards/source-counts.ts).
 */
export class PipelineStats {
  private readonly bySource = new Map<string, SourceCounters>();
  private readonly byTenant = new Map<string, Map<string, SourceCounters>>();
  /** Recent slots per tenant and source (key tenant NUL source), oldest first. */
  private readonly recent = new Map<string, Slot[]>();
  private readonly listeners: ((batch: RecordedBatch) => void)[] = [];
  /** When counting started (process start): counters and windows cover only the time since. */
  readonly since: number;

  constructor(private readonly now: () => number = Date.now) {
    this.since = now();
  }

  record(
    tenantId: string,
    source: IngestSource,
    counts: { received: number; stored: number; rejected: number },
    write: { latencyMs?: number; failed?: boolean } = {},
  ): void {
    const at = this.now();
    for (const counters of [entry(this.bySource, source), entry(this.tenantMap(tenantId), source)]) {
      counters.batches += 1;
      counters.received += counts.received;
      counters.stored += counts.stored;
      counters.rejected += counts.rejected;
      if (counts.stored > 0) {
        counters.lastIngestAt = at;
        counters.lastWriteFailed = false;
      }
      if (write.failed) {
        counters.storeFailures += 1;
        counters.lastFailureAt = at;
        counters.lastWriteFailed = true;
      }
    }
    const slot = this.slot(tenantId, source, at);
    slot.batches += 1;
    slot.received += counts.received;
    slot.stored += counts.stored;
    slot.rejected += counts.rejected;
    if (write.failed) slot.storeFailures += 1;
    const latency = Math.max(0, write.latencyMs ?? 0);
    slot.latencyMsTotal += latency;
    slot.latencyMsMax = Math.max(slot.latencyMsMax, latency);
    const batch: RecordedBatch = { tenantId, source, ...counts, at };
    for (const listener of this.listeners) listener(batch);
  }

  /** A batch of `entries` is being written: counted in `inFlight` until `leave`. */
  enter(tenantId: string, source: IngestSource, entries: number): void {
    for (const counters of [entry(this.bySource, source), entry(this.tenantMap(tenantId), source)]) counters.inFlight += entries;
  }

  leave(tenantId: string, source: IngestSource, entries: number): void {
    for (const counters of [entry(this.bySource, source), entry(this.tenantMap(tenantId), source)])
      counters.inFlight = Math.max(0, counters.inFlight - entries);
  }

  /** Called synchronously for every recorded batch; a listener must not throw. */
  onRecord(listener: (batch: RecordedBatch) => void): void {
    this.listeners.push(listener);
  }

  /** The tenants that have sent anything since the start. */
  tenantIds(): string[] {
    return [...this.byTenant.keys()];
  }

  /** A copy of the counters, per source; of one tenant when given. */
  snapshot(tenantId?: string): Dict<SourceCounters> {
    const map = tenantId === undefined ? this.bySource : (this.byTenant.get(tenantId) ?? new Map<string, SourceCounters>());
    return dict([...map].map(([source, counters]) => [source, { ...counters }]));
  }

  /**
   * The tenant's sums per source over the last `windowMs` (at most WINDOW_KEEP_MS), in whole
   * SLOT_MS slots: the current, partly filled slot and the ones before it.
   */
  window(tenantId: string, windowMs: number): Dict<WindowCounters> {
    const now = this.now();
    const oldest = slotStart(now) - Math.max(0, Math.ceil(Math.min(windowMs, WINDOW_KEEP_MS) / SLOT_MS) - 1) * SLOT_MS;
    const result = dict<WindowCounters>();
    for (const [key, slots] of this.recent) {
      const [tenant, source] = key.split('\u0000') as [string, string];
      if (tenant !== tenantId) continue;
      const sum = emptyWindow();
      for (const slot of slots) {
        if (slot.start < oldest || slot.start > now) continue;
        sum.batches += slot.batches;
        sum.received += slot.received;
        sum.stored += slot.stored;
        sum.rejected += slot.rejected;
        sum.storeFailures += slot.storeFailures;
        sum.latencyMsTotal += slot.latencyMsTotal;
        sum.latencyMsMax = Math.max(sum.latencyMsMax, slot.latencyMsMax);
      }
      result[source] = sum;
    }
    return result;
  }

  private tenantMap(tenantId: string): Map<string, SourceCounters> {
    let tenant = this.byTenant.get(tenantId);
    if (!tenant) this.byTenant.set(tenantId, (tenant = new Map<string, SourceCounters>()));
    return tenant;
  }

  private slot(tenantId: string, source: string, at: number): Slot {
    const key = `${tenantId}\u0000${source}`;
    let slots = this.recent.get(key);
    if (!slots) this.recent.set(key, (slots = []));
    const start = slotStart(at);
    // Drop slots older than the longest window (a clock moved back by a test keeps its slots).
    while (slots.length > 0 && slots[0]!.start <= start - WINDOW_KEEP_MS) slots.shift();
    let slot = slots.find((candidate) => candidate.start === start);
    if (!slot) {
      slot = { start, ...emptyWindow() };
      slots.push(slot);
      slots.sort((a, b) => a.start - b.start);
    }
    return slot;
  }
}

function slotStart(at: number): number {
  return at - (((at % SLOT_MS) + SLOT_MS) % SLOT_MS);
}

function emptyWindow(): WindowCounters {
  return { batches: 0, received: 0, stored: 0, rejected: 0, storeFailures: 0, latencyMsTotal: 0, latencyMsMax: 0 };
}

function entry(map: Map<string, SourceCounters>, source: string): SourceCounters {
  let counters = map.get(source);
  if (!counters)
    map.set(
      source,
      (counters = {
        batches: 0,
        received: 0,
        stored: 0,
        rejected: 0,
        lastIngestAt: null,
        storeFailures: 0,
        lastFailureAt: null,
        lastWriteFailed: false,
        inFlight: 0,
      }),
    );
  return counters;
}
