import { SignJWT, jwtVerify, type JWTPayload } from 'jose';
import { SIGNING_ALGORITHM, type SigningKey, type VerificationKeys } from './signing-keys.js';

export interface TokenProfile {
  readonly issuer: string;
  readonly audience: string;
  /** The `typ` header, pinned on verification so other JWTs (e.g. ID tokens) are never accepted. */
  readonly type: string;
}

export async function signToken(
  key: SigningKey,
  profile: TokenProfile,
  claims: JWTPayload,
  ttlSeconds: number,
  nowMs: number,
): Promise<string> {
  const iat = Math.floor(nowMs / 1000);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: SIGNING_ALGORITHM, kid: key.kid, typ: profile.type })
    .setIssuer(profile.issuer)
    .setAudience(profile.audience)
    .setIssuedAt(iat)
    .setExpirationTime(iat + ttlSeconds)
    .sign(key.privateKey);
}

/**
 * Verifies signature (ES256 only, key chosen by `kid`), issuer, audience, typ and expiry.
 * Returns undefined for any invalid token; callers answer 401 without saying why. The algorithm is
 * checked before a key is looked up, so a token of another never makes `keys` read anything.
 */
export async function verifyToken(
  keys: VerificationKeys,
  profile: TokenProfile,
  token: string,
  nowMs: number,
): Promise<JWTPayload | undefined> {
  try {
    const { payload } = await jwtVerify(
      token,
      async (header) => {
        const publicKey = typeof header.kid === 'string' ? await keys.verificationKey(header.kid) : undefined;
        if (!publicKey) throw new Error('unknown kid');
        return publicKey;
      },
      {
        algorithms: [SIGNING_ALGORITHM],
        issuer: profile.issuer,
        audience: profile.audience,
        typ: profile.type,
        currentDate: new Date(nowMs),
        requiredClaims: ['exp', 'iat', 'sub'],
      },
    );
    return payload;
  } catch {
    return undefined;
  }
}

/**
 * Verifies tokens and keeps each valid one's claims until it expires: a signature check costs far
 * more than a map look-up, and a client sends the same token many times. `accept` checks the claims
 * a service relies on; a token it refuses is invalid and not kept. Revocation is the caller's
 * business (session look-up per request).
 */
export class CachingTokenVerifier<Claims extends JWTPayload> {
  private readonly verified = new Map<string, Claims>();

  constructor(
    private readonly keys: VerificationKeys,
    private readonly profile: TokenProfile,
    private readonly accept: (payload: JWTPayload) => payload is Claims,
    private readonly limit = 10_000,
  ) {}

  /** The claims of a token verified before and not yet expired, without verifying anything; else undefined. */
  cached(jwt: string, nowMs: number): Claims | undefined {
    const cached = this.verified.get(jwt);
    return cached !== undefined && (cached.exp ?? 0) * 1000 > nowMs ? cached : undefined;
  }

  async verify(jwt: string, nowMs: number): Promise<Claims | undefined> {
    const cached = this.verified.get(jwt);
    if (cached) {
      if ((cached.exp ?? 0) * 1000 > nowMs) return cached;
      this.verified.delete(jwt);
      return undefined;
    }
    const payload = await verifyToken(this.keys, this.profile, jwt, nowMs);
    if (!payload || !this.accept(payload)) return undefined;
    if (this.verified.size >= this.limit) this.verified.clear();
    this.verified.set(jwt, payload);
    return payload;
  }
}
