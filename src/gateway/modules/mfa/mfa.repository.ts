import type { Kysely } from 'kysely';
import type { GatewaySchema, MfaChallengesTable, UserTotpTable } from '../../db/schema.js';

/** The gateway's second-factor tables: authenticators, recovery codes and challenges. */
export class MfaRepository {
  constructor(private readonly db: Kysely<GatewaySchema>) {}

  findTotp(userId: string, db: Kysely<GatewaySchema> = this.db): Promise<UserTotpTable | undefined> {
    return db.selectFrom('user_totp').selectAll().where('user_id', '=', userId).executeTakeFirst();
  }

  /** A new pending enrolment, replacing any earlier pending one (never a confirmed one). */
  async savePending(userId: string, secret: string, at: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const existing = await this.findTotp(userId, trx);
      if (existing?.confirmed_at) return false;
      await trx.deleteFrom('user_totp').where('user_id', '=', userId).execute();
      await trx
        .insertInto('user_totp')
        .values({ user_id: userId, secret, created_at: at, confirmed_at: null, last_used_step: null })
        .execute();
      return true;
    });
  }

  /**
   * Records `step` as the last used one, unless that step (or a later one) was used already: the
   * condition is the atomic part of replay refusal, so of two requests with one code only one wins.
   */
  async useStep(userId: string, step: number, db: Kysely<GatewaySchema>, confirmAt?: string): Promise<boolean> {
    const result = await db
      .updateTable('user_totp')
      .set({ last_used_step: step, ...(confirmAt ? { confirmed_at: confirmAt } : {}) })
      .where('user_id', '=', userId)
      .where((eb) => eb.or([eb('last_used_step', 'is', null), eb('last_used_step', '<', step)]))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  recoveryDigests(userId: string, db: Kysely<GatewaySchema> = this.db): Promise<string[]> {
    return db
      .selectFrom('user_recovery_codes')
      .select('digest')
      .where('user_id', '=', userId)
      .orderBy('digest')
      .execute()
      .then((rows) => rows.map((row) => row.digest));
  }

  /** Deletes one recovery code; false when another request used it first. */
  async useRecoveryCode(userId: string, digest: string, db: Kysely<GatewaySchema>): Promise<boolean> {
    const result = await db.deleteFrom('user_recovery_codes').where('user_id', '=', userId).where('digest', '=', digest).executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }

  async replaceRecoveryCodes(userId: string, digests: readonly string[], at: string, db: Kysely<GatewaySchema>): Promise<void> {
    await db.deleteFrom('user_recovery_codes').where('user_id', '=', userId).execute();
    await db
      .insertInto('user_recovery_codes')
      .values(digests.map((digest) => ({ user_id: userId, digest, created_at: at })))
      .execute();
  }

  /** Removes the authenticator, its recovery codes and open challenges; false when there was nothing. */
  async removeAll(userId: string, db: Kysely<GatewaySchema>): Promise<boolean> {
    const removed = await db.deleteFrom('user_totp').where('user_id', '=', userId).executeTakeFirst();
    await db.deleteFrom('user_recovery_codes').where('user_id', '=', userId).execute();
    await db.deleteFrom('mfa_challenges').where('user_id', '=', userId).execute();
    return Number(removed.numDeletedRows) > 0;
  }

  async insertChallenge(challenge: MfaChallengesTable): Promise<void> {
    await this.db.insertInto('mfa_challenges').values(challenge).execute();
  }

  findChallenge(digest: string, purpose: MfaChallengesTable['purpose'], nowIso: string): Promise<MfaChallengesTable | undefined> {
    return this.db
      .selectFrom('mfa_challenges')
      .selectAll()
      .where('digest', '=', digest)
      .where('purpose', '=', purpose)
      .where('expires_at', '>', nowIso)
      .executeTakeFirst();
  }

  /** Takes the challenge; false when it was taken already (single use across instances). */
  async consumeChallenge(digest: string, db: Kysely<GatewaySchema> = this.db): Promise<boolean> {
    const result = await db.deleteFrom('mfa_challenges').where('digest', '=', digest).executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }

  /** Counts a wrong code against the challenge; at `max` the challenge is gone. */
  async challengeFailed(digest: string, max: number): Promise<void> {
    await this.db
      .updateTable('mfa_challenges')
      .set((eb) => ({ failures: eb('failures', '+', 1) }))
      .where('digest', '=', digest)
      .execute();
    await this.db.deleteFrom('mfa_challenges').where('digest', '=', digest).where('failures', '>=', max).execute();
  }

  /** Housekeeping. */
  deleteExpiredChallenges(before: string) {
    return this.db.deleteFrom('mfa_challenges').where('expires_at', '<=', before).execute();
  }
}
