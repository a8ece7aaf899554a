import { randomUUID } from 'node:crypto';

/** What both services' audit trails record about one action. */
export interface AuditFields {
  action: string;
  outcome: 'success' | 'failure';
  actorId?: string | null | undefined;
  actor?: string | null | undefined;
  targetType?: string | undefined;
  targetId?: string | undefined;
  ip?: string | undefined;
  userAgent?: string | undefined;
  requestId?: string | undefined;
  /** Never a password or token. */
  details?: Record<string, unknown> | undefined;
}

/** The columns both audit tables share. */
export interface AuditRow {
  id: string;
  at: string;
  actor_id: string | null;
  /** Who, readable; survives deletion of the user. */
  actor: string | null;
  action: string;
  target_type: string | null;
  target_id: string | null;
  outcome: 'success' | 'failure';
  ip: string | null;
  user_agent: string | null;
  request_id: string | null;
  /** JSON object; never holds a password or token. */
  details: string | null;
}

/** One audit row, with free-text fields cut to their stored length. */
export function auditRow(entry: AuditFields, at: string): AuditRow {
  return {
    id: randomUUID(),
    at,
    actor_id: entry.actorId ?? null,
    actor: entry.actor?.slice(0, 200) ?? null,
    action: entry.action,
    target_type: entry.targetType ?? null,
    target_id: entry.targetId ?? null,
    outcome: entry.outcome,
    ip: entry.ip ?? null,
    user_agent: entry.userAgent?.slice(0, 512) ?? null,
    request_id: entry.requestId ?? null,
    details: entry.details ? JSON.stringify(entry.details) : null,
  };
}

/** Who hears of each recorded row (log shipping, the gateway's audit mirror). */
export class AuditListeners<Row> {
  private readonly listeners: ((row: Row) => void)[] = [];

  add(listener: (row: Row) => void): void {
    this.listeners.push(listener);
  }

  emit(row: Row): void {
    for (const listener of this.listeners) listener(row);
  }
}
