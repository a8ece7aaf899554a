import { randomBytes } from 'node:crypto';
import type { JWTPayload } from 'jose';
import { TIPE_PEGAWAI_VALUES, type SsoConfig } from './sso.config.js';

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
const NO_PEGAWAI = /^\S(.{0,62}\S)?$/;
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,253}$/;

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

/** Maps verified claims by the configured claim names; identity fields never come from the request body. */
export function identityFromClaims(claims: JWTPayload & { iss: string; sub: string }, config: SsoConfig): SsoIdentity {
  const mapping = config.claims;
  const email = text(claims.email)?.toLowerCase();
  const tipe = text(claimAt(claims, mapping.employeeType))?.toLowerCase();
  const noPegawai = text(claimAt(claims, mapping.employeeNumber));
  const rawGroups = claimAt(claims, mapping.groups);
  const groups = (Array.isArray(rawGroups) ? rawGroups : typeof rawGroups === 'string' ? [rawGroups] : [])
    .map(text)
    .filter((group): group is string => group !== undefined)
    .slice(0, MAX_GROUPS);
  const attributes: Record<string, string> = {};
  for (const [name, path] of Object.entries(mapping.attributes)) {
    const value = text(claimAt(claims, path));
    if (value !== undefined) attributes[name] = value;
  }
  return {
    issuer: claims.iss,
    subject: claims.sub,
    email: email !== undefined && EMAIL.test(email) ? email : undefined,
    // Only the boolean true counts (some providers send the string "true"; OIDC says boolean).
    emailVerified: claims.email_verified === true,
    name: text(claimAt(claims, mapping.name)),
    noPegawai: noPegawai !== undefined && NO_PEGAWAI.test(noPegawai) ? noPegawai : undefined,
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
