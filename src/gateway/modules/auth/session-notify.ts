import { sql, type Kysely } from 'kysely';
import type { FastifyBaseLogger } from 'fastify';
import { Gauge, type Registry } from 'prom-client';
import { SIGNING_KEYS_CHANNEL, type SigningKeyRing } from '../../../shared/auth/signing-keys.js';
import { PostgresListener, postgresListenerClient, type ListenerClient } from '../../../shared/db/postgres-listener.js';
import { UNANNOUNCED_TRUST_MS, type CachingSessionsRepository } from './session-cache.js';

/**
 * PostgreSQL LISTEN/NOTIFY channel on which instances sharing a database announce ended sessions,
 * so each drops them from its session cache at once instead of after one cache TTL.
 */
export const SESSION_CHANNEL = 'gerbang_sessions_ended';

/** The gateway's signing-key table: the payload of a rotation's announcement that concerns the gateway. */
const KEYS_TABLE = 'gateway_signing_keys';

/** The listening connection's `application_name`, to find it in `pg_stat_activity`. */
export const LISTENER_APPLICATION_NAME = 'gerbang-gateway-listener';

/** Ids per notification: 100 UUIDs stay well under PostgreSQL's 8000-byte payload limit. */
const PER_NOTIFICATION = 100;

/** The log lines of the listener's loss and return (docs/configuration.md: the cluster test waits on them). */
export const LISTENER_LOST = `session notification listener lost: cached sessions trusted for at most ${UNANNOUNCED_TRUST_MS / 1000} s until it reconnects`;
export const LISTENER_RESTORED = 'session notification listener reconnected: session cache emptied, signing keys read again';

/**
 * Announces ended sessions. Sent on `db`, so inside a transaction it is delivered only when (and
 * if) that transaction commits: exactly when the sessions really end.
 */
export async function announceEndedSessions(db: Kysely<any>, ids: readonly string[]): Promise<void> {
  for (let i = 0; i < ids.length; i += PER_NOTIFICATION) {
    await sql`select pg_notify(${SESSION_CHANNEL}, ${JSON.stringify(ids.slice(i, i + PER_NOTIFICATION))})`.execute(db);
  }
}

/** The ids of a SESSION_CHANNEL payload; nothing for one that is not ours. */
function endedIds(payload: string): string[] {
  try {
    const ids: unknown = JSON.parse(payload);
    return Array.isArray(ids) ? ids.filter((id): id is string => typeof id === 'string') : [];
  } catch {
    return [];
  }
}

/**
 * What this gateway hears from the others on its own PostgreSQL connection: ended sessions (dropped
 * from the session cache) and signing-key rotations (the keys read again). When the connection is
 * lost it reconnects with back-off (PostgresListener); meanwhile the session cache trusts a session
 * for at most a second, and once back it starts empty and the keys are read again, since whatever
 * was announced in between never arrived. Says so in a warning and an info line, and in
 * `gateway_session_cache_degraded`.
 */
export async function listenToOtherInstances(deps: {
  url: string;
  sessions: CachingSessionsRepository;
  keys: SigningKeyRing;
  log: FastifyBaseLogger;
  openClient?: () => ListenerClient;
}): Promise<{ close(): Promise<void> }> {
  const { sessions, keys, log } = deps;
  const readKeys = () => keys.reload().catch((error: unknown) => log.warn({ err: error }, 'signing keys could not be read again'));
  const listener = new PostgresListener({
    openClient: deps.openClient ?? (() => postgresListenerClient(deps.url, LISTENER_APPLICATION_NAME)),
    channels: new Map([
      [SESSION_CHANNEL, (payload: string) => sessions.endedElsewhere(endedIds(payload))],
      [SIGNING_KEYS_CHANNEL, (payload: string) => void (payload === KEYS_TABLE && readKeys())],
    ]),
    onLost: (error) => {
      sessions.announcementsLost();
      log.warn({ err: error }, LISTENER_LOST);
    },
    onRestored: ({ downMs, attempts }) => {
      sessions.announcementsRestored();
      void readKeys();
      log.info({ downMs, attempts }, LISTENER_RESTORED);
    },
    onAttemptFailed: (error, attempt) => log.debug({ err: error, attempt }, 'session notification listener: reconnection failed'),
  });
  await listener.start();
  return { close: () => listener.close() };
}

/**
 * `gateway_session_cache_degraded`: 1 while other instances' logouts cannot be heard (the listener
 * is reconnecting) and cached sessions are trusted for a second only. 0 otherwise, also where
 * there is no listener (SQLite). Across workers the highest counts.
 */
export function sessionCacheDegradedGauge(registry: Registry, sessions: CachingSessionsRepository): void {
  new Gauge({
    name: 'gateway_session_cache_degraded',
    help: "1 while this gateway cannot hear other instances' logouts (its PostgreSQL LISTEN connection is reconnecting) and trusts cached sessions for at most 1 s",
    registers: [registry],
    aggregator: 'max',
    collect() {
      this.set(sessions.degraded ? 1 : 0);
    },
  });
}
