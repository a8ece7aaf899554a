import { SignJWT, jwtVerify, type JWTPayload, type CryptoKey } from 'jose';
import { SIGNING_ALGORITHM, type SigningKey } from './signing-keys.js';

export interface TokenProfile {
  readonly issuer: string;
  readonly audience: string;
  /** The `typ` header, pinned on verification so other JWTs (e.g. ID tokens) are never accepted. */
  readonly type: string;
}

export async function signToken(key: SigningKey, profile: TokenProfile, claims: JWTPayload, ttlSeconds: number, nowMs: number): Promise<string> {
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
 * Returns undefined for any invalid token; callers answer 401 without saying why.
 */
export async function verifyToken(key: SigningKey, profile: TokenProfile, token: string, nowMs: number): Promise<JWTPayload | undefined> {
  try {
    const { payload } = await jwtVerify(
      token,
      (header) => {
        const publicKey = header.kid ? key.publicKeys.get(header.kid) : undefined;
        if (!publicKey) throw new Error('unknown kid');
        return publicKey as CryptoKey;
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
