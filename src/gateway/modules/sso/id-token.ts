import { createHash, timingSafeEqual } from 'node:crypto';
import { decodeProtectedHeader, errors, jwtVerify, type JWTPayload } from 'jose';
import { AppError } from '../../../shared/errors/app-error.js';
import type { ErrorCode } from '../../../shared/errors/catalogue.js';
import type { ProviderKeys } from './provider-keys.js';
import type { SsoConfig } from './sso.config.js';

/** Clock skew allowed between the provider and the gateway on exp, iat and nbf. */
export const CLOCK_TOLERANCE_S = 30;

/** The claims of an ID token that passed every check. */
export interface VerifiedIdToken {
  readonly claims: JWTPayload & { iss: string; sub: string; exp: number; iat: number };
  readonly alg: string;
  /** Replay key: a hash of issuer and jti, or of the whole token; never the token. */
  readonly replayKey: string;
}

/** A refusal with its catalogue code; `reason` is what goes to the log and audit trail. */
export function refuse(code: ErrorCode, cause?: unknown): AppError {
  return new AppError(code, { data: { reason: code }, cause });
}

const JWT_SHAPE = /^[\w-]+\.[\w-]+\.[\w-]*$/;

/**
 * Verifies an ID token (OIDC Core 3.1.3.7): signature by a key of the provider's JWKS with an
 * allowed asymmetric algorithm, `iss` exactly the configured issuer, `aud` containing a configured
 * client id (and `azp` one when there are several audiences), `exp`, and `iat` no older than the
 * configured age. With an access token and an `at_hash`, the hash must match (3.2.2.9).
 */
export async function verifyIdToken(
  idToken: string,
  accessToken: string | undefined,
  config: SsoConfig,
  keys: ProviderKeys,
  nowMs: number,
): Promise<VerifiedIdToken> {
  if (!JWT_SHAPE.test(idToken)) throw refuse('SSO_TOKEN_MALFORMED');
  let header;
  try {
    header = decodeProtectedHeader(idToken);
  } catch (error) {
    throw refuse('SSO_TOKEN_MALFORMED', error);
  }
  // Checked before any key is looked up: `none` and HMAC never reach the verifier.
  if (typeof header.alg !== 'string' || !(config.algorithms as readonly string[]).includes(header.alg))
    throw refuse('SSO_ALGORITHM_REFUSED');
  if (header.typ !== undefined && !/^(application\/)?jwt$/i.test(header.typ)) throw refuse('SSO_TOKEN_MALFORMED');

  const resolver = await keys.resolver();
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(idToken, resolver, {
      algorithms: [...config.algorithms],
      issuer: config.issuer,
      audience: [...config.clientIds],
      currentDate: new Date(nowMs),
      maxTokenAge: Math.floor(config.maxTokenAgeMs / 1000),
      clockTolerance: CLOCK_TOLERANCE_S,
      requiredClaims: ['iss', 'sub', 'aud', 'exp', 'iat'],
    }));
  } catch (error) {
    throw refusalFor(error);
  }

  const claims = payload as VerifiedIdToken['claims'];
  if (typeof claims.sub !== 'string' || claims.sub.length === 0 || claims.sub.length > 255) throw refuse('SSO_CLAIMS_INVALID');
  // With several audiences the token must say which client it was issued to (OIDC Core 3.1.3.7, 4-5).
  const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  if (claims.azp !== undefined && (typeof claims.azp !== 'string' || !config.clientIds.includes(claims.azp)))
    throw refuse('SSO_AUDIENCE_MISMATCH');
  if (audiences.length > 1 && claims.azp === undefined) throw refuse('SSO_AUDIENCE_MISMATCH');

  if (accessToken !== undefined && claims.at_hash !== undefined) {
    const expected = tokenHash(accessToken, header.alg, header.crv);
    if (typeof claims.at_hash !== 'string' || !expected || !equalText(expected, claims.at_hash)) throw refuse('SSO_AT_HASH_MISMATCH');
  }

  const replayKey =
    typeof claims.jti === 'string' && claims.jti.length > 0 ? sha256(`jti\n${claims.iss}\n${claims.jti}`) : sha256(`token\n${idToken}`);
  return { claims, alg: header.alg, replayKey };
}

/** OIDC Core 3.1.3.6: base64url of the left half of the hash the JWS algorithm uses. */
export function tokenHash(value: string, alg: string, crv?: unknown): string | undefined {
  let digest: Buffer;
  const bits = /^(?:RS|PS|ES)(256|384|512)$/.exec(alg)?.[1];
  if (bits) digest = createHash(`sha${bits}`).update(value, 'ascii').digest();
  else if (alg === 'Ed25519' || (alg === 'EdDSA' && crv !== 'Ed448')) digest = createHash('sha512').update(value, 'ascii').digest();
  else if (alg === 'EdDSA') digest = createHash('shake256', { outputLength: 114 }).update(value, 'ascii').digest();
  else return undefined;
  return digest.subarray(0, digest.length / 2).toString('base64url');
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function equalText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** jose's error -> our catalogue code. Unknown failures are refusals too, never a pass. */
function refusalFor(error: unknown): AppError {
  if (error instanceof AppError) return error;
  if (error instanceof errors.JWTExpired) return refuse(error.claim === 'iat' ? 'SSO_TOKEN_TOO_OLD' : 'SSO_TOKEN_EXPIRED', error);
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'iss') return refuse('SSO_ISSUER_MISMATCH', error);
    if (error.claim === 'aud') return refuse('SSO_AUDIENCE_MISMATCH', error);
    if (error.claim === 'iat') return refuse('SSO_TOKEN_TOO_OLD', error);
    return refuse('SSO_CLAIMS_INVALID', error);
  }
  if (error instanceof errors.JOSEAlgNotAllowed) return refuse('SSO_ALGORITHM_REFUSED', error);
  if (
    error instanceof errors.JWKSNoMatchingKey ||
    error instanceof errors.JWKSMultipleMatchingKeys ||
    error instanceof errors.JWSSignatureVerificationFailed
  ) {
    return refuse('SSO_SIGNATURE_INVALID', error);
  }
  if (error instanceof errors.JWTInvalid || error instanceof errors.JWSInvalid) return refuse('SSO_TOKEN_MALFORMED', error);
  // What is left is the key set failing to load (timeout, network, bad HTTP answer, bad JSON):
  // the provider, not the token, is at fault.
  return new AppError('SSO_PROVIDER_UNAVAILABLE', { cause: error });
}
