import pg from 'pg';
import { sql, type Kysely } from 'kysely';
import type { FastifyBaseLogger } from 'fastify';

/**
 * PostgreSQL LISTEN/NOTIFY channel on which instances sharing a database announce ended sessions,
 * so each drops them from its session cache at once instead of after one cache TTL.
 */
export const SESSION_CHANNEL = 'gerbang_sessions_ended';

/** Ids per notification: 100 UUIDs stay well under PostgreSQL's 8000-byte payload limit. */
const PER_NOTIFICATION = 100;

/**
 * Announces ended sessions. Sent on `db`, so inside a transaction it is delivered only when (and
 * if) that transaction commits: exactly when the sessions really end.
 */
export async function announceEndedSessions(db: Kysely<any>, ids: readonly string[]): Promise<void> {
  for (let i = 0; i < ids.length; i += PER_NOTIFICATION) {
    await sql`select pg_notify(${SESSION_CHANNEL}, ${JSON.stringify(ids.slice(i, i + PER_NOTIFICATION))})`.execute(db);
  }
}

/**
 * Listens on its own connection and hands the announced ids to `onEnded`. If the connection
 * fails, the cache TTL remains the bound (logged as a warning); no reconnection loop here.
 */
export async function listenForEndedSessions(
  url: string,
  onEnded: (ids: string[]) => void,
  log: FastifyBaseLogger,
): Promise<{ close(): Promise<void> }> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', (error) =>
    log.warn(
      { err: error },
      "session notification listener failed; other instances' logouts now reach this one within the session cache TTL",
    ),
  );
  client.on('notification', (message) => {
    if (message.channel !== SESSION_CHANNEL || !message.payload) return;
    try {
      const ids: unknown = JSON.parse(message.payload);
      if (Array.isArray(ids)) onEnded(ids.filter((id): id is string => typeof id === 'string'));
    } catch {
      // not ours
    }
  });
  await client.connect();
  await client.query(`LISTEN ${SESSION_CHANNEL}`);
  return { close: () => client.end().catch(() => {}) };
}
