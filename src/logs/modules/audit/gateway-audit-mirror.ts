import type { FastifyRequest } from 'fastify';
import type { LogEntry } from '../store/log-store.js';
import type { LogsAuditRepository } from './audit.repository.js';

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/**
 * The gateway ships its audit events as log records with `log.type = audit`; those that arrive
 * through the gateway's own ingest account also join the audit trail (as `gateway.<action>`), so
 * audit search and export cover both services. Any other account's records stay plain logs: a
 * tenant's shipper cannot write audit rows.
 */
export function gatewayAuditMirror(audit: LogsAuditRepository, shipperUsername: string) {
  return async (request: FastifyRequest, entries: readonly LogEntry[]): Promise<void> => {
    if (request.logsAuth?.username !== shipperUsername) return;
    for (const entry of entries) {
      const attributes = entry.attributes ?? {};
      const action = text(attributes['event.action']);
      if (attributes['log.type'] !== 'audit' || !action) continue;
      await audit.record({
        tenantId: request.tenantId,
        at: new Date(entry.timestamp).toISOString(),
        action: `gateway.${action}`.slice(0, 100),
        outcome: attributes['event.outcome'] === 'failure' ? 'failure' : 'success',
        actorId: text(attributes['audit.actor_id']) ?? null,
        actor: text(attributes['audit.actor']) ?? null,
        targetType: text(attributes['audit.target_type']),
        targetId: text(attributes['audit.target_id']),
        ip: text(attributes['client.address']),
        requestId: text(attributes.request_id),
        details: { source: 'gateway' },
      });
    }
  };
}
