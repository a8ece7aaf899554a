import { EventEmitter } from 'node:events';
import type { Kysely } from 'kysely';
import type { GatewaySchema } from '../../db/schema.js';
import { SessionsRepository } from './sessions.repository.js';

type Session = NonNullable<Awaited<ReturnType<SessionsRepository['find']>>>;

/**
 * Tells other instances or workers that sessions ended. `db` is the connection (or transaction)
 * that ended them, for announcements that should go out only when it commits.
 */
export type SessionAnnouncer = (db: Kysely<GatewaySchema>, ids: readonly string[]) => Promise<void> | void;

const LIMIT = 50_000;

/** How long a cached session is trusted while other instances' announcements cannot be heard. */
export const UNANNOUNCED_TRUST_MS = 1_000;

/**
 * SessionsRepository with a short-lived cache of `find`, because every proxied request checks its
 * session and the look-up was the largest cost of the token check (docs/proxy.md, "Performance").
 *
 * Correctness: on this instance, revoking or extending a session drops it from the cache and, for
 * one TTL, stops it being cached again (so a read racing the revoking transaction's commit cannot
 * put the old row back). The ended ids are also announced (`announcers`: to other instances on
 * PostgreSQL by LISTEN/NOTIFY, delivered at commit; to the other workers of this gateway through
 * their primary), and the receivers drop them as they arrive (`endedElsewhere`); without such a
 * channel (instances sharing a SQLite file) other instances see a revocation within the TTL
 * (GATEWAY_SESSION_CACHE_TTL, default 2 s; 0 turns the cache off). While a channel that should be
 * there is lost (`announcementsLost`: the LISTEN connection is reconnecting), a cached session is
 * trusted for at most UNANNOUNCED_TRUST_MS; once it is back (`announcementsRestored`) the cache
 * starts empty, since what was announced meanwhile never arrived.
 */
export class CachingSessionsRepository extends SessionsRepository {
  private readonly cache = new Map<string, { session: Session | undefined; readAt: number; until: number }>();
  private readonly bypass = new Map<string, number>();
  /** Emits 'ended-elsewhere' (ids) after dropping sessions another instance announced. */
  readonly events = new EventEmitter();

  private readonly database: Kysely<GatewaySchema>;
  /** How long a looked-up session is trusted without asking the database; 0 = always ask. */
  private readonly ttlMs: number;
  private readonly clock: () => number;
  /** Who is told of sessions this instance ended (the other workers, the other instances). */
  private readonly announcers: readonly SessionAnnouncer[];
  /** Other instances' announcements cannot be heard now: cached sessions are trusted for UNANNOUNCED_TRUST_MS. */
  private unannounced = false;
  /** Moves when the cache is emptied, so that a look-up under way then does not put back what it read before. */
  private generation = 0;

  constructor(deps: { db: Kysely<GatewaySchema>; ttlMs: number; now: () => number; announcers: readonly SessionAnnouncer[] }) {
    super(deps.db);
    this.database = deps.db;
    this.ttlMs = deps.ttlMs;
    this.clock = deps.now;
    this.announcers = deps.announcers;
  }

  /** Sessions another instance ended. */
  endedElsewhere(ids: string[]): void {
    this.forget(ids);
    this.events.emit('ended-elsewhere', ids);
  }

  /** Other instances' announcements cannot be heard until announcementsRestored. */
  announcementsLost(): void {
    this.unannounced = true;
  }

  /** Announcements are heard again; those sent meanwhile are lost, so nothing read before is kept. */
  announcementsRestored(): void {
    this.unannounced = false;
    this.cache.clear();
    this.generation += 1;
  }

  /** True while cached sessions are trusted for UNANNOUNCED_TRUST_MS only. */
  get degraded(): boolean {
    return this.unannounced;
  }

  private async announced(ids: readonly string[], db: Kysely<GatewaySchema> = this.database): Promise<void> {
    if (ids.length > 0) for (const announce of this.announcers) await announce(db, ids);
  }

  /** True while a cached entry may be answered without asking the database. */
  private trusted(cached: { readAt: number; until: number }, now: number): boolean {
    return cached.until > now && (!this.unannounced || cached.readAt + UNANNOUNCED_TRUST_MS > now);
  }

  /** The cached session `find` would answer now without a look-up (the token check's synchronous path). */
  override peek(id: string): Session | undefined {
    if (this.ttlMs <= 0) return undefined;
    const cached = this.cache.get(id);
    return cached !== undefined && this.trusted(cached, this.clock()) ? cached.session : undefined;
  }

  override async find(id: string) {
    if (this.ttlMs <= 0) return super.find(id);
    const now = this.clock();
    const cached = this.cache.get(id);
    if (cached && this.trusted(cached, now)) return cached.session;
    const generation = this.generation;
    const session = await super.find(id);
    if (generation !== this.generation) return session;
    const blockedUntil = this.bypass.get(id);
    if (blockedUntil !== undefined && blockedUntil > now) return session;
    if (blockedUntil !== undefined) this.bypass.delete(id);
    if (this.cache.size >= LIMIT) this.cache.clear();
    this.cache.set(id, { session, readAt: now, until: now + this.ttlMs });
    return session;
  }

  private forget(ids: readonly string[]): void {
    const until = this.clock() + this.ttlMs;
    for (const id of ids) {
      this.cache.delete(id);
      this.bypass.set(id, until);
    }
    if (this.bypass.size > LIMIT) {
      const now = this.clock();
      for (const [id, blockedUntil] of this.bypass) if (blockedUntil <= now) this.bypass.delete(id);
    }
  }

  override async extend(id: string, expiresAt: string, usedAt: string) {
    this.forget([id]);
    try {
      return await super.extend(id, expiresAt, usedAt);
    } finally {
      this.forget([id]);
    }
  }

  override async revoke(id: string, at: string) {
    this.forget([id]);
    try {
      const result = await super.revoke(id, at);
      await this.announced([id]);
      return result;
    } finally {
      this.forget([id]);
    }
  }

  override async revokeAllOfUser(userId: string, at: string, db?: Kysely<GatewaySchema>, exceptId?: string): Promise<string[]> {
    // The ids are known only from the update; cached sessions of the user are dropped first.
    const before = [...this.cache].filter(([id, entry]) => entry.session?.user_id === userId && id !== exceptId).map(([id]) => id);
    this.forget(before);
    const ids = await super.revokeAllOfUser(userId, at, db, exceptId);
    this.forget(ids);
    await this.announced(ids, db);
    return ids;
  }
}
