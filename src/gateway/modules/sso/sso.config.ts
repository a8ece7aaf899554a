import { ConfigError, envReader, type Env } from '../../../shared/config/env.js';
import { dict } from '../../../shared/dict.js';

/**
 * Asymmetric JWS algorithms an ID token may be signed with. `none` and every HMAC algorithm are
 * refused outright: an HMAC "verified" with the provider's public key is the classic forgery.
 */
export const ASYMMETRIC_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
] as const;
export type IdTokenAlgorithm = (typeof ASYMMETRIC_ALGORITHMS)[number];

export const TIPE_PEGAWAI_VALUES = ['pns', 'pjlp', 'bpjs'] as const;

/** Where account fields come from in the verified ID token's claims. */
export interface ClaimMapping {
  readonly name: string;
  /** Claim holding the employee number; when absent from the token a unique `sso-…` number is generated. */
  readonly employeeNumber: string;
  readonly employeeType: string;
  /** Dotted path, e.g. `groups` or `realm_access.roles`. */
  readonly groups: string;
  /** Response attribute name -> dotted claim path, e.g. department -> department. */
  readonly attributes: Readonly<Record<string, string>>;
}

export interface SsoConfig {
  readonly issuer: string;
  readonly clientIds: readonly string[];
  readonly algorithms: readonly IdTokenAlgorithm[];
  /** Largest accepted age of an ID token (now - iat), ms. */
  readonly maxTokenAgeMs: number;
  /** Refuse ID tokens without a nonce (browser clients always send one when this is on). */
  readonly requireNonce: boolean;
  readonly nonceTtlMs: number;
  readonly claims: ClaimMapping;
  readonly defaultTipePegawai: (typeof TIPE_PEGAWAI_VALUES)[number];
  /** OIDC_REQUIRED_ACR: the ID token's `acr` must be one of these (empty: not checked). */
  readonly requiredAcr: readonly string[];
  /** OIDC_REQUIRED_AMR: the ID token's `amr` must contain one of these (empty: not checked). */
  readonly requiredAmr: readonly string[];
  /** `auto`: Secure when the request came over HTTPS (as Fastify sees it, trustProxy included). */
  readonly cookieSecure: 'auto' | 'always' | 'never';
}

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** The SSO part of the gateway configuration; undefined (SSO answers 503) without OIDC_ISSUER and OIDC_CLIENT_ID. */
export function loadSsoConfig(env: Env): SsoConfig | undefined {
  const read = envReader(env);
  const issuer = read.url('OIDC_ISSUER');
  const clientIds = read.list('OIDC_CLIENT_ID');
  if (issuer === undefined && clientIds.length === 0) return undefined;
  if (issuer === undefined) throw new ConfigError('OIDC_ISSUER', 'is required when OIDC_CLIENT_ID is set');
  if (clientIds.length === 0) throw new ConfigError('OIDC_CLIENT_ID', 'is required when OIDC_ISSUER is set');
  const issuerUrl = new URL(issuer);
  // Keys fetched over plain HTTP could be swapped in transit; only a provider on this machine may use it.
  if (issuerUrl.protocol !== 'https:' && !LOCAL_HOSTS.has(issuerUrl.hostname)) {
    throw new ConfigError('OIDC_ISSUER', 'must be an https URL (plain http only for localhost)');
  }

  const algorithms = read.list('OIDC_ALLOWED_ALGORITHMS');
  for (const alg of algorithms) {
    if (!(ASYMMETRIC_ALGORITHMS as readonly string[]).includes(alg)) {
      throw new ConfigError(
        'OIDC_ALLOWED_ALGORITHMS',
        `must list asymmetric JWS algorithms only (${ASYMMETRIC_ALGORITHMS.join(', ')}), got "${alg}"`,
      );
    }
  }

  const maxTokenAgeMs = read.duration('OIDC_MAX_TOKEN_AGE', '10m');
  if (maxTokenAgeMs < 1_000) throw new ConfigError('OIDC_MAX_TOKEN_AGE', 'must be at least 1s');
  const nonceTtlMs = read.duration('OIDC_NONCE_TTL', '10m');
  if (nonceTtlMs < 1_000) throw new ConfigError('OIDC_NONCE_TTL', 'must be at least 1s');

  return Object.freeze({
    issuer,
    clientIds: Object.freeze(clientIds),
    algorithms: Object.freeze((algorithms.length > 0 ? algorithms : [...ASYMMETRIC_ALGORITHMS]) as IdTokenAlgorithm[]),
    maxTokenAgeMs,
    requireNonce: read.bool('OIDC_REQUIRE_NONCE', false),
    nonceTtlMs,
    claims: Object.freeze({
      name: read.string('OIDC_CLAIM_NAME', 'name'),
      employeeNumber: read.string('OIDC_CLAIM_EMPLOYEE_NUMBER', 'employee_number'),
      employeeType: read.string('OIDC_CLAIM_EMPLOYEE_TYPE', 'employee_type'),
      groups: read.string('OIDC_CLAIM_GROUPS', 'groups'),
      attributes: Object.freeze(attributeMapping(read.raw('OIDC_CLAIM_ATTRIBUTES') ?? 'department,position')),
    }),
    defaultTipePegawai: read.oneOf('OIDC_DEFAULT_TIPE_PEGAWAI', TIPE_PEGAWAI_VALUES, 'pns'),
    requiredAcr: Object.freeze(read.list('OIDC_REQUIRED_ACR')),
    requiredAmr: Object.freeze(read.list('OIDC_REQUIRED_AMR')),
    cookieSecure: read.oneOf('SSO_COOKIE_SECURE', ['auto', 'always', 'never'] as const, 'auto'),
  });
}

/** `department,position` or `department=org.unit,position=title`: attribute name, optionally = claim path. */
function attributeMapping(text: string): Record<string, string> {
  const mapping = dict<string>();
  for (const item of text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)) {
    const [name = '', path = name] = item.split('=').map((part) => part.trim());
    if (!/^[A-Za-z_][\w-]{0,63}$/.test(name) || !/^[^\s.]+(\.[^\s.]+)*$/.test(path)) {
      throw new ConfigError('OIDC_CLAIM_ATTRIBUTES', `must be a comma-separated list of name or name=claim.path, got "${item}"`);
    }
    mapping[name] = path;
  }
  return mapping;
}
