import { AppError } from '../../../shared/errors/app-error.js';
import type { SessionsTable } from '../../db/schema.js';
import { auditActor, type AuditRepository } from '../audit/audit.repository.js';
import type { Client } from './auth.service.js';
import type { SessionsRepository } from './sessions.repository.js';
import type { AuthContext } from './tokens.js';

/** A session as its owner (or an administrator) sees it. */
export interface SessionView {
  id: string;
  created_at: string;
  last_used_at: string | null;
  expires_at: string;
  ip: string | null;
  user_agent: string | null;
  auth_method: string | null;
  /** The session of the request that asked. */
  current: boolean;
}

/** Who ends sessions: the person themself or an administrator (the audit trail says which). */
type EndedBy = 'self' | 'administrator';

/**
 * A person's live sessions, listed and ended by themself or an administrator. Ending goes through
 * the session store's revocation, which drops the session from every instance's cache at once
 * (docs/proxy.md, "Performance"): its tokens are refused from the next request on.
 */
export class SessionsService {
  constructor(
    private readonly deps: {
      sessions: SessionsRepository;
      audit: AuditRepository;
      now: () => number;
    },
  ) {}

  private nowIso(): string {
    return new Date(this.deps.now()).toISOString();
  }

  async list(userId: string, currentSessionId: string | undefined): Promise<SessionView[]> {
    const rows = await this.deps.sessions.listLive(userId, this.nowIso());
    return rows.map((row) => view(row, currentSessionId));
  }

  /** Ends one live session of the user; 404 when the user has no such live session. */
  async end(userId: string, sessionId: string, actor: AuthContext, by: EndedBy, client: Client): Promise<void> {
    const live = await this.deps.sessions.listLive(userId, this.nowIso());
    if (!live.some((row) => row.id === sessionId)) throw new AppError('SESSION_NOT_FOUND');
    await this.deps.sessions.revoke(sessionId, this.nowIso());
    await this.deps.audit.record({
      action: 'auth.session_end',
      outcome: 'success',
      ...auditActor(actor),
      targetType: 'session',
      targetId: sessionId,
      ...client,
      details: { user_id: userId, by },
    });
  }

  /** Ends every live session of the user but `exceptId` (none: all of them); returns how many. */
  async endAll(userId: string, exceptId: string | undefined, actor: AuthContext, by: EndedBy, client: Client): Promise<number> {
    const ended = await this.deps.sessions.revokeAllOfUser(userId, this.nowIso(), undefined, exceptId);
    await this.deps.audit.record({
      action: 'auth.sessions_end',
      outcome: 'success',
      ...auditActor(actor),
      targetType: 'user',
      targetId: userId,
      ...client,
      details: { by, ended: ended.length, kept_current: exceptId !== undefined },
    });
    return ended.length;
  }
}

function view(row: SessionsTable, currentSessionId: string | undefined): SessionView {
  return {
    id: row.id,
    created_at: row.created_at,
    last_used_at: row.last_used_at,
    expires_at: row.expires_at,
    ip: row.ip,
    user_agent: row.user_agent,
    auth_method: row.auth_method,
    current: row.id === currentSessionId,
  };
}
