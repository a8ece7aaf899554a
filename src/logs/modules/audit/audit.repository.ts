import { sql, type Kysely } from 'kysely';
import { auditRow, AuditListeners, type AuditFields } from '../../../shared/audit/audit-row.js';
import type { LogsAuditTable, LogsSchema } from '../../db/schema.js';
import { newestFirstPage } from '../../../shared/db/newest-first-page.js';

/** Who did it, as an audit entry names them: a signed-in user (`userId`) or a user row (`id`). */
export function auditActor(actor: { userId: string; username: string } | { id: string; username: string }): {
  actorId: string;
  actor: string;
} {
  return { actorId: 'userId' in actor ? actor.userId : actor.id, actor: actor.username };
}

export interface AuditEntry extends AuditFields {
  tenantId: string;
  /** ISO 8601; default now. Set for events recorded elsewhere first (the gateway's). */
  at?: string | undefined;
}

export interface AuditFilter {
  tenantId: string;
  /** Case-insensitive substring of action, actor, target or details. */
  q?: string | undefined;
  actor?: string | undefined;
  action?: string | undefined;
  /** ISO 8601, inclusive. */
  from?: string | undefined;
  /** ISO 8601, exclusive. */
  to?: string | undefined;
}

export type AuditListener = (row: LogsAuditTable) => void;

/** Escapes LIKE wildcards so a user's `%` or `_` matches itself. */
function likePattern(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** The logs service's audit trail, tenant-scoped. Listeners (e.g. log shipping) see each row. */
export class LogsAuditRepository {
  private readonly listeners = new AuditListeners<LogsAuditTable>();

  constructor(
    private readonly db: Kysely<LogsSchema>,
    private readonly now: () => number,
  ) {}

  onRecord(listener: AuditListener): void {
    this.listeners.add(listener);
  }

  async record(entry: AuditEntry, db: Kysely<LogsSchema> = this.db): Promise<void> {
    const row: LogsAuditTable = { ...auditRow(entry, entry.at ?? new Date(this.now()).toISOString()), tenant_id: entry.tenantId };
    await db.insertInto('logs_audit').values(row).execute();
    this.listeners.emit(row);
  }

  private filtered(filter: AuditFilter) {
    let query = this.db.selectFrom('logs_audit').where('tenant_id', '=', filter.tenantId);
    if (filter.actor) query = query.where('actor', '=', filter.actor);
    if (filter.action) query = query.where('action', '=', filter.action);
    if (filter.from) query = query.where('at', '>=', filter.from);
    if (filter.to) query = query.where('at', '<', filter.to);
    if (filter.q) {
      const pattern = likePattern(filter.q);
      query = query.where((eb) =>
        eb.or(
          ['action', 'actor', 'target_type', 'target_id', 'details', 'ip'].map(
            (column) => sql<boolean>`lower(coalesce(${sql.ref(column)}, '')) like ${pattern} escape '\\'`,
          ),
        ),
      );
    }
    return query;
  }

  /** Newest first. */
  search(filter: AuditFilter, page: number, limit: number): Promise<{ rows: LogsAuditTable[]; total: number }> {
    return newestFirstPage(this.filtered(filter), 'at', page, limit);
  }

  /**
   * Every matching row, newest first, fetched in pages by keyset (at, id) so that memory stays flat
   * however many rows there are and later pages cost no more than the first.
   */
  async *stream(filter: AuditFilter, pageSize = 1000): AsyncGenerator<LogsAuditTable[]> {
    let after: { at: string; id: string } | undefined;
    for (;;) {
      let query = this.filtered(filter).selectAll();
      if (after) {
        const { at, id } = after;
        query = query.where((eb) => eb.or([eb('at', '<', at), eb.and([eb('at', '=', at), eb('id', '<', id)])]));
      }
      const rows = await query.orderBy('at', 'desc').orderBy('id', 'desc').limit(pageSize).execute();
      if (rows.length === 0) return;
      yield rows;
      if (rows.length < pageSize) return;
      const last = rows[rows.length - 1]!;
      after = { at: last.at, id: last.id };
    }
  }
}
