import { randomUUID } from 'node:crypto';
import type { JWTPayload } from 'jose';
import { signToken, verifyToken, type TokenProfile } from '../../../shared/auth/jwt.js';
import type { SigningKey } from '../../../shared/auth/signing-keys.js';

/** What a logs access token says: who, which session, which home tenant. Permissions are read fresh per request. */
export interface AccessClaims {
  sub: string;
  sid: string;
  tid: string;
  username: string;
}

const CACHE_LIMIT = 10_000;

/**
 * Access tokens of the logs service: short-lived ES256 JWTs (spec 5.3, 300 s). Signature checks
 * are cached per token until it expires; the session check is done by the caller per request.
 */
export class LogsTokens {
  private readonly profile: TokenProfile;
  private readonly verified = new Map<string, AccessClaims & JWTPayload>();

  constructor(
    private readonly key: SigningKey,
    config: { issuer: string; audience: string; accessTtlMs: number },
    private readonly now: () => number,
  ) {
    this.profile = { issuer: config.issuer, audience: config.audience, type: 'at+jwt' };
    this.ttlSeconds = Math.floor(config.accessTtlMs / 1000);
  }

  readonly ttlSeconds: number;

  issue(claims: AccessClaims): Promise<string> {
    return signToken(this.key, this.profile, { ...claims, jti: randomUUID() }, this.ttlSeconds, this.now());
  }

  async verify(jwt: string): Promise<AccessClaims | undefined> {
    const nowMs = this.now();
    const cached = this.verified.get(jwt);
    if (cached) {
      if ((cached.exp ?? 0) * 1000 > nowMs) return cached;
      this.verified.delete(jwt);
      return undefined;
    }
    const payload = await verifyToken(this.key, this.profile, jwt, nowMs);
    if (!payload || typeof payload.sid !== 'string' || typeof payload.tid !== 'string' || typeof payload.username !== 'string') return undefined;
    if (this.verified.size >= CACHE_LIMIT) this.verified.clear();
    const claims = payload as AccessClaims & JWTPayload;
    this.verified.set(jwt, claims);
    return claims;
  }
}
