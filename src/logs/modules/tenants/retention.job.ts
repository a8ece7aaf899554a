import type { FastifyBaseLogger } from 'fastify';
import type { Job } from '../../../shared/lifecycle.js';
import type { TenantsService } from './tenants.service.js';

export interface RetentionJobDeps {
  tenants: TenantsService;
  /** LOGS_RETENTION_INTERVAL; 0: never. */
  intervalMs: number;
  now: () => number;
  /** What one sweep removed of one tenant (logs_retention_removed_total). */
  onRemoved: (tenantId: string, count: number) => void;
  log: FastifyBaseLogger;
}

/**
 * Each tenant's logs, spans and metric points older than its retention are removed every
 * `intervalMs`, with one line per sweep, by the instance that leads (one sweep per cluster).
 * Closing the service, or losing the lead, waits for a sweep in flight.
 */
export function retentionJob({ tenants, intervalMs, now, onRemoved, log }: RetentionJobDeps): Job {
  return {
    name: 'retention sweep',
    intervalMs,
    elected: true,
    run: async () => {
      const started = now();
      const removed = await tenants.applyRetention();
      let total = 0;
      for (const [tenantId, count] of Object.entries(removed)) {
        onRemoved(tenantId, count);
        total += count;
      }
      log.info({ removed, total, ms: now() - started }, 'retention sweep done');
    },
  };
}
