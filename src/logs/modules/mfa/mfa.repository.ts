import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { LogsMfaChallengesTable, LogsSchema } from '../../db/schema.js';

export const challengeHash = (token: string): string => createHash('sha256').update(token).digest('hex');

/**
 * The second factor's rows: TOTP secrets, recovery-code digests, challenges. Every "use once" is
 * one conditional UPDATE or DELETE, so of two concurrent uses (on any instances) exactly one wins.
 */
export class MfaRepository {
  private prunedAt = 0;

  constructor(private readonly db: Kysely<LogsSchema>) {}

  /** A new challenge of the purpose, living `ttlMs` from `nowMs`; returns the token (only its hash is stored). */
  async newChallenge(
    purpose: LogsMfaChallengesTable['purpose'],
    userId: string | null,
    ttlMs: number,
    nowMs: number,
    data: string | null = null,
  ) {
    const token = randomBytes(32).toString('base64url');
    // Ended challenges go now and then, so the table holds only recent ones.
    if (nowMs - this.prunedAt >= 60_000) {
      this.prunedAt = nowMs;
      await this.pruneChallenges(new Date(nowMs - 60 * 60_000).toISOString());
    }
    await this.addChallenge({
      token_hash: challengeHash(token),
      purpose,
      user_id: userId,
      data,
      created_at: new Date(nowMs).toISOString(),
      expires_at: new Date(nowMs + ttlMs).toISOString(),
    });
    return token;
  }

  totpOf(userId: string) {
    return this.db.selectFrom('logs_mfa_totp').selectAll().where('user_id', '=', userId).executeTakeFirst();
  }

  /** Whether each user has a confirmed TOTP secret. */
  async confirmedUsers(userIds: readonly string[]): Promise<Set<string>> {
    if (userIds.length === 0) return new Set();
    const rows = await this.db
      .selectFrom('logs_mfa_totp')
      .select('user_id')
      .where('user_id', 'in', userIds)
      .where('confirmed_at', 'is not', null)
      .execute();
    return new Set(rows.map((row) => row.user_id));
  }

  /** A new unconfirmed secret, replacing an earlier unconfirmed one; false when one is confirmed. */
  async startTotp(userId: string, secret: string, at: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('logs_mfa_totp').where('user_id', '=', userId).where('confirmed_at', 'is', null).execute();
      const existing = await trx.selectFrom('logs_mfa_totp').select('user_id').where('user_id', '=', userId).executeTakeFirst();
      if (existing) return false;
      await trx
        .insertInto('logs_mfa_totp')
        .values({ user_id: userId, secret, created_at: at, confirmed_at: null, last_used_step: null })
        .execute();
      return true;
    });
  }

  /** Confirms the pending secret with the step of its first code and stores the recovery codes' digests; false if none was pending. */
  async confirmTotp(userId: string, step: number, digests: readonly string[], at: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const result = await trx
        .updateTable('logs_mfa_totp')
        .set({ confirmed_at: at, last_used_step: step })
        .where('user_id', '=', userId)
        .where('confirmed_at', 'is', null)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) !== 1) return false;
      await trx.deleteFrom('logs_mfa_recovery_codes').where('user_id', '=', userId).execute();
      await trx
        .insertInto('logs_mfa_recovery_codes')
        .values(digests.map((digest) => ({ user_id: userId, digest, created_at: at })))
        .execute();
      return true;
    });
  }

  /** Records a code's step as used unless that step (or a later one) already was: true for the one use that wins. */
  async useStep(userId: string, step: number): Promise<boolean> {
    const result = await this.db
      .updateTable('logs_mfa_totp')
      .set({ last_used_step: step })
      .where('user_id', '=', userId)
      .where('confirmed_at', 'is not', null)
      .where((eb) => eb.or([eb('last_used_step', 'is', null), eb('last_used_step', '<', step)]))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /**
   * Spends a TOTP step (as useStep) and, in the same transaction, replaces the recovery codes: the
   * old codes stop working only when the new ones are stored. false when the step was used already.
   */
  async replaceRecoveryCodes(userId: string, step: number, digests: readonly string[], at: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const result = await trx
        .updateTable('logs_mfa_totp')
        .set({ last_used_step: step })
        .where('user_id', '=', userId)
        .where('confirmed_at', 'is not', null)
        .where((eb) => eb.or([eb('last_used_step', 'is', null), eb('last_used_step', '<', step)]))
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) !== 1) return false;
      await trx.deleteFrom('logs_mfa_recovery_codes').where('user_id', '=', userId).execute();
      await trx
        .insertInto('logs_mfa_recovery_codes')
        .values(digests.map((digest) => ({ user_id: userId, digest, created_at: at })))
        .execute();
      return true;
    });
  }

  /** Removes the second factor (secret and recovery codes); false when there was none. */
  async removeTotp(userId: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('logs_mfa_recovery_codes').where('user_id', '=', userId).execute();
      const result = await trx.deleteFrom('logs_mfa_totp').where('user_id', '=', userId).executeTakeFirst();
      return Number(result.numDeletedRows) === 1;
    });
  }

  async recoveryDigests(userId: string): Promise<string[]> {
    const rows = await this.db.selectFrom('logs_mfa_recovery_codes').select('digest').where('user_id', '=', userId).execute();
    return rows.map((row) => row.digest);
  }

  /** Spends a recovery code: true for the one use that wins. */
  async useRecoveryCode(userId: string, digest: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('logs_mfa_recovery_codes')
      .where('user_id', '=', userId)
      .where('digest', '=', digest)
      .executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }

  async addChallenge(row: Omit<LogsMfaChallengesTable, 'used_at' | 'failures'>): Promise<void> {
    await this.db
      .insertInto('logs_mfa_challenges')
      .values({ ...row, used_at: null, failures: 0 })
      .execute();
  }

  /** A live challenge of the purpose (unused, unexpired). */
  liveChallenge(tokenHash: string, purpose: LogsMfaChallengesTable['purpose'], nowIso: string) {
    return this.db
      .selectFrom('logs_mfa_challenges')
      .selectAll()
      .where('token_hash', '=', tokenHash)
      .where('purpose', '=', purpose)
      .where('used_at', 'is', null)
      .where('expires_at', '>', nowIso)
      .executeTakeFirst();
  }

  /** Spends a challenge: true for the one use that wins. */
  async useChallenge(tokenHash: string, nowIso: string): Promise<boolean> {
    const result = await this.db
      .updateTable('logs_mfa_challenges')
      .set({ used_at: nowIso })
      .where('token_hash', '=', tokenHash)
      .where('used_at', 'is', null)
      .where('expires_at', '>', nowIso)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Counts a wrong code against a challenge; at the limit the challenge is spent. */
  async challengeFailed(tokenHash: string, limit: number, nowIso: string): Promise<void> {
    await this.db
      .updateTable('logs_mfa_challenges')
      .set((eb) => ({ failures: eb('failures', '+', 1) }))
      .where('token_hash', '=', tokenHash)
      .execute();
    await this.db
      .updateTable('logs_mfa_challenges')
      .set({ used_at: nowIso })
      .where('token_hash', '=', tokenHash)
      .where('failures', '>=', limit)
      .where('used_at', 'is', null)
      .execute();
  }

  /** Forgets challenges that ended before `beforeIso` (run with the retention sweep). */
  async pruneChallenges(beforeIso: string): Promise<void> {
    await this.db.deleteFrom('logs_mfa_challenges').where('expires_at', '<', beforeIso).execute();
  }
}
