// Single-use recovery codes for a person who lost their authenticator: ten codes of 50 random bits
// each, shown once, stored as SHA-256 digests. A fast digest is enough because each code is random
// and long (unlike a password, it cannot be guessed from a dictionary), and it lets a check compare
// against every stored digest in constant time.
import { createHash, randomInt, timingSafeEqual } from 'node:crypto';

export const RECOVERY_CODE_COUNT = 10;
// Crockford's base32 without I, L, O, U: nothing a person misreads when copying a code by hand.
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const GROUP = 5;
const GROUPS = 2;

/** New codes, formatted `XXXXX-XXXXX`. */
export function newRecoveryCodes(count = RECOVERY_CODE_COUNT): string[] {
  return Array.from({ length: count }, () => {
    const groups = Array.from({ length: GROUPS }, () => Array.from({ length: GROUP }, () => ALPHABET[randomInt(ALPHABET.length)]).join(''));
    return groups.join('-');
  });
}

/** The digest stored for a code; spaces, dashes and case are ignored, as people type them. */
export function recoveryCodeDigest(code: string): string {
  const normal = code.toUpperCase().replace(/[\s-]+/g, '');
  return createHash('sha256').update(normal).digest('hex');
}

/**
 * The index of the stored digest a code matches, or -1. Every digest is compared (constant time
 * over the list); the caller removes the matched one so it is used once.
 */
export function matchRecoveryCode(code: string, storedDigests: readonly string[]): number {
  const given = Buffer.from(recoveryCodeDigest(code), 'hex');
  let found = -1;
  storedDigests.forEach((digest, index) => {
    const stored = Buffer.from(digest, 'hex');
    if (stored.length === given.length && timingSafeEqual(stored, given) && found < 0) found = index;
  });
  return found;
}

/** Whether a string looks like a recovery code rather than a six-digit TOTP code. */
export function looksLikeRecoveryCode(code: string): boolean {
  return code.replace(/[\s-]+/g, '').length === GROUP * GROUPS;
}
