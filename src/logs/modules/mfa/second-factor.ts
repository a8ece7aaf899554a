import { AppError } from '../../../shared/errors/app-error.js';
import { looksLikeRecoveryCode, matchRecoveryCode, newRecoveryCodes, recoveryCodeDigest } from '../../../shared/mfa/recovery-codes.js';
import { newTotpSecret, totpUri, verifyTotp } from '../../../shared/mfa/totp.js';
import type { LogsConfig } from '../../config.js';
import type { LogsMfaChallengesTable, LogsUsersTable } from '../../db/schema.js';
import { auditActor, type AuditEntry, type LogsAuditRepository } from '../audit/audit.repository.js';
import type { Client } from '../auth/client.js';
import type { LoginGuard } from '../auth/login-guard.js';
import type { LoginAnswer, SessionIssuer } from '../auth/session-issuer.js';
import { permissionsOfRole, type Permission } from '../rbac/permissions.js';
import { assertCanActOnUser } from '../rbac/privilege.js';
import type { LogsUsersRepository } from '../users/users.repository.js';
import { challengeHash, type MfaRepository } from './mfa.repository.js';

/** How long a login may wait for its code, and an enrolment-only credential lasts. */
export const LOGIN_CHALLENGE_TTL_MS = 5 * 60_000;
export const ENROLMENT_TTL_MS = 15 * 60_000;
/** Wrong codes one login challenge takes before it is spent (the account's lockout counts them too). */
const CHALLENGE_MAX_FAILURES = 5;

export interface SecondFactorDeps {
  config: LogsConfig;
  mfa: MfaRepository;
  users: LogsUsersRepository;
  loginGuard: LoginGuard;
  issuer: SessionIssuer;
  audit: LogsAuditRepository;
  now: () => number;
}

/** The person a request acts as (a session, or an enrolment-only credential). */
export interface MfaActor {
  readonly userId: string;
  readonly username: string;
  readonly homeTenantId: string;
}

export interface MfaStatus {
  totp: boolean;
  recovery_codes_left: number;
  required: boolean;
}

/**
 * TOTP as a second factor of the logs service (docs/logs-api.md "Second factor"): enrolment,
 * the login's second step, removal, and enforcement for holders of LOGS_MFA_REQUIRED_PERMISSIONS.
 */
export class SecondFactor {
  constructor(private readonly deps: SecondFactorDeps) {}

  private nowIso(): string {
    return new Date(this.deps.now()).toISOString();
  }

  /** Whether the configured permissions make a second factor compulsory for the user. */
  async required(userId: string): Promise<boolean> {
    const wanted = this.deps.config.mfa.requiredPermissions;
    if (wanted.length === 0) return false;
    const roles = (await this.deps.users.rolesOf([userId])).get(userId) ?? [];
    const held = new Set<Permission>(roles.flatMap((role) => permissionsOfRole(role)));
    return wanted.some((permission) => held.has(permission));
  }

  /** Whether a password alone may stand for the user (HTTP Basic): no second factor, and none required. */
  async passwordAlone(userId: string): Promise<boolean> {
    const totp = await this.deps.mfa.totpOf(userId);
    return !totp?.confirmed_at && !(await this.required(userId));
  }

  private newChallenge(purpose: LogsMfaChallengesTable['purpose'], userId: string, ttlMs: number) {
    return this.deps.mfa.newChallenge(purpose, userId, ttlMs, this.deps.now());
  }

  /**
   * After a right password: a 401 asking for the code (with a login challenge) when the user has a
   * second factor, a 401 asking for enrolment (with an enrolment-only credential) when the
   * configuration requires one they lack; nothing otherwise (the plain login answer follows).
   */
  async afterPassword(user: LogsUsersTable, client: Client): Promise<void> {
    const totp = await this.deps.mfa.totpOf(user.id);
    if (totp?.confirmed_at) {
      const challenge = await this.newChallenge('login', user.id, LOGIN_CHALLENGE_TTL_MS);
      throw new AppError('LOGS_MFA_REQUIRED', {
        data: { mfa: { challenge, methods: ['totp', 'recovery_code'], expires_in: LOGIN_CHALLENGE_TTL_MS / 1000 } },
      });
    }
    if (await this.required(user.id)) {
      const enrolmentToken = await this.newChallenge('enrolment', user.id, ENROLMENT_TTL_MS);
      await this.record(user.tenant_id, 'auth.login', 'failure', user, client, { details: { reason: 'mfa_enrolment_required' } });
      throw new AppError('LOGS_MFA_ENROLMENT_REQUIRED', {
        data: { mfa: { enrolment_token: enrolmentToken, expires_in: ENROLMENT_TTL_MS / 1000 } },
      });
    }
  }

  /** The login's second step: a live login challenge and a TOTP or recovery code give the login answer. */
  async verifyLogin(challenge: string, code: string, client: Client): Promise<LoginAnswer> {
    const hash = challengeHash(challenge);
    const row = challenge.length <= 128 ? await this.deps.mfa.liveChallenge(hash, 'login', this.nowIso()) : undefined;
    const user = row?.user_id ? await this.deps.users.findById(row.user_id) : undefined;
    if (!row || !user) throw new AppError('LOGS_INVALID_TOKEN');
    await this.deps.loginGuard.assertSecondFactorOpen(user.username, client, 'auth.mfa_verify');
    const method = await this.spend(user, code);
    if (!method) {
      await this.deps.mfa.challengeFailed(hash, CHALLENGE_MAX_FAILURES, this.nowIso());
      throw await this.wrongCode(user, user.tenant_id, 'auth.mfa_verify', user, client);
    }
    if (!(await this.deps.mfa.useChallenge(hash, this.nowIso()))) throw new AppError('LOGS_INVALID_TOKEN');
    await this.deps.loginGuard.secondFactorPassed(user.username);
    if (method === 'recovery_code') {
      const left = (await this.deps.mfa.recoveryDigests(user.id)).length;
      await this.record(user.tenant_id, 'auth.mfa_recovery_code_used', 'success', user, client, { details: { left } });
    }
    return this.deps.issuer.open(user, client, method === 'totp' ? 'password+totp' : 'password+recovery_code');
  }

  /**
   * Spends a code of the user's: a TOTP code whose step is later than the last used one, or a
   * recovery code not used before. Each is one conditional write, so of two concurrent uses of the
   * same code one wins. undefined for a wrong, replayed or lost-the-race code.
   */
  private async spend(user: LogsUsersTable, code: string): Promise<'totp' | 'recovery_code' | undefined> {
    const totp = await this.deps.mfa.totpOf(user.id);
    if (!totp?.confirmed_at) return undefined;
    if (looksLikeRecoveryCode(code)) {
      const digests = await this.deps.mfa.recoveryDigests(user.id);
      const index = matchRecoveryCode(code, digests);
      return index >= 0 && (await this.deps.mfa.useRecoveryCode(user.id, digests[index]!)) ? 'recovery_code' : undefined;
    }
    const step = verifyTotp(totp.secret, code, this.deps.now(), totp.last_used_step);
    return step !== undefined && (await this.deps.mfa.useStep(user.id, step)) ? 'totp' : undefined;
  }

  async status(actor: MfaActor): Promise<MfaStatus> {
    const totp = await this.deps.mfa.totpOf(actor.userId);
    return {
      totp: Boolean(totp?.confirmed_at),
      recovery_codes_left: totp?.confirmed_at ? (await this.deps.mfa.recoveryDigests(actor.userId)).length : 0,
      required: await this.required(actor.userId),
    };
  }

  /** Enrolment's first step: a new secret and its otpauth:// URI (409 when one is already confirmed). */
  async start(actor: MfaActor): Promise<{ secret: string; otpauth_uri: string }> {
    const secret = newTotpSecret();
    if (!(await this.deps.mfa.startTotp(actor.userId, secret, this.nowIso()))) throw new AppError('LOGS_MFA_ALREADY_ENROLLED');
    return { secret, otpauth_uri: totpUri(secret, this.deps.config.mfa.issuer, actor.username) };
  }

  /**
   * Enrolment's second step: the first code from the app confirms the secret; ten recovery codes,
   * in this answer only. With an enrolment-only credential the login completes too (`login`).
   */
  async confirm(
    actor: MfaActor,
    code: string,
    client: Client,
    enrolmentTokenHash?: string,
  ): Promise<{ recovery_codes: string[]; login?: LoginAnswer }> {
    const totp = await this.deps.mfa.totpOf(actor.userId);
    if (!totp) throw new AppError('LOGS_MFA_NOT_ENROLLED');
    if (totp.confirmed_at) throw new AppError('LOGS_MFA_ALREADY_ENROLLED');
    const step = verifyTotp(totp.secret, code, this.deps.now(), null);
    const user = await this.deps.users.findById(actor.userId);
    if (!user) throw new AppError('LOGS_INVALID_TOKEN');
    if (step === undefined) {
      await this.record(actor.homeTenantId, 'auth.mfa_enrol', 'failure', actor, client, { details: { reason: 'invalid_code' } });
      throw new AppError('LOGS_INVALID_CREDENTIALS');
    }
    const codes = newRecoveryCodes();
    if (enrolmentTokenHash !== undefined && !(await this.deps.mfa.useChallenge(enrolmentTokenHash, this.nowIso())))
      throw new AppError('LOGS_INVALID_TOKEN');
    if (!(await this.deps.mfa.confirmTotp(actor.userId, step, codes.map(recoveryCodeDigest), this.nowIso())))
      throw new AppError('LOGS_MFA_ALREADY_ENROLLED');
    await this.record(actor.homeTenantId, 'auth.mfa_enrol', 'success', actor, client, { details: { method: 'totp' } });
    if (enrolmentTokenHash === undefined) return { recovery_codes: codes };
    return { recovery_codes: codes, login: await this.deps.issuer.open(user, client, 'password+totp') };
  }

  /** The person removes their own second factor with a current code (a replayed one is refused). */
  async remove(actor: MfaActor, code: string, client: Client): Promise<void> {
    const user = await this.deps.users.findById(actor.userId);
    const totp = await this.deps.mfa.totpOf(actor.userId);
    if (!user || !totp?.confirmed_at) throw new AppError('LOGS_MFA_NOT_ENROLLED');
    await this.deps.loginGuard.assertSecondFactorOpen(user.username, client, 'auth.mfa_remove');
    const step = verifyTotp(totp.secret, code, this.deps.now(), totp.last_used_step);
    if (step === undefined || !(await this.deps.mfa.useStep(user.id, step)))
      throw await this.wrongCode(user, actor.homeTenantId, 'auth.mfa_remove', actor, client);
    await this.deps.mfa.removeTotp(user.id);
    await this.record(actor.homeTenantId, 'auth.mfa_remove', 'success', actor, client, {
      targetType: 'user',
      targetId: user.id,
      details: { by: 'self' },
    });
  }

  /**
   * Ten new recovery codes for an enrolled person who proves a current TOTP code (a recovery code is
   * refused: they are what is replaced); the old ones stop working. Wrong codes count as at removal.
   */
  async regenerateRecoveryCodes(actor: MfaActor, code: string, client: Client): Promise<{ recovery_codes: string[] }> {
    const user = await this.deps.users.findById(actor.userId);
    const totp = await this.deps.mfa.totpOf(actor.userId);
    if (!user || !totp?.confirmed_at) throw new AppError('LOGS_MFA_NOT_ENROLLED');
    await this.deps.loginGuard.assertSecondFactorOpen(user.username, client, 'auth.mfa_recovery_codes');
    const step = looksLikeRecoveryCode(code) ? undefined : verifyTotp(totp.secret, code, this.deps.now(), totp.last_used_step);
    const codes = newRecoveryCodes();
    const target = { targetType: 'user', targetId: user.id } as const;
    if (step === undefined || !(await this.deps.mfa.replaceRecoveryCodes(user.id, step, codes.map(recoveryCodeDigest), this.nowIso())))
      throw await this.wrongCode(user, actor.homeTenantId, 'auth.mfa_recovery_codes', actor, client, target);
    await this.record(actor.homeTenantId, 'auth.mfa_recovery_codes', 'success', actor, client, target);
    return { recovery_codes: codes };
  }

  /** An administrator (users:manage, same tenant, no more powerful target) removes a user's second factor. */
  async removeFor(
    tenantId: string,
    userId: string,
    actor: MfaActor & { permissions: ReadonlySet<Permission> },
    client: Client,
  ): Promise<void> {
    const user = await this.deps.users.findInTenant(tenantId, userId);
    if (!user) throw new AppError('LOGS_NOT_FOUND');
    await assertCanActOnUser(actor, this.deps.users, user.id);
    if (!(await this.deps.mfa.removeTotp(user.id))) throw new AppError('LOGS_MFA_NOT_ENROLLED');
    await this.record(tenantId, 'auth.mfa_remove', 'success', actor, client, {
      targetType: 'user',
      targetId: user.id,
      details: { by: 'administrator', username: user.username },
    });
  }

  /** An audit record of what a person did (or tried) with a second factor, their own or another's. */
  private record(
    tenantId: string,
    action: string,
    outcome: AuditEntry['outcome'],
    actor: Parameters<typeof auditActor>[0],
    client: Client,
    more: Pick<AuditEntry, 'targetType' | 'targetId' | 'details'> = {},
  ): Promise<void> {
    return this.deps.audit.record({ tenantId, action, outcome, ...auditActor(actor), ...client, ...more });
  }

  /** A wrong code: one failure toward the account's lockout, audited; returns the 401 to throw. */
  private async wrongCode(
    user: LogsUsersTable,
    tenantId: string,
    action: string,
    actor: Parameters<typeof auditActor>[0],
    client: Client,
    target: Pick<AuditEntry, 'targetType' | 'targetId'> = {},
  ): Promise<AppError> {
    await this.deps.loginGuard.secondFactorFailed(user.username);
    await this.record(tenantId, action, 'failure', actor, client, { ...target, details: { reason: 'invalid_code' } });
    return new AppError('LOGS_INVALID_CREDENTIALS');
  }

  /** The user an enrolment-only credential stands for, and the credential's hash. */
  async enrolling(token: string): Promise<{ user: LogsUsersTable; tokenHash: string } | undefined> {
    if (token.length > 128) return undefined;
    const tokenHash = challengeHash(token);
    const row = await this.deps.mfa.liveChallenge(tokenHash, 'enrolment', this.nowIso());
    const user = row?.user_id ? await this.deps.users.findById(row.user_id) : undefined;
    return user ? { user, tokenHash } : undefined;
  }
}
