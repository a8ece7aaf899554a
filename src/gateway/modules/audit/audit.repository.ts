import type { Kysely } from 'kysely';
import { auditRow, AuditListeners, type AuditFields } from '../../../shared/audit/audit-row.js';
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

export type AuditEntry = AuditFields;

export type AuditListener = (row: AuditLogTable) => void;

/** The gateway's audit trail: who did what, when, from where. Listeners (log shipping) see each row. */
export class AuditRepository {
  private readonly listeners = new AuditListeners<AuditLogTable>();

  constructor(
    private readonly db: Kysely<GatewaySchema>,
    private readonly now: () => number,
  ) {}

  onRecord(listener: AuditListener): void {
    this.listeners.add(listener);
  }

  async record(entry: AuditEntry, db: Kysely<GatewaySchema> = this.db): Promise<void> {
    const row: AuditLogTable = auditRow(entry, new Date(this.now()).toISOString());
    await db.insertInto('audit_log').values(row).execute();
    this.listeners.emit(row);
  }

  list(limit = 100) {
    return this.db.selectFrom('audit_log').selectAll().orderBy('at', 'desc').limit(limit).execute();
  }
}
