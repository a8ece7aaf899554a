import { randomUUID } from 'node:crypto';
import type { JWTPayload } from 'jose';
import { CachingTokenVerifier, signToken, type TokenProfile } from '../../../shared/auth/jwt.js';
import type { SigningKeyRing } from '../../../shared/auth/signing-keys.js';
import type { SessionsRepository } from './sessions.repository.js';
import { wrapToken } from './token-wrapping.js';

/** What a gateway application token says about its holder (spec 2.3, 2.4). */
export interface SessionClaims {
  user_id: string;
  /** Session id: logout and password changes end the session and so every token of it. */
  sid: string;
  no_pegawai?: string;
  email?: string;
  user_groups?: string[];
  attributes?: Record<string, string>;
}

export type GatewayClaims = JWTPayload & SessionClaims & { sub: string };

/** The holder's claims of a token, to carry over into a refreshed one. */
export function sessionClaimsOf(claims: GatewayClaims): SessionClaims {
  const { user_id, sid, no_pegawai, email, user_groups, attributes } = claims;
  return { user_id, sid, no_pegawai, email, user_groups, attributes };
}

export interface AuthContext {
  readonly userId: string;
  readonly sessionId: string;
  readonly claims: GatewayClaims;
  /** The bare JWT, for forwarding upstream. */
  readonly jwt: string;
}

export interface IssuedToken {
  readonly jwt: string;
  /** The spec 2.3 wire form. */
  readonly wrapped: string;
  readonly expiresAt: Date;
}

/**
 * How often a used session's `last_used_at` is written: at most once a minute per session and
 * instance (and on refresh), so that proxied requests do not each cost a database write.
 */
export const LAST_USED_RESOLUTION_MS = 60_000;
const TOUCHED_LIMIT = 50_000;

const isGatewayClaims = (payload: JWTPayload): payload is GatewayClaims =>
  typeof payload.sid === 'string' && typeof payload.user_id === 'string' && payload.sub === payload.user_id;

/**
 * Issues and checks gateway tokens. A token is valid when its signature, issuer, audience, typ and
 * expiry hold and its session is neither revoked nor expired. Signature checks are cached per
 * token until it expires (they cost far more than the session look-up).
 */
export class GatewayTokens {
  private readonly profile: TokenProfile;
  private readonly verifier: CachingTokenVerifier<GatewayClaims>;

  /** The database's keys, read again on rotation (the newest signs). */
  private readonly keys: SigningKeyRing;
  private readonly sessions: SessionsRepository;
  private readonly now: () => number;
  private readonly ttlMs: number;

  constructor(deps: {
    keys: SigningKeyRing;
    config: { issuer: string; audience: string; ttlMs: number };
    sessions: SessionsRepository;
    now: () => number;
  }) {
    this.keys = deps.keys;
    this.sessions = deps.sessions;
    this.now = deps.now;
    this.ttlMs = deps.config.ttlMs;
    this.profile = { issuer: deps.config.issuer, audience: deps.config.audience, type: 'at+jwt' };
    this.verifier = new CachingTokenVerifier(deps.keys, this.profile, isGatewayClaims);
  }

  get publicJwks() {
    return this.keys.current.publicJwks;
  }

  get ttlSeconds(): number {
    return Math.floor(this.ttlMs / 1000);
  }

  async issue(claims: SessionClaims): Promise<IssuedToken> {
    const nowMs = this.now();
    const jwt = await signToken(
      this.keys.current,
      this.profile,
      { ...claims, sub: claims.user_id, jti: randomUUID() },
      this.ttlSeconds,
      nowMs,
    );
    return { jwt, wrapped: wrapToken(jwt), expiresAt: new Date(Math.floor(nowMs / 1000) * 1000 + this.ttlSeconds * 1000) };
  }

  /** The session's expiry for a token issued now. */
  sessionExpiry(): string {
    return new Date(this.now() + this.ttlMs).toISOString();
  }

  private isoAt = { ms: Number.NaN, iso: '' };

  /** The clock as an ISO string, formatted once per millisecond: every proxied request needs it. */
  private nowIso(): string {
    const ms = this.now();
    if (ms !== this.isoAt.ms) this.isoAt = { ms, iso: new Date(ms).toISOString() };
    return this.isoAt.iso;
  }

  /** When this instance last wrote (or saw written) each session's `last_used_at`, epoch ms. */
  private readonly lastUseWritten = new Map<string, number>();

  /** Writes `last_used_at` when it is a minute old; the write is not waited for and its failure is harmless. */
  private noteUse(sessionId: string, storedLastUse: string | null): void {
    const now = this.now();
    let written = this.lastUseWritten.get(sessionId);
    if (written === undefined && storedLastUse !== null) written = Date.parse(storedLastUse);
    if (written !== undefined && now - written < LAST_USED_RESOLUTION_MS) {
      if (!this.lastUseWritten.has(sessionId)) this.remember(sessionId, written);
      return;
    }
    this.remember(sessionId, now);
    this.sessions.touch(sessionId, new Date(now).toISOString()).catch(() => undefined);
  }

  private remember(sessionId: string, at: number): void {
    if (this.lastUseWritten.size >= TOUCHED_LIMIT) this.lastUseWritten.clear();
    this.lastUseWritten.set(sessionId, at);
  }

  async authenticate(jwt: string): Promise<AuthContext | undefined> {
    const claims = await this.verifier.verify(jwt, this.now());
    if (!claims) return undefined;
    return this.live(claims, await this.sessions.find(claims.sid), jwt);
  }

  /**
   * The same check answered from the caches alone, without waiting: the token verified before and
   * its session cached and trusted now (so a revoked or ended session, which the session cache
   * drops at once, is never answered here). Undefined when either is not cached or the check
   * fails: then `authenticate` decides, as it always did.
   */
  authenticateCached(jwt: string): AuthContext | undefined {
    const claims = this.verifier.cached(jwt, this.now());
    if (!claims) return undefined;
    const session = this.sessions.peek(claims.sid);
    return session === undefined ? undefined : this.live(claims, session, jwt);
  }

  private live(claims: GatewayClaims, session: Awaited<ReturnType<SessionsRepository['find']>>, jwt: string): AuthContext | undefined {
    if (!session || session.revoked_at !== null || session.expires_at <= this.nowIso() || session.user_id !== claims.user_id)
      return undefined;
    this.noteUse(session.id, session.last_used_at);
    return { userId: claims.user_id, sessionId: claims.sid, claims, jwt };
  }
}
