import { createRemoteJWKSet, type JWTVerifyGetKey } from 'jose';
import { AppError } from '../../../shared/errors/app-error.js';

const DISCOVERY_TIMEOUT_MS = 5_000;
/** The discovery document is re-read this often; keys themselves rotate through the JWKS cache. */
const DISCOVERY_MAX_AGE_MS = 60 * 60_000;

interface Discovered {
  readonly keys: JWTVerifyGetKey;
  readonly fetchedAt: number;
}

/**
 * The trusted provider's signing keys, from its discovery document (`/.well-known/openid-configuration`).
 * jose's remote JWKS caches the key set (10 min) and, on a `kid` it does not know, fetches it again
 * at most once per cool-down (30 s), so rotated keys are picked up and unknown kids cannot be used
 * to hammer the provider. A failed fetch is not cached: the next login tries again (503 meanwhile).
 */
export class ProviderKeys {
  private discovered: Discovered | undefined;
  private pending: Promise<Discovered> | undefined;

  constructor(
    private readonly issuer: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** The key resolver for jwtVerify; throws SSO_PROVIDER_UNAVAILABLE when discovery fails. */
  async resolver(): Promise<JWTVerifyGetKey> {
    const current = this.discovered;
    if (current && this.now() - current.fetchedAt < DISCOVERY_MAX_AGE_MS) return current.keys;
    this.pending ??= this.discover().finally(() => {
      this.pending = undefined;
    });
    try {
      this.discovered = await this.pending;
    } catch (error) {
      // Serve the old keys while the provider's discovery endpoint is briefly down.
      if (current) return current.keys;
      throw error;
    }
    return this.discovered.keys;
  }

  private async discover(): Promise<Discovered> {
    const url = `${this.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
    let document: { issuer?: unknown; jwks_uri?: unknown };
    try {
      const response = await fetch(url, {
        headers: { accept: 'application/json' },
        redirect: 'error',
        signal: AbortSignal.timeout(DISCOVERY_TIMEOUT_MS),
      });
      if (!response.ok) throw new Error(`discovery answered ${response.status}`);
      document = (await response.json()) as typeof document;
    } catch (error) {
      throw new AppError('SSO_PROVIDER_UNAVAILABLE', { cause: error });
    }
    // OIDC Discovery 4.3: the document's issuer must be exactly the configured one.
    if (document.issuer !== this.issuer || typeof document.jwks_uri !== 'string') {
      throw new AppError('SSO_PROVIDER_UNAVAILABLE', { cause: new Error('discovery document issuer or jwks_uri is wrong') });
    }
    const jwksUri = new URL(document.jwks_uri);
    if (jwksUri.protocol !== 'https:' && new URL(this.issuer).protocol === 'https:') {
      throw new AppError('SSO_PROVIDER_UNAVAILABLE', { cause: new Error('jwks_uri must be https') });
    }
    return {
      keys: createRemoteJWKSet(jwksUri, { timeoutDuration: DISCOVERY_TIMEOUT_MS, cooldownDuration: 30_000, cacheMaxAge: 10 * 60_000 }),
      fetchedAt: this.now(),
    };
  }
}
