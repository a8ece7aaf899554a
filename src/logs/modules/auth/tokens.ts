import { randomUUID } from 'node:crypto';
import type { JWTPayload } from 'jose';
import { CachingTokenVerifier, signToken, type TokenProfile } from '../../../shared/auth/jwt.js';
import type { SigningKeyRing } from '../../../shared/auth/signing-keys.js';

/** What a logs access token says: who, which session, which home tenant. Permissions are read fresh per request. */
export interface AccessClaims {
  sub: string;
  sid: string;
  tid: string;
  username: string;
}

const isAccessClaims = (payload: JWTPayload): payload is AccessClaims & JWTPayload =>
  typeof payload.sid === 'string' && typeof payload.tid === 'string' && typeof payload.username === 'string';

/**
 * Access tokens of the logs service: short-lived ES256 JWTs (spec 5.3, 300 s). Signature checks
 * are cached per token until it expires; the session check is done by the caller per request.
 */
export class LogsTokens {
  private readonly profile: TokenProfile;
  private readonly verifier: CachingTokenVerifier<AccessClaims & JWTPayload>;

  constructor(
    /** The database's keys, read again on rotation (the newest signs). */
    private readonly keys: SigningKeyRing,
    config: { issuer: string; audience: string; accessTtlMs: number },
    private readonly now: () => number,
  ) {
    this.profile = { issuer: config.issuer, audience: config.audience, type: 'at+jwt' };
    this.ttlSeconds = Math.floor(config.accessTtlMs / 1000);
    this.verifier = new CachingTokenVerifier(keys, this.profile, isAccessClaims);
  }

  readonly ttlSeconds: number;

  issue(claims: AccessClaims): Promise<string> {
    return signToken(this.keys.current, this.profile, { ...claims, jti: randomUUID() }, this.ttlSeconds, this.now());
  }

  verify(jwt: string): Promise<AccessClaims | undefined> {
    return this.verifier.verify(jwt, this.now());
  }
}
