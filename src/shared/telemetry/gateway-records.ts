/**
 * What crosses from the gateway to the logs service: the name the gateway ships under and the
 * attributes of its access and audit records. The gateway writes them (telemetry), the logs
 * service reads them (pipeline source, audit mirror, dashboards); this is the one definition.
 */

/** The resource `service.name` of the gateway's telemetry by default (GATEWAY_SERVICE_NAME). */
export const GATEWAY_SERVICE_NAME = 'gerbang-gateway';

/** `log.type` tells the gateway's access lines from its audit events. */
export const LOG_TYPE = 'log.type';
export const LOG_TYPES = { access: 'access', audit: 'audit' } as const;

/** Attribute names of an audit record (values as in the gateway's audit_log row). */
export const AUDIT_ATTRIBUTES = {
  action: 'event.action',
  outcome: 'event.outcome',
  actor: 'audit.actor',
  actorId: 'audit.actor_id',
  targetType: 'audit.target_type',
  targetId: 'audit.target_id',
  clientAddress: 'client.address',
  requestId: 'request_id',
} as const;
