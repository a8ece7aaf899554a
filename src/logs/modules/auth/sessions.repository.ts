import type { Kysely } from 'kysely';
import type { LogsSchema, LogsSessionsTable } from '../../db/schema.js';

/** Login sessions and the refresh tokens of each (stored as SHA-256 hashes only). */
export class LogsSessionsRepository {
  constructor(private readonly db: Kysely<LogsSchema>) {}

  create(session: LogsSessionsTable, db: Kysely<LogsSchema> = this.db) {
    return db.insertInto('logs_sessions').values(session).execute();
  }

  find(id: string) {
    return this.db.selectFrom('logs_sessions').selectAll().where('id', '=', id).executeTakeFirst();
  }

  revoke(id: string, at: string, db: Kysely<LogsSchema> = this.db) {
    return db.updateTable('logs_sessions').set({ revoked_at: at }).where('id', '=', id).where('revoked_at', 'is', null).execute();
  }

  /** A user's live sessions (not ended, not expired), newest first. */
  listLive(userId: string, nowIso: string) {
    return this.db
      .selectFrom('logs_sessions')
      .selectAll()
      .where('user_id', '=', userId)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', nowIso)
      .orderBy('created_at', 'desc')
      .orderBy('id')
      .execute();
  }

  /** Ends one live session of the user; false when it is not theirs or already ended. */
  async revokeOfUser(userId: string, id: string, at: string): Promise<boolean> {
    const result = await this.db
      .updateTable('logs_sessions')
      .set({ revoked_at: at })
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Ends every live session of the user but one (undefined: all); how many ended. */
  async revokeOthers(userId: string, keep: string | undefined, at: string): Promise<number> {
    let query = this.db.updateTable('logs_sessions').set({ revoked_at: at }).where('user_id', '=', userId).where('revoked_at', 'is', null);
    if (keep !== undefined) query = query.where('id', '!=', keep);
    return Number((await query.executeTakeFirst()).numUpdatedRows);
  }

  /** Records a use unless one was recorded since `notBefore`: at most one write a minute per session, from any instance. */
  async touch(id: string, at: string, notBefore: string): Promise<void> {
    await this.db
      .updateTable('logs_sessions')
      .set({ last_used_at: at })
      .where('id', '=', id)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', notBefore)]))
      .execute();
  }

  /** Ends every session of a user (password change, deletion). */
  revokeAllOfUser(userId: string, at: string, db: Kysely<LogsSchema> = this.db) {
    return db.updateTable('logs_sessions').set({ revoked_at: at }).where('user_id', '=', userId).where('revoked_at', 'is', null).execute();
  }

  addRefreshToken(
    row: { token_hash: string; session_id: string; created_at: string; expires_at: string },
    db: Kysely<LogsSchema> = this.db,
  ) {
    return db
      .insertInto('logs_refresh_tokens')
      .values({ ...row, used_at: null })
      .execute();
  }

  findRefreshToken(tokenHash: string) {
    return this.db
      .selectFrom('logs_refresh_tokens')
      .innerJoin('logs_sessions', 'logs_sessions.id', 'logs_refresh_tokens.session_id')
      .select([
        'logs_refresh_tokens.token_hash',
        'logs_refresh_tokens.session_id',
        'logs_refresh_tokens.expires_at',
        'logs_refresh_tokens.used_at',
        'logs_sessions.user_id',
        'logs_sessions.revoked_at',
        'logs_sessions.expires_at as session_expires_at',
      ])
      .where('logs_refresh_tokens.token_hash', '=', tokenHash)
      .executeTakeFirst();
  }

  /** Marks a refresh token used; false when it already was (a concurrent or replayed use). */
  async markUsed(tokenHash: string, at: string, db: Kysely<LogsSchema> = this.db): Promise<boolean> {
    const result = await db
      .updateTable('logs_refresh_tokens')
      .set({ used_at: at })
      .where('token_hash', '=', tokenHash)
      .where('used_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }
}
