import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { LogsConfig } from '../../config.js';
import type { LogsSchema, LogsUsersTable } from '../../db/schema.js';
import { auditActor, type LogsAuditRepository } from '../audit/audit.repository.js';
import type { LogsUsersRepository } from '../users/users.repository.js';
import type { Client } from './client.js';
import type { LogsSessionsRepository } from './sessions.repository.js';
import type { LogsTokens } from './tokens.js';

/** Spec 2.5 `token` object. */
export interface TokenPair {
  access_token: string;
  expires_in: number;
  refresh_token: string;
  token_type: 'Bearer';
}

/** Spec 2.5 login answer. */
export interface LoginAnswer {
  token: TokenPair;
  user: { username: string; roles: string[]; email: string };
}

/** How a session began, as its owner sees it in the sessions list. */
export type SignInMethod = 'password' | 'password+totp' | 'password+recovery_code' | 'passkey';

export function hashRefreshToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export interface SessionIssuerDeps {
  db: Kysely<LogsSchema>;
  config: LogsConfig;
  users: LogsUsersRepository;
  sessions: LogsSessionsRepository;
  tokens: LogsTokens;
  audit: LogsAuditRepository;
  now: () => number;
}

/**
 * The one place a session begins, whatever proved who the person is (a password, a password and a
 * code, a passkey): the session row with where and how, the first token pair, the audit entry.
 */
export class SessionIssuer {
  constructor(private readonly deps: SessionIssuerDeps) {}

  async open(user: LogsUsersTable, client: Client, method: SignInMethod): Promise<LoginAnswer> {
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
          last_used_at: at.toISOString(),
          ip: client.ip,
          user_agent: client.userAgent?.slice(0, 512) ?? null,
          method,
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
      // The password-only login's entry is as it was; a second factor or a passkey is named.
      ...(method === 'password' ? {} : { details: { method } }),
    });
    const roles = ((await this.deps.users.rolesOf([user.id])).get(user.id) ?? []).map((role) => role.name);
    return { token, user: { username: user.username, roles, email: user.email } };
  }

  async issuePair(user: LogsUsersTable, sessionId: string, trx: Kysely<LogsSchema> = this.deps.db): Promise<TokenPair> {
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
