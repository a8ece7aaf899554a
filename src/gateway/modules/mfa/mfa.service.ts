import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { LoginLockout } from '../../../shared/auth/login-lockout.js';
import { AppError } from '../../../shared/errors/app-error.js';
import { looksLikeRecoveryCode, matchRecoveryCode, newRecoveryCodes, recoveryCodeDigest } from '../../../shared/mfa/recovery-codes.js';
import { newTotpSecret, totpUri, verifyTotp } from '../../../shared/mfa/totp.js';
import type { GatewaySchema, MfaChallengesTable, UsersTable } from '../../db/schema.js';
import { auditActor, type AuditRepository } from '../audit/audit.repository.js';
import type { Client } from '../auth/auth.service.js';
import type { AuthContext } from '../auth/tokens.js';
import type { MfaRepository } from './mfa.repository.js';

/** How long the challenge between a right password and the code lives (Keycloak's login action timeout). */
export const CHALLENGE_TTL_MS = 5 * 60_000;
/** How long an enrolment-only token lives: time to install an app and scan a code. */
export const ENROLMENT_TTL_MS = 15 * 60_000;
/** Wrong codes one challenge takes before it is gone (each also counts toward the account's lockout). */
export const CHALLENGE_MAX_FAILURES = 5;

const PREFIXES: Record<MfaChallengesTable['purpose'], string> = { login: 'mfac_', enrolment: 'mfae_' };

/** A challenge or enrolment token: prefixed (so it is never mistaken for a JWT) and 256 random bits. */
function newToken(purpose: MfaChallengesTable['purpose']): string {
  return PREFIXES[purpose] + randomBytes(32).toString('base64url');
}

/** What is stored of a token: its SHA-256 (a random 256-bit token needs no slow hash). */
export function tokenDigest(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Whether an Authorization value (after `Bearer `) is an enrolment-only token. */
export function isEnrolmentToken(value: string): boolean {
  return value.startsWith(PREFIXES.enrolment);
}

/** Which second factor a code turned out to be. */
export type SecondFactorUsed = { kind: 'totp' } | { kind: 'recovery_code'; remaining: number };

/** Why a code was refused, for the audit trail. */
type Refusal = 'code_invalid' | 'code_replayed' | 'challenge_taken';

export interface MfaStatus {
  enrolled: boolean;
  pending: boolean;
  confirmed_at: string | null;
  recovery_codes_left: number;
}

export interface MfaServiceDeps {
  db: Kysely<GatewaySchema>;
  mfa: MfaRepository;
  audit: AuditRepository;
  lockout: LoginLockout<UsersTable, Client, GatewaySchema>;
  /** The issuer authenticator apps show beside the account (GATEWAY_MFA_ISSUER). */
  issuer: string;
  now: () => number;
}

/**
 * TOTP second factor of gateway accounts: enrolment (pending until a first code confirms it), ten
 * single-use recovery codes, removal, and the codes of a sign-in, each accepted once.
 */
export class MfaService {
  constructor(private readonly deps: MfaServiceDeps) {}

  private nowIso(): string {
    return new Date(this.deps.now()).toISOString();
  }

  async isEnrolled(userId: string): Promise<boolean> {
    return Boolean((await this.deps.mfa.findTotp(userId))?.confirmed_at);
  }

  async status(userId: string): Promise<MfaStatus> {
    const totp = await this.deps.mfa.findTotp(userId);
    const enrolled = Boolean(totp?.confirmed_at);
    return {
      enrolled,
      pending: totp !== undefined && !enrolled,
      confirmed_at: totp?.confirmed_at ?? null,
      recovery_codes_left: enrolled ? (await this.deps.mfa.recoveryDigests(userId)).length : 0,
    };
  }

  /** A new secret, pending until confirmed; 409 when an authenticator is already enrolled. */
  async start(user: UsersTable, client: Client): Promise<{ secret: string; otpauth_uri: string }> {
    const secret = newTotpSecret();
    if (!(await this.deps.mfa.savePending(user.id, secret, this.nowIso()))) throw new AppError('MFA_ALREADY_ENROLLED');
    await this.deps.audit.record({ action: 'auth.mfa_enrol_start', outcome: 'success', ...auditActor(user), ...client });
    return { secret, otpauth_uri: totpUri(secret, this.deps.issuer, user.no_pegawai) };
  }

  /**
   * Confirms the pending enrolment with a first code; returns the recovery codes (shown this once,
   * stored as digests). With an enrolment-only token, the token is used up.
   */
  async confirm(user: UsersTable, code: string, client: Client, enrolmentDigest?: string): Promise<string[]> {
    const totp = await this.deps.mfa.findTotp(user.id);
    if (!totp) throw new AppError('MFA_ENROLMENT_NOT_STARTED');
    if (totp.confirmed_at) throw new AppError('MFA_ALREADY_ENROLLED');
    const step = verifyTotp(totp.secret, code, this.deps.now(), totp.last_used_step);
    const at = this.nowIso();
    const codes = newRecoveryCodes();
    const confirmed =
      step !== undefined &&
      (await this.deps.db.transaction().execute(async (trx) => {
        if (!(await this.deps.mfa.useStep(user.id, step, trx, at))) return false;
        await this.deps.mfa.replaceRecoveryCodes(user.id, codes.map(recoveryCodeDigest), at, trx);
        if (enrolmentDigest !== undefined) await this.deps.mfa.consumeChallenge(enrolmentDigest, trx);
        await this.deps.audit.record({ action: 'auth.mfa_enrol', outcome: 'success', ...auditActor(user), ...client }, trx);
        return true;
      }));
    if (!confirmed) {
      await this.deps.audit.record({
        action: 'auth.mfa_enrol',
        outcome: 'failure',
        ...auditActor(user),
        ...client,
        details: { reason: 'code_invalid' },
      });
      throw new AppError('MFA_CODE_WRONG');
    }
    return codes;
  }

  /**
   * The person removes their own second factor with a current code or a recovery code. Wrong codes
   * count toward the account's lockout, as at sign-in: a stolen session cannot guess its way through.
   */
  async removeOwn(user: UsersTable, code: string, client: Client): Promise<void> {
    if (!(await this.isEnrolled(user.id))) throw new AppError('MFA_NOT_ENROLLED');
    await this.deps.lockout.assertNotLimited({ name: user.no_pegawai, client, action: 'auth.mfa_remove' });
    const outcome = await this.redeem(user.id, code);
    if ('refused' in outcome) {
      await this.deps.lockout.countFailure(user.no_pegawai, client);
      await this.deps.audit.record({
        action: 'auth.mfa_remove',
        outcome: 'failure',
        ...auditActor(user),
        targetType: 'user',
        targetId: user.id,
        ...client,
        details: { reason: outcome.refused },
      });
      throw new AppError('MFA_CODE_WRONG');
    }
    await this.deps.lockout.succeeded(user.no_pegawai);
    await this.removeAndAudit(user.id, auditActor(user), client, { by: 'self', with: outcome.used.kind });
  }

  /**
   * Ten new recovery codes for an enrolled user who proves a current TOTP code (not a recovery code:
   * the codes are what is being replaced); the old ones stop working in the same transaction. Wrong
   * codes count toward the account's lockout, as at removal.
   */
  async regenerateRecoveryCodes(user: UsersTable, code: string, client: Client): Promise<string[]> {
    const totp = await this.deps.mfa.findTotp(user.id);
    if (!totp?.confirmed_at) throw new AppError('MFA_NOT_ENROLLED');
    await this.deps.lockout.assertNotLimited({ name: user.no_pegawai, client, action: 'auth.mfa_recovery_codes' });
    const step = looksLikeRecoveryCode(code) ? undefined : verifyTotp(totp.secret, code, this.deps.now(), totp.last_used_step);
    const codes = newRecoveryCodes();
    const replaced =
      step !== undefined &&
      (await this.deps.db.transaction().execute(async (trx) => {
        if (!(await this.deps.mfa.useStep(user.id, step, trx))) return false;
        await this.deps.mfa.replaceRecoveryCodes(user.id, codes.map(recoveryCodeDigest), this.nowIso(), trx);
        await this.deps.audit.record(
          { action: 'auth.mfa_recovery_codes', outcome: 'success', ...auditActor(user), targetType: 'user', targetId: user.id, ...client },
          trx,
        );
        return true;
      }));
    if (!replaced) {
      await this.deps.lockout.countFailure(user.no_pegawai, client);
      await this.deps.audit.record({
        action: 'auth.mfa_recovery_codes',
        outcome: 'failure',
        ...auditActor(user),
        targetType: 'user',
        targetId: user.id,
        ...client,
        details: { reason: 'code_invalid' },
      });
      throw new AppError('MFA_CODE_WRONG');
    }
    await this.deps.lockout.succeeded(user.no_pegawai);
    return codes;
  }

  /** An administrator removes a user's second factor (a lost phone and no recovery codes). */
  async removeByAdministrator(target: UsersTable, actor: AuthContext, client: Client): Promise<void> {
    if ((await this.deps.mfa.findTotp(target.id)) === undefined) throw new AppError('MFA_NOT_ENROLLED');
    await this.removeAndAudit(target.id, auditActor(actor), client, { by: 'administrator' });
  }

  private async removeAndAudit(userId: string, actor: ReturnType<typeof auditActor>, client: Client, details: Record<string, unknown>) {
    await this.deps.db.transaction().execute(async (trx) => {
      await this.deps.mfa.removeAll(userId, trx);
      await this.deps.audit.record(
        { action: 'auth.mfa_remove', outcome: 'success', ...actor, targetType: 'user', targetId: userId, ...client, details },
        trx,
      );
    });
  }

  /** A new challenge (after a right password) or enrolment-only token for the user. */
  async newChallenge(userId: string, purpose: MfaChallengesTable['purpose']): Promise<{ token: string; expiresInSeconds: number }> {
    const token = newToken(purpose);
    const ttl = purpose === 'login' ? CHALLENGE_TTL_MS : ENROLMENT_TTL_MS;
    const now = this.deps.now();
    await this.deps.mfa.insertChallenge({
      digest: tokenDigest(token),
      user_id: userId,
      purpose,
      created_at: new Date(now).toISOString(),
      expires_at: new Date(now + ttl).toISOString(),
      failures: 0,
    });
    return { token, expiresInSeconds: ttl / 1000 };
  }

  /** The live challenge or enrolment token of that value, if any. */
  findChallenge(token: string, purpose: MfaChallengesTable['purpose']): Promise<MfaChallengesTable | undefined> {
    if (token.length > 200 || !token.startsWith(PREFIXES[purpose])) return Promise.resolve(undefined);
    return this.deps.mfa.findChallenge(tokenDigest(token), purpose, this.nowIso());
  }

  challengeFailed(digest: string): Promise<void> {
    return this.deps.mfa.challengeFailed(digest, CHALLENGE_MAX_FAILURES);
  }

  /**
   * Checks a code (TOTP, or a recovery code) of an enrolled user and uses it up, together with the
   * challenge when one is given, in one transaction: the code's step or the recovery code, and the
   * challenge, are each taken by a conditional write, so of two concurrent requests only one wins.
   */
  async redeem(userId: string, code: string, challengeDigest?: string): Promise<{ used: SecondFactorUsed } | { refused: Refusal }> {
    const totp = await this.deps.mfa.findTotp(userId);
    if (!totp?.confirmed_at) return { refused: 'code_invalid' };
    const now = this.deps.now();
    return this.deps.db
      .transaction()
      .execute(async (trx): Promise<{ used: SecondFactorUsed } | { refused: Refusal }> => {
        let used: SecondFactorUsed | undefined;
        if (looksLikeRecoveryCode(code)) {
          const digests = await this.deps.mfa.recoveryDigests(userId, trx);
          const index = matchRecoveryCode(code, digests);
          if (index < 0 || !(await this.deps.mfa.useRecoveryCode(userId, digests[index]!, trx))) return { refused: 'code_invalid' };
          used = { kind: 'recovery_code', remaining: digests.length - 1 };
        } else {
          const step = verifyTotp(totp.secret, code, now, totp.last_used_step);
          if (step === undefined || !(await this.deps.mfa.useStep(userId, step, trx))) {
            // A code that matches but is not newer than the last used step is a replay.
            const replayed = verifyTotp(totp.secret, code, now, null) !== undefined;
            return { refused: replayed ? 'code_replayed' : 'code_invalid' };
          }
          used = { kind: 'totp' };
        }
        if (challengeDigest !== undefined && !(await this.deps.mfa.consumeChallenge(challengeDigest, trx))) {
          // Another request took the challenge first: nothing of this one is kept.
          throw new ChallengeTaken();
        }
        return { used };
      })
      .catch((error: unknown) => {
        if (error instanceof ChallengeTaken) return { refused: 'challenge_taken' as const };
        throw error;
      });
  }
}

/** Rolls back a redemption whose challenge another request used. */
class ChallengeTaken extends Error {}
