import { randomBytes } from 'node:crypto';
import type { JWTPayload } from 'jose';
import { containsNul, validatorCompiler } from '../../../shared/http/validation.js';
import { CreateUserBody } from '../users/users.schemas.js';
import { refuse } from './id-token.js';
import { TIPE_PEGAWAI_VALUES, type SsoConfig } from './sso.config.js';
import { dict } from '../../../shared/dict.js';

/** Who the verified ID token says the user is, mapped to the gateway's fields. */
export interface SsoIdentity {
  readonly issuer: string;
  readonly subject: string;
  /** Lower-case; undefined when the token has none. */
  readonly email: string | undefined;
  readonly emailVerified: boolean;
  readonly name: string | undefined;
  readonly noPegawai: string | undefined;
  readonly tipePegawai: string;
  readonly groups: string[];
  readonly attributes: Record<string, string>;
}

const MAX_GROUPS = 200;
const MAX_TEXT = 200;

/**
 * The claims that become account fields pass exactly the rules of a user created through the API
 * (the REST body schema, and no NUL anywhere, as the REST hook refuses): one set of rules for
 * however an account comes to exist.
 */
const fieldRule = (name: 'no_pegawai' | 'nama' | 'email') => {
  const check = validatorCompiler({ schema: CreateUserBody.properties[name], httpPart: 'body', method: 'POST', url: '' }) as (
    value: unknown,
  ) => boolean;
  return (value: string) => !containsNul(value) && check(value);
};
const ACCOUNT_RULES = { noPegawai: fieldRule('no_pegawai'), name: fieldRule('nama'), email: fieldRule('email') };

/** The value at a dotted path (`realm_access.roles`); a claim whose own name has a dot wins. */
export function claimAt(claims: Record<string, unknown>, path: string): unknown {
  if (Object.hasOwn(claims, path)) return claims[path];
  let value: unknown = claims;
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object' || Array.isArray(value) || !Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** A claim as text: strings and numbers only (a number-typed employee number is common). */
function text(value: unknown): string | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  return trimmed.length > 0 && trimmed.length <= MAX_TEXT ? trimmed : undefined;
}

/** An account field from a claim: undefined when the token has none; SSO_CLAIMS_INVALID when it breaks the REST rule. */
function accountField(value: unknown, rule: (text: string) => boolean): string | undefined {
  if (value === undefined || value === null) return undefined;
  const asText = typeof value === 'number' && Number.isFinite(value) ? String(value) : typeof value === 'string' ? value.trim() : undefined;
  if (asText === '') return undefined;
  if (asText === undefined || !rule(asText)) throw refuse('SSO_CLAIMS_INVALID');
  return asText;
}

/**
 * Maps verified claims by the configured claim names; identity fields never come from the request
 * body. A claim that would become an account field (e-mail, name, employee number) and breaks the
 * rules of the user-creation API is refused (SSO_CLAIMS_INVALID), never stored nor silently replaced;
 * so is a NUL in any mapped claim.
 */
export function identityFromClaims(claims: JWTPayload & { iss: string; sub: string }, config: SsoConfig): SsoIdentity {
  const mapping = config.claims;
  const email = accountField(claims.email, (value) => ACCOUNT_RULES.email(value.toLowerCase()))?.toLowerCase();
  const tipe = text(claimAt(claims, mapping.employeeType))?.toLowerCase();
  const noPegawai = accountField(claimAt(claims, mapping.employeeNumber), ACCOUNT_RULES.noPegawai);
  const name = accountField(claimAt(claims, mapping.name), ACCOUNT_RULES.name);
  if (
    containsNul([
      claimAt(claims, mapping.employeeType),
      claimAt(claims, mapping.groups),
      ...Object.values(mapping.attributes).map((path) => claimAt(claims, path)),
    ])
  ) {
    throw refuse('SSO_CLAIMS_INVALID');
  }
  const rawGroups = claimAt(claims, mapping.groups);
  const groups = (Array.isArray(rawGroups) ? rawGroups : typeof rawGroups === 'string' ? [rawGroups] : [])
    .map(text)
    .filter((group): group is string => group !== undefined)
    .slice(0, MAX_GROUPS);
  const attributes = dict<string>();
  for (const [name, path] of Object.entries(mapping.attributes)) {
    const value = text(claimAt(claims, path));
    if (value !== undefined) attributes[name] = value;
  }
  return {
    issuer: claims.iss,
    subject: claims.sub,
    email,
    // Only the boolean true counts (some providers send the string "true"; OIDC says boolean).
    emailVerified: claims.email_verified === true,
    name,
    noPegawai,
    tipePegawai: tipe !== undefined && (TIPE_PEGAWAI_VALUES as readonly string[]).includes(tipe) ? tipe : config.defaultTipePegawai,
    groups: [...new Set(groups)],
    attributes,
  };
}

/** An employee number for a provider that sends none: `sso-` and 12 random base32 characters. */
export function generatedNoPegawai(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  return `sso-${[...randomBytes(12)].map((byte) => alphabet[byte % 32]).join('')}`;
}
