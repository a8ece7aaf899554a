import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { AppError } from '../../../shared/errors/app-error.js';
import type { LogsConfig } from '../../config.js';
import type { LogsSchema, LogsUsersTable } from '../../db/schema.js';
import { auditActor, type LogsAuditRepository } from '../audit/audit.repository.js';
import type { LogsUsersRepository } from '../users/users.repository.js';
import type { Client, LogsAuthContext } from './authenticate.js';
import type { LoginGuard } from './login-guard.js';
import type { LogsSessionsRepository } from './sessions.repository.js';
import type { LogsTokens } from './tokens.js';

/** Spec 2.5 `token` object. */
export interface TokenPair {
  access_token: string;
  expires_in: number;
  refresh_token: string;
  token_type: 'Bearer';
}

function hashRefreshToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export interface LogsAuthServiceDeps {
  db: Kysely<LogsSchema>;
  config: LogsConfig;
  users: LogsUsersRepository;
  sessions: LogsSessionsRepository;
  tokens: LogsTokens;
  loginGuard: LoginGuard;
  audit: LogsAuditRepository;
  now: () => number;
}

/**
 * Login, refresh and logout. A login opens a session; each refresh token is single-use and is
 * exchanged for a new pair in the same session. Presenting a used refresh token again means it was
 * copied: the whole session (every token of the family) is revoked.
 */
export class LogsAuthService {
  constructor(private readonly deps: LogsAuthServiceDeps) {}

  async login(username: string, password: string, client: Client) {
    const user = await this.deps.loginGuard.verify(username, password, client, 'auth.login', 'login');
    const sessionId = randomUUID();
    const at = new Date(this.deps.now());
    const token = await this.deps.db.transaction().execute(async (trx) => {
      await this.deps.sessions.create(
        {
          id: sessionId,
          user_id: user.id,
          created_at: at.toISOString(),
          expires_at: new Date(at.getTime() + this.deps.config.token.refreshTtlMs).toISOString(),
          revoked_at: null,
        },
        trx,
      );
      return this.issuePair(user, sessionId, trx);
    });
    await this.deps.audit.record({
      tenantId: user.tenant_id,
      action: 'auth.login',
      outcome: 'success',
      ...auditActor(user),
      ...client,
    });
    const roles = ((await this.deps.users.rolesOf([user.id])).get(user.id) ?? []).map((role) => role.name);
    return { token, user: { username: user.username, roles, email: user.email } };
  }

  async refresh(refreshToken: string, client: Client): Promise<TokenPair> {
    const tokenHash = hashRefreshToken(refreshToken);
    const found = refreshToken.length <= 512 ? await this.deps.sessions.findRefreshToken(tokenHash) : undefined;
    const nowIso = new Date(this.deps.now()).toISOString();
    if (!found || found.revoked_at !== null || found.expires_at <= nowIso || found.session_expires_at <= nowIso)
      throw new AppError('LOGS_INVALID_TOKEN');
    const user = await this.deps.users.findById(found.user_id);
    if (!user) throw new AppError('LOGS_INVALID_TOKEN');
    const pair = await this.deps.db.transaction().execute(async (trx) => {
      if (!(await this.deps.sessions.markUsed(tokenHash, nowIso, trx))) return undefined;
      return this.issuePair(user, found.session_id, trx);
    });
    if (!pair) {
      // Reuse: someone holds a copy. End the session so neither copy (nor its access tokens) works.
      await this.deps.sessions.revoke(found.session_id, nowIso);
      await this.deps.audit.record({
        tenantId: user.tenant_id,
        action: 'auth.refresh_reuse',
        outcome: 'failure',
        ...auditActor(user),
        ...client,
        details: { session: found.session_id },
      });
      throw new AppError('LOGS_INVALID_TOKEN');
    }
    await this.deps.audit.record({
      tenantId: user.tenant_id,
      action: 'auth.refresh',
      outcome: 'success',
      ...auditActor(user),
      ...client,
    });
    return pair;
  }

  async logout(auth: LogsAuthContext, client: Client): Promise<void> {
    if (auth.sessionId) await this.deps.sessions.revoke(auth.sessionId, new Date(this.deps.now()).toISOString());
    await this.deps.audit.record({
      tenantId: auth.homeTenantId,
      action: 'auth.logout',
      outcome: 'success',
      ...auditActor(auth),
      ...client,
    });
  }

  private async issuePair(user: LogsUsersTable, sessionId: string, trx: Kysely<LogsSchema>): Promise<TokenPair> {
    const refreshToken = randomBytes(32).toString('base64url');
    const at = this.deps.now();
    await this.deps.sessions.addRefreshToken(
      {
        token_hash: hashRefreshToken(refreshToken),
        session_id: sessionId,
        created_at: new Date(at).toISOString(),
        expires_at: new Date(at + this.deps.config.token.refreshTtlMs).toISOString(),
      },
      trx,
    );
    const accessToken = await this.deps.tokens.issue({ sub: user.id, sid: sessionId, tid: user.tenant_id, username: user.username });
    return { access_token: accessToken, expires_in: this.deps.tokens.ttlSeconds, refresh_token: refreshToken, token_type: 'Bearer' };
  }
}
