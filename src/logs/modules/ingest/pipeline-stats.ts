/** Where a batch came from. The gateway's own shipping (next issue) adds its source name. */
export type IngestSource = 'otlp' | 'bulk' | (string & {});

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
}

/**
 * In-process counters of the ingestion pipeline, per source and per tenant and source, for the
 * pipeline dashboards. They restart from zero with the process.
 */
export class PipelineStats {
  private readonly bySource = new Map<string, SourceCounters>();
  private readonly byTenant = new Map<string, Map<string, SourceCounters>>();

  constructor(private readonly now: () => number = Date.now) {}

  record(tenantId: string, source: IngestSource, counts: { received: number; stored: number; rejected: number }): void {
    let tenant = this.byTenant.get(tenantId);
    if (!tenant) this.byTenant.set(tenantId, (tenant = new Map()));
    for (const counters of [entry(this.bySource, source), entry(tenant, source)]) {
      counters.batches += 1;
      counters.received += counts.received;
      counters.stored += counts.stored;
      counters.rejected += counts.rejected;
      if (counts.stored > 0) counters.lastIngestAt = this.now();
    }
  }

  /** A copy of the counters, per source; of one tenant when given. */
  snapshot(tenantId?: string): Record<string, SourceCounters> {
    const map = tenantId === undefined ? this.bySource : (this.byTenant.get(tenantId) ?? new Map<string, SourceCounters>());
    return Object.fromEntries([...map].map(([source, counters]) => [source, { ...counters }]));
  }
}

function entry(map: Map<string, SourceCounters>, source: string): SourceCounters {
  let counters = map.get(source);
  if (!counters) map.set(source, (counters = { batches: 0, received: 0, stored: 0, rejected: 0, lastIngestAt: null }));
  return counters;
}
