import type { Kysely } from 'kysely';
import type { GatewaySchema, SessionsTable } from '../../db/schema.js';

export class SessionsRepository {
  constructor(private readonly db: Kysely<GatewaySchema>) {}

  create(session: SessionsTable, db: Kysely<GatewaySchema> = this.db) {
    return db.insertInto('sessions').values(session).execute();
  }

  /**
   * A session known without asking the database (a cache's, still trusted), or undefined: then
   * `find` must ask. This store keeps nothing.
   */
  peek(_id: string): Awaited<ReturnType<SessionsRepository['find']>> {
    return undefined;
  }

  find(id: string) {
    return this.db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** A refresh: the session lives on, and was used now. */
  extend(id: string, expiresAt: string, usedAt: string) {
    return this.db
      .updateTable('sessions')
      .set({ expires_at: expiresAt, last_used_at: usedAt })
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .execute();
  }

  /** Records use of a live session (GatewayTokens writes it at most once a minute per session). */
  touch(id: string, at: string) {
    return this.db.updateTable('sessions').set({ last_used_at: at }).where('id', '=', id).where('revoked_at', 'is', null).execute();
  }

  /** A user's sessions neither ended nor expired, newest first. */
  listLive(userId: string, nowIso: string) {
    return this.db
      .selectFrom('sessions')
      .selectAll()
      .where('user_id', '=', userId)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', nowIso)
      .orderBy('created_at', 'desc')
      .orderBy('id')
      .execute();
  }

  revoke(id: string, at: string) {
    return this.db.updateTable('sessions').set({ revoked_at: at }).where('id', '=', id).where('revoked_at', 'is', null).execute();
  }

  /** Ends every session of a user (password change or reset, deletion), or every one but `exceptId` ("sign out other devices"). */
  async revokeAllOfUser(userId: string, at: string, db: Kysely<GatewaySchema> = this.db, exceptId?: string): Promise<string[]> {
    const rows = await db
      .updateTable('sessions')
      .set({ revoked_at: at })
      .where('user_id', '=', userId)
      .where('revoked_at', 'is', null)
      .$if(exceptId !== undefined, (query) => query.where('id', '!=', exceptId!))
      .returning('id')
      .execute();
    return rows.map((row) => row.id);
  }

  /** Housekeeping: sessions past their expiry are of no further use. */
  deleteExpired(before: string) {
    return this.db.deleteFrom('sessions').where('expires_at', '<', before).execute();
  }
}
