import { AppError } from '../../../shared/errors/app-error.js';
import type { LogsSessionsTable } from '../../db/schema.js';
import { auditActor, type LogsAuditRepository } from '../audit/audit.repository.js';
import type { Client } from '../auth/client.js';
import type { LogsSessionsRepository } from '../auth/sessions.repository.js';
import type { Permission } from '../rbac/permissions.js';
import { assertCanActOnUser } from '../rbac/privilege.js';
import type { LogsUsersRepository } from '../users/users.repository.js';

export interface SessionView {
  id: string;
  created_at: string;
  last_used_at: string | null;
  expires_at: string;
  ip: string | null;
  user_agent: string | null;
  method: string | null;
  /** The session the request itself belongs to. */
  current: boolean;
}

/** Who asks, as the guards resolved them. */
export interface SessionsActor {
  readonly userId: string;
  readonly username: string;
  readonly homeTenantId: string;
  readonly sessionId: string | null;
  readonly permissions: ReadonlySet<Permission>;
}

export interface SessionsDeps {
  sessions: LogsSessionsRepository;
  users: LogsUsersRepository;
  audit: LogsAuditRepository;
  now: () => number;
}

function view(row: LogsSessionsTable, current: string | null): SessionView {
  return {
    id: row.id,
    created_at: row.created_at,
    last_used_at: row.last_used_at,
    expires_at: row.expires_at,
    ip: row.ip,
    user_agent: row.user_agent,
    method: row.method,
    current: row.id === current,
  };
}

/**
 * Sessions a person can see and end (docs/logs-api.md "Sessions"): their own, or, for a users:manage
 * holder, those of a user of the tenant no more powerful than themselves. An ended session's tokens
 * are refused on the next request on every instance (each request reads its session row).
 */
export class SessionsService {
  constructor(private readonly deps: SessionsDeps) {}

  private nowIso(): string {
    return new Date(this.deps.now()).toISOString();
  }

  async listOwn(actor: SessionsActor): Promise<SessionView[]> {
    return (await this.deps.sessions.listLive(actor.userId, this.nowIso())).map((row) => view(row, actor.sessionId));
  }

  async endOwn(actor: SessionsActor, sessionId: string, client: Client): Promise<void> {
    if (!(await this.deps.sessions.revokeOfUser(actor.userId, sessionId, this.nowIso()))) throw new AppError('LOGS_NOT_FOUND');
    await this.audited(actor, actor.homeTenantId, actor.userId, client, { session: sessionId, by: 'self' });
  }

  /** Ends every session of the caller but the one the request came with. */
  async endOtherOwn(actor: SessionsActor, client: Client): Promise<number> {
    const ended = await this.deps.sessions.revokeOthers(actor.userId, actor.sessionId ?? undefined, this.nowIso());
    await this.audited(actor, actor.homeTenantId, actor.userId, client, { sessions: ended, scope: 'others', by: 'self' });
    return ended;
  }

  private async target(tenantId: string, userId: string, actor: SessionsActor) {
    const user = await this.deps.users.findInTenant(tenantId, userId);
    if (!user) throw new AppError('LOGS_NOT_FOUND');
    if (user.id !== actor.userId) await assertCanActOnUser(actor, this.deps.users, user.id);
    return user;
  }

  async listFor(tenantId: string, userId: string, actor: SessionsActor): Promise<SessionView[]> {
    const user = await this.target(tenantId, userId, actor);
    return (await this.deps.sessions.listLive(user.id, this.nowIso())).map((row) => view(row, actor.sessionId));
  }

  async endFor(tenantId: string, userId: string, sessionId: string, actor: SessionsActor, client: Client): Promise<void> {
    const user = await this.target(tenantId, userId, actor);
    if (!(await this.deps.sessions.revokeOfUser(user.id, sessionId, this.nowIso()))) throw new AppError('LOGS_NOT_FOUND');
    await this.audited(actor, tenantId, user.id, client, { session: sessionId, by: 'administrator', username: user.username });
  }

  /** Ends every session of the user (the administrator's own current one too, if they name themselves). */
  async endAllFor(tenantId: string, userId: string, actor: SessionsActor, client: Client): Promise<number> {
    const user = await this.target(tenantId, userId, actor);
    const ended = await this.deps.sessions.revokeOthers(user.id, undefined, this.nowIso());
    await this.audited(actor, tenantId, user.id, client, { sessions: ended, scope: 'all', by: 'administrator', username: user.username });
    return ended;
  }

  private async audited(actor: SessionsActor, tenantId: string, userId: string, client: Client, details: Record<string, unknown>) {
    await this.deps.audit.record({
      tenantId,
      action: 'auth.session_end',
      outcome: 'success',
      ...auditActor(actor),
      ...client,
      targetType: 'user',
      targetId: userId,
      details,
    });
  }
}
