import type { FastifyRequest } from 'fastify';
import { AUDIT_ATTRIBUTES as A, LOG_TYPE, LOG_TYPES } from '../../../shared/telemetry/gateway-records.js';
import type { LogEntry } from '../store/log-store.js';
import type { LogsAuditRepository } from './audit.repository.js';
import { dict } from '../../../shared/dict.js';
import { storableText } from '../../../shared/text/storable-text.js';

/** Entries reach this hook as sent (the log store cleans its own copy): an audit row gets storable text. */
const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? storableText(value) : undefined);

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
      const attributes = dict(entry.attributes ?? []);
      const action = text(attributes[A.action]);
      if (attributes[LOG_TYPE] !== LOG_TYPES.audit || !action) continue;
      await audit.record({
        tenantId: request.tenantId,
        at: new Date(entry.timestamp).toISOString(),
        action: `gateway.${action}`.slice(0, 100),
        outcome: attributes[A.outcome] === 'failure' ? 'failure' : 'success',
        actorId: text(attributes[A.actorId]) ?? null,
        actor: text(attributes[A.actor]) ?? null,
        targetType: text(attributes[A.targetType]),
        targetId: text(attributes[A.targetId]),
        ip: text(attributes[A.clientAddress]),
        requestId: text(attributes[A.requestId]),
        details: { source: 'gateway' },
      });
    }
  };
}
