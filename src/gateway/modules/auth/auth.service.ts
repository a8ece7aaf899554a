import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { brokenPasswordRule } from '../../../shared/auth/password-policy.js';
import { LoginLockout } from '../../../shared/auth/login-lockout.js';
import { hashPassword, verifyPassword } from '../../../shared/auth/passwords.js';
import { AppError } from '../../../shared/errors/app-error.js';
import type { GatewayConfig } from '../../config.js';
import type { GatewaySchema, SessionAuthMethod, UsersTable } from '../../db/schema.js';
import { auditActor, type AuditEntry, type AuditRepository } from '../audit/audit.repository.js';
import type { MfaService } from '../mfa/mfa.service.js';
import type { UsersRepository } from '../users/users.repository.js';
import type { SessionsRepository } from './sessions.repository.js';
import { type AuthContext, type GatewayTokens, type IssuedToken, type SessionClaims } from './tokens.js';

export interface Client {
  ip: string;
  userAgent?: string | undefined;
  requestId?: string | undefined;
}

/** Throws the 400 for the first password rule broken (spec 2.2), or the length cap. */
export function assertPasswordAcceptable(password: string): void {
  const broken = brokenPasswordRule(password);
  if (broken) throw new AppError(broken);
}

export interface AuthServiceDeps {
  db: Kysely<GatewaySchema>;
  config: GatewayConfig;
  users: UsersRepository;
  sessions: SessionsRepository;
  tokens: GatewayTokens;
  audit: AuditRepository;
  /** The password check and its failure counts (gatewayLoginLockout), shared with the second factor. */
  lockout: GatewayLoginLockout;
  mfa: MfaService;
  now: () => number;
}

export type GatewayLoginLockout = LoginLockout<UsersTable, Client, GatewaySchema>;

/** The `login_failures` key of an account's lockout: what an operator's password reset clears. */
export function accountLockoutKey(noPegawai: string): string {
  return ACCOUNT_FAILURES_PREFIX + noPegawai.toLowerCase();
}

const ACCOUNT_FAILURES_PREFIX = 'account:';

/**
 * Failures per employee number and per address (LOGIN_MAX_FAILURES_PER_*), in the database: what
 * wrong passwords and wrong second-factor codes count against.
 */
export function gatewayLoginLockout(deps: Pick<AuthServiceDeps, 'db' | 'config' | 'users' | 'audit' | 'now'>): GatewayLoginLockout {
  const { perAccount, perAddress, windowMs } = deps.config.loginLimits;
  return new LoginLockout(
    deps.db,
    {
      perAccount: { prefix: ACCOUNT_FAILURES_PREFIX, limit: perAccount, windowMs },
      perAddress: { prefix: 'address:', limit: perAddress, windowMs, counts: 'failures' },
    },
    {
      findUser: (noPegawai) => deps.users.findByNoPegawai(noPegawai),
      passwordHash: (user) => user.password_hash,
      lockedOut: async ({ name, client, action }, seconds) => {
        await deps.audit.record({ action, outcome: 'failure', actor: name.slice(0, 64), ...client, details: { reason: 'locked_out' } });
        return new AppError('TOO_MANY_ATTEMPTS', { params: { seconds }, headers: { 'retry-after': String(seconds) } });
      },
      failed: async ({ name, client, action }, user) => {
        await deps.audit.record({
          action,
          outcome: 'failure',
          actorId: user?.id ?? null,
          actor: name.slice(0, 64),
          ...client,
          details: { reason: 'invalid_credentials' },
        });
        return new AppError('INVALID_CREDENTIALS');
      },
    },
    deps.now,
  );
}

/** The spec's login answer: a session's token and the user. */
export interface LoginResult {
  token: IssuedToken;
  user: UsersTable;
}

export class AuthService {
  private readonly lockout: GatewayLoginLockout;
  /** Access rights whose holders must enrol a second factor (GATEWAY_MFA_REQUIRED_FOR). */
  private readonly mfaRequiredFor: ReadonlySet<string>;

  constructor(private readonly deps: AuthServiceDeps) {
    this.lockout = deps.lockout;
    this.mfaRequiredFor = new Set(deps.config.mfaRequiredFor);
  }

  /** An audit record of what users do to their own account or session. */
  private recordOwn(
    action: AuditEntry['action'],
    outcome: AuditEntry['outcome'],
    actor: Parameters<typeof auditActor>[0],
    client: Client,
    details?: AuditEntry['details'],
  ): Promise<void> {
    return this.deps.audit.record({ action, outcome, ...auditActor(actor), ...client, ...(details === undefined ? {} : { details }) });
  }

  /**
   * Spec 4.1's login. The password is verified first, the same way for every account (the dummy
   * hash for unknown ones); only then is the second factor looked at: an enrolled user gets the 401
   * MFA_REQUIRED with a challenge for `verifySecondFactor`, a user whose access right requires one
   * but who has none the 401 MFA_ENROLMENT_REQUIRED with an enrolment-only token.
   */
  async login(noPegawai: string, password: string, client: Client): Promise<LoginResult> {
    let enrolled = false;
    const user = await this.lockout.verify(noPegawai, password, client, 'auth.login', {
      // Asked only once the password is right; an enrolled user's failures wait for the code.
      keepFailures: async (candidate) => (enrolled = await this.deps.mfa.isEnrolled(candidate.id)),
    });
    if (this.passwordExpired(user)) {
      await this.recordOwn('auth.login', 'failure', user, client, { reason: 'password_expired' });
      throw new AppError('PASSWORD_EXPIRED', { data: { requirePasswordReset: true } });
    }
    if (enrolled) {
      const challenge = await this.deps.mfa.newChallenge(user.id, 'login');
      await this.recordOwn('auth.login', 'failure', user, client, { reason: 'mfa_required' });
      throw new AppError('MFA_REQUIRED', {
        data: { requireMfa: true, challenge: challenge.token, expires_in: challenge.expiresInSeconds },
      });
    }
    if (this.mfaRequiredFor.has(user.hak_akses_id)) {
      const enrolment = await this.deps.mfa.newChallenge(user.id, 'enrolment');
      await this.recordOwn('auth.login', 'failure', user, client, { reason: 'mfa_enrolment_required' });
      throw new AppError('MFA_ENROLMENT_REQUIRED', {
        data: { requireMfaEnrolment: true, enrolment_token: enrolment.token, expires_in: enrolment.expiresInSeconds },
      });
    }
    const token = await this.startSession(user, client, {}, 'password');
    await this.recordOwn('auth.login', 'success', user, client, { method: 'password' });
    return { token, user };
  }

  /**
   * The second step of an enrolled user's login: the challenge from `login` and a TOTP code or a
   * recovery code. Each wrong code counts toward the account's lockout (and the challenge's own
   * limit); the right one uses up the code and the challenge and answers as login does.
   */
  async verifySecondFactor(challengeToken: string, code: string, client: Client): Promise<LoginResult> {
    const challenge = await this.deps.mfa.findChallenge(challengeToken, 'login');
    const user = challenge && (await this.deps.users.findById(challenge.user_id));
    if (!challenge || !user) {
      await this.deps.audit.record({ action: 'auth.mfa_verify', outcome: 'failure', ...client, details: { reason: 'challenge_invalid' } });
      throw new AppError('MFA_CHALLENGE_INVALID');
    }
    await this.lockout.assertNotLimited({ name: user.no_pegawai, client, action: 'auth.mfa_verify' });
    const outcome = await this.deps.mfa.redeem(user.id, code, challenge.digest);
    if ('refused' in outcome) {
      if (outcome.refused === 'challenge_taken') {
        await this.recordOwn('auth.mfa_verify', 'failure', user, client, { reason: 'challenge_invalid' });
        throw new AppError('MFA_CHALLENGE_INVALID');
      }
      await this.lockout.countFailure(user.no_pegawai, client);
      await this.deps.mfa.challengeFailed(challenge.digest);
      await this.recordOwn('auth.mfa_verify', 'failure', user, client, { reason: outcome.refused });
      throw new AppError('MFA_CODE_INVALID');
    }
    await this.lockout.succeeded(user.no_pegawai);
    const method: SessionAuthMethod = outcome.used.kind === 'totp' ? 'password+totp' : 'recovery_code';
    if (outcome.used.kind === 'recovery_code') {
      await this.recordOwn('auth.mfa_recovery_code_used', 'success', user, client, { remaining: outcome.used.remaining });
    }
    const token = await this.startSession(user, client, {}, method);
    await this.recordOwn('auth.login', 'success', user, client, { method });
    return { token, user };
  }

  /** Opens a session and issues its first token; used by password login and SSO. */
  async startSession(
    user: UsersTable,
    client: Client,
    extraClaims: Partial<SessionClaims>,
    method: SessionAuthMethod,
  ): Promise<IssuedToken> {
    const sessionId = randomUUID();
    const at = new Date(this.deps.now()).toISOString();
    await this.deps.sessions.create({
      id: sessionId,
      user_id: user.id,
      created_at: at,
      last_used_at: at,
      auth_method: method,
      expires_at: this.deps.tokens.sessionExpiry(),
      revoked_at: null,
      ip: client.ip,
      user_agent: client.userAgent?.slice(0, 512) ?? null,
    });
    return this.deps.tokens.issue({ ...extraClaims, user_id: user.id, sid: sessionId, no_pegawai: user.no_pegawai, email: user.email });
  }

  async logout(auth: AuthContext, client: Client): Promise<void> {
    await this.deps.sessions.revoke(auth.sessionId, new Date(this.deps.now()).toISOString());
    await this.recordOwn('auth.logout', 'success', auth, client);
  }

  /** A new token for the same session, which lives on for another token lifetime. */
  async refresh(auth: AuthContext, client: Client): Promise<IssuedToken> {
    const { iat: _iat, exp: _exp, jti: _jti, sub: _sub, iss: _iss, aud: _aud, ...claims } = auth.claims;
    await this.deps.sessions.extend(auth.sessionId, this.deps.tokens.sessionExpiry(), new Date(this.deps.now()).toISOString());
    const token = await this.deps.tokens.issue(claims);
    await this.recordOwn('auth.refresh', 'success', auth, client);
    return token;
  }

  async changePassword(auth: AuthContext, oldPassword: string, newPassword: string, confirmation: string, client: Client): Promise<void> {
    if (newPassword !== confirmation) throw new AppError('PASSWORD_CONFIRMATION_MISMATCH');
    const user = await this.deps.users.findById(auth.userId);
    if (!user) throw new AppError('TOKEN_INVALID');
    if (!user.password_hash || !(await verifyPassword(user.password_hash, oldPassword))) {
      await this.recordOwn('auth.change_password', 'failure', user, client, { reason: 'old_password_wrong' });
      throw new AppError('OLD_PASSWORD_WRONG');
    }
    await this.setPassword(user, newPassword, client, 'auth.change_password', user.id);
  }

  /**
   * The way out of an expired password (spec 4.1): the old password proves the caller, and the
   * attempt counts against the same lockout as a login.
   */
  async changeExpiredPassword(
    noPegawai: string,
    oldPassword: string,
    newPassword: string,
    confirmation: string,
    client: Client,
    code?: string,
  ): Promise<void> {
    if (newPassword !== confirmation) throw new AppError('PASSWORD_CONFIRMATION_MISMATCH');
    let enrolled = false;
    const user = await this.lockout.verify(noPegawai, oldPassword, client, 'auth.change_expired_password', {
      // A right password alone does not forget the wrong codes of an enrolled user (see login).
      keepFailures: async (candidate) => (enrolled = await this.deps.mfa.isEnrolled(candidate.id)),
    });
    // The password alone does not change the password of an account with a second factor.
    if (enrolled) {
      if (code === undefined) throw new AppError('MFA_REQUIRED', { data: { requireMfa: true } });
      const outcome = await this.deps.mfa.redeem(user.id, code);
      if ('refused' in outcome) {
        await this.lockout.countFailure(user.no_pegawai, client);
        await this.recordOwn('auth.change_expired_password', 'failure', user, client, { reason: outcome.refused });
        throw new AppError('MFA_CODE_INVALID');
      }
      await this.lockout.succeeded(user.no_pegawai);
    }
    await this.setPassword(user, newPassword, client, 'auth.change_expired_password', user.id);
  }

  /** Administrator reset (spec 4.2). */
  async resetPassword(target: UsersTable, newPassword: string, actor: AuthContext, client: Client): Promise<void> {
    await this.setPassword(target, newPassword, client, 'user.reset_password', actor.userId, actor.claims.no_pegawai, false);
  }

  /** Checks rules, stores the new hash and ends every session of the user, in one transaction. */
  private async setPassword(
    user: UsersTable,
    newPassword: string,
    client: Client,
    action: string,
    actorId: string,
    actor = user.no_pegawai,
    refuseSame = true,
  ) {
    assertPasswordAcceptable(newPassword);
    if (refuseSame && user.password_hash && (await verifyPassword(user.password_hash, newPassword))) throw new AppError('PASSWORD_REUSED');
    const passwordHash = await hashPassword(newPassword);
    const at = new Date(this.deps.now()).toISOString();
    await this.deps.db.transaction().execute(async (trx) => {
      await this.deps.users.update(user.id, { password_hash: passwordHash, password_changed_at: at, updated_at: at }, trx);
      await this.deps.sessions.revokeAllOfUser(user.id, at, trx);
      await this.deps.audit.record({ action, outcome: 'success', actorId, actor, targetType: 'user', targetId: user.id, ...client }, trx);
    });
  }

  private passwordExpired(user: UsersTable): boolean {
    if (this.deps.config.passwordMaxAgeMs === 0 || !user.password_changed_at) return false;
    return Date.parse(user.password_changed_at) + this.deps.config.passwordMaxAgeMs <= this.deps.now();
  }
}
