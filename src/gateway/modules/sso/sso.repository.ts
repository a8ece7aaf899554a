import type { Kysely } from 'kysely';
import type { GatewaySchema } from '../../db/schema.js';

/** Provider identities linked to users, and the replay record of accepted ID tokens. */
export class SsoRepository {
  constructor(private readonly db: Kysely<GatewaySchema>) {}

  findIdentity(issuer: string, subject: string) {
    return this.db.selectFrom('sso_identities').selectAll().where('issuer', '=', issuer).where('subject', '=', subject).executeTakeFirst();
  }

  /** The identities of a user at one issuer (to tell a second person with the same e-mail apart). */
  identitiesOfUser(userId: string, issuer: string) {
    return this.db.selectFrom('sso_identities').selectAll().where('user_id', '=', userId).where('issuer', '=', issuer).execute();
  }

  linkIdentity(row: { issuer: string; subject: string; user_id: string; at: string }, db: Kysely<GatewaySchema> = this.db) {
    return db
      .insertInto('sso_identities')
      .values({ issuer: row.issuer, subject: row.subject, user_id: row.user_id, created_at: row.at, last_login_at: row.at })
      .execute();
  }

  /** Removes every provider identity of a user; returns what was removed. */
  unlinkAll(userId: string, db: Kysely<GatewaySchema> = this.db) {
    return db.deleteFrom('sso_identities').where('user_id', '=', userId).returning(['issuer', 'subject']).execute();
  }

  touchIdentity(issuer: string, subject: string, at: string) {
    return this.db
      .updateTable('sso_identities')
      .set({ last_login_at: at })
      .where('issuer', '=', issuer)
      .where('subject', '=', subject)
      .execute();
  }

  /**
   * Records an ID token as used. False when it was already recorded: the primary key makes this
   * the one atomic check, across every gateway instance on the database.
   */
  async markTokenUsed(tokenHash: string, expiresAt: string, nowIso: string): Promise<boolean> {
    await this.db.deleteFrom('sso_used_tokens').where('expires_at', '<', nowIso).execute();
    const result = await this.db
      .insertInto('sso_used_tokens')
      .values({ token_hash: tokenHash, expires_at: expiresAt })
      .onConflict((oc) => oc.column('token_hash').doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
  }
}
