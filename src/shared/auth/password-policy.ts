import { randomBytes } from 'node:crypto';
import type { ErrorCode } from '../errors/catalogue.js';

export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 128;

/**
 * The rules of spec 2.2 plus an upper bound (argon2 cost and denial of service), in the order they
 * are reported. Returns the first broken rule, or undefined when the password is acceptable.
 * Length is counted in Unicode code points.
 */
export function brokenPasswordRule(password: string): ErrorCode | undefined {
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH) return 'PASSWORD_TOO_SHORT';
  if (length > PASSWORD_MAX_LENGTH) return 'PASSWORD_TOO_LONG';
  if (!/\p{Ll}/u.test(password)) return 'PASSWORD_NEEDS_LOWERCASE';
  if (!/\p{Lu}/u.test(password)) return 'PASSWORD_NEEDS_UPPERCASE';
  if (!/\p{Nd}/u.test(password)) return 'PASSWORD_NEEDS_DIGIT';
  // Special: anything that is not a letter, digit or white space (punctuation, symbols).
  if (!/[^\p{L}\p{Nd}\s]/u.test(password)) return 'PASSWORD_NEEDS_SPECIAL';
  return undefined;
}

/** A random password that meets every rule above (first administrators, ingest accounts, CLI resets). */
export function generatePassword(): string {
  return `${randomBytes(15).toString('base64url')}aZ7!`;
}
