// Time-based one-time passwords (RFC 6238 over RFC 4226): SHA-1, 6 digits, 30 s steps, one step of
// clock drift either way — what every authenticator app (Google Authenticator, Aegis, 1Password,
// FreeOTP) shows for an `otpauth://totp/` URI without parameters.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const TOTP_DIGITS = 6;
export const TOTP_STEP_SECONDS = 30;
/** Steps accepted before and after the current one: RFC 6238 §5.2's "one time step" of drift. */
export const TOTP_DRIFT_STEPS = 1;
const SECRET_BYTES = 20; // 160 bits: RFC 4226 §4's recommended length for HMAC-SHA-1.
const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** A new shared secret, base32 without padding (the form authenticator apps accept). */
export function newTotpSecret(): string {
  return base32Encode(randomBytes(SECRET_BYTES));
}

/** The RFC 4226 code for one counter value. */
export function hotp(secret: Buffer, counter: number): string {
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const digest = createHmac('sha1', secret).update(message).digest();
  const offset = digest[digest.length - 1]! & 0x0f;
  const binary = digest.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 10 ** TOTP_DIGITS).padStart(TOTP_DIGITS, '0');
}

/** The step a moment falls in. */
export function totpStep(nowMs: number): number {
  return Math.floor(nowMs / 1000 / TOTP_STEP_SECONDS);
}

/** The code an authenticator shows at `nowMs` (for tests and for nothing else in production). */
export function totpCode(secretBase32: string, nowMs: number): string {
  return hotp(base32Decode(secretBase32), totpStep(nowMs));
}

/**
 * The step a code belongs to, or undefined when it matches none within the drift window or was
 * already used: a step at or before `lastUsedStep` is refused, so one code (and any older one)
 * signs in once — the caller stores the returned step as the new `lastUsedStep`. Every candidate
 * is compared, in constant time, whatever matched first.
 */
export function verifyTotp(secretBase32: string, code: string, nowMs: number, lastUsedStep: number | null | undefined): number | undefined {
  const given = Buffer.from(normaliseCode(code));
  if (given.length !== TOTP_DIGITS || !/^\d+$/.test(given.toString())) return undefined;
  const secret = base32Decode(secretBase32);
  const current = totpStep(nowMs);
  let matched: number | undefined;
  for (let step = current - TOTP_DRIFT_STEPS; step <= current + TOTP_DRIFT_STEPS; step++) {
    const same = timingSafeEqual(Buffer.from(hotp(secret, step)), given);
    if (same && matched === undefined && (lastUsedStep == null || step > lastUsedStep)) matched = step;
  }
  return matched;
}

/**
 * The `otpauth://` URI an authenticator app reads from a QR code (Key Uri Format): the issuer names
 * the service, the account the person; both percent-encoded, the issuer also as a parameter.
 */
export function totpUri(secretBase32: string, issuer: string, account: string): string {
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(account)}`;
  const query = new URLSearchParams({
    secret: secretBase32,
    issuer,
    algorithm: 'SHA1',
    digits: String(TOTP_DIGITS),
    period: String(TOTP_STEP_SECONDS),
  });
  return `otpauth://totp/${label}?${query.toString()}`;
}

/** People type codes with spaces ("123 456"), as apps show them. */
function normaliseCode(code: string): string {
  return code.replace(/\s+/g, '');
}

export function base32Encode(bytes: Buffer): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

export function base32Decode(text: string): Buffer {
  const clean = text.toUpperCase().replace(/=+$/, '');
  const out: number[] = [];
  let bits = 0;
  let value = 0;
  for (const char of clean) {
    const index = BASE32.indexOf(char);
    if (index < 0) throw new Error('invalid base32 secret');
    value = (value << 5) | index;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}
