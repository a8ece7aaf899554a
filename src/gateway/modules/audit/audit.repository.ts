import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { AuditLogTable, GatewaySchema } from '../../db/schema.js';

/** Who did it, as an audit entry names them: a signed-in user (token claims) or a user row. */
export function auditActor(actor: { userId: string; claims: { no_pegawai?: string | undefined } } | { id: string; no_pegawai: string }): {
  actorId: string;
  actor: string | null;
} {
  return 'userId' in actor
    ? { actorId: actor.userId, actor: actor.claims.no_pegawai ?? null }
    : { actorId: actor.id, actor: actor.no_pegawai };
}

export interface AuditEntry {
  action: string;
  outcome: 'success' | 'failure';
  actorId?: string | null;
  actor?: string | null;
  targetType?: string;
  targetId?: string;
  ip?: string;
  userAgent?: string;
  requestId?: string;
  /** Never a password or token. */
  details?: Record<string, unknown>;
}

export type AuditListener = (row: AuditLogTable) => void;

/** The gateway's audit trail: who did what, when, from where. Listeners (log shipping) see each row. */
export class AuditRepository {
  private readonly listeners: AuditListener[] = [];

  constructor(
    private readonly db: Kysely<GatewaySchema>,
    private readonly now: () => number,
  ) {}

  onRecord(listener: AuditListener): void {
    this.listeners.push(listener);
  }

  async record(entry: AuditEntry, db: Kysely<GatewaySchema> = this.db): Promise<void> {
    const row: AuditLogTable = {
      id: randomUUID(),
      at: new Date(this.now()).toISOString(),
      actor_id: entry.actorId ?? null,
      actor: entry.actor ?? null,
      action: entry.action,
      target_type: entry.targetType ?? null,
      target_id: entry.targetId ?? null,
      outcome: entry.outcome,
      ip: entry.ip ?? null,
      user_agent: entry.userAgent?.slice(0, 512) ?? null,
      request_id: entry.requestId ?? null,
      details: entry.details ? JSON.stringify(entry.details) : null,
    };
    await db.insertInto('audit_log').values(row).execute();
    for (const listener of this.listeners) listener(row);
  }

  list(limit = 100) {
    return this.db.selectFrom('audit_log').selectAll().orderBy('at', 'desc').limit(limit).execute();
  }
}
