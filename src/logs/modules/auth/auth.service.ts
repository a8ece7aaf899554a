import type { Kysely } from 'kysely';
import { AppError } from '../../../shared/errors/app-error.js';
import type { LogsSchema } from '../../db/schema.js';
import { auditActor, type LogsAuditRepository } from '../audit/audit.repository.js';
import type { SecondFactor } from '../mfa/second-factor.js';
import type { LogsUsersRepository } from '../users/users.repository.js';
import type { Client, LogsAuthContext } from './authenticate.js';
import type { LoginGuard } from './login-guard.js';
import { hashRefreshToken, type LoginAnswer, type SessionIssuer, type TokenPair } from './session-issuer.js';
import type { LogsSessionsRepository } from './sessions.repository.js';

export type { TokenPair };

export interface LogsAuthServiceDeps {
  db: Kysely<LogsSchema>;
  users: LogsUsersRepository;
  sessions: LogsSessionsRepository;
  issuer: SessionIssuer;
  secondFactor: SecondFactor;
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

  /**
   * The password first, with the same work and answer whoever the name belongs to; only a right
   * password leads to the second factor's question (docs/logs-api.md "Second factor").
   */
  async login(username: string, password: string, client: Client): Promise<LoginAnswer> {
    await this.deps.loginGuard.assertSecondFactorOpen(username, client, 'auth.login');
    const user = await this.deps.loginGuard.verify(username, password, client);
    await this.deps.secondFactor.afterPassword(user, client);
    return this.deps.issuer.open(user, client, 'password');
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
      return this.deps.issuer.issuePair(user, found.session_id, trx);
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
}
