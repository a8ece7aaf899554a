import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { base32Decode, base32Encode, newTotpSecret, totpCode, totpUri, verifyTotp } from '../../src/shared/mfa/totp.js';
import { looksLikeRecoveryCode, matchRecoveryCode, newRecoveryCodes, recoveryCodeDigest } from '../../src/shared/mfa/recovery-codes.js';

// RFC 6238 Appendix B's SHA-1 key, and the last six digits of its eight-digit answers.
const RFC_SECRET = base32Encode(Buffer.from('12345678901234567890'));
const RFC_VECTORS: Array<[number, string]> = [
  [59, '287082'],
  [1111111109, '081804'],
  [1111111111, '050471'],
  [1234567890, '005924'],
  [2000000000, '279037'],
  [20000000000, '353130'],
];

describe('TOTP (RFC 6238)', () => {
  it('gives the RFC test vectors', () => {
    for (const [seconds, code] of RFC_VECTORS) assert.equal(totpCode(RFC_SECRET, seconds * 1000), code, `T=${seconds}`);
  });

  it('accepts the current step and one either side, nothing further', () => {
    const now = 1_700_000_000_000;
    const secret = newTotpSecret();
    for (const offset of [-30_000, 0, 30_000]) assert.notEqual(verifyTotp(secret, totpCode(secret, now + offset), now, null), undefined);
    for (const offset of [-60_000, 60_000]) assert.equal(verifyTotp(secret, totpCode(secret, now + offset), now, null), undefined);
  });

  it('refuses a code once it was used, and any older one', () => {
    const now = 1_700_000_000_000;
    const secret = newTotpSecret();
    const step = verifyTotp(secret, totpCode(secret, now), now, null);
    assert.notEqual(step, undefined);
    assert.equal(verifyTotp(secret, totpCode(secret, now), now, step), undefined);
    assert.equal(verifyTotp(secret, totpCode(secret, now - 30_000), now, step), undefined);
    assert.notEqual(verifyTotp(secret, totpCode(secret, now + 30_000), now, step), undefined);
  });

  it('refuses malformed codes and accepts the spaces apps show', () => {
    const now = 1_700_000_000_000;
    const secret = newTotpSecret();
    const code = totpCode(secret, now);
    for (const bad of ['', '12345', '1234567', 'abcdef', `${code}0`]) assert.equal(verifyTotp(secret, bad, now, null), undefined);
    assert.notEqual(verifyTotp(secret, `${code.slice(0, 3)} ${code.slice(3)}`, now, null), undefined);
  });

  it('round-trips base32 and writes an otpauth URI authenticator apps read', () => {
    const secret = newTotpSecret();
    assert.match(secret, /^[A-Z2-7]{32}$/);
    assert.equal(base32Encode(base32Decode(secret)), secret);
    const uri = new URL(totpUri(secret, 'Gerbang', 'ana@example.go.id'));
    assert.equal(uri.protocol, 'otpauth:');
    assert.equal(uri.host, 'totp');
    assert.equal(decodeURIComponent(uri.pathname), '/Gerbang:ana@example.go.id');
    assert.equal(uri.searchParams.get('secret'), secret);
    assert.equal(uri.searchParams.get('issuer'), 'Gerbang');
  });
});

describe('recovery codes', () => {
  it('are ten distinct codes, each matched once by its digest, however typed', () => {
    const codes = newRecoveryCodes();
    assert.equal(codes.length, 10);
    assert.equal(new Set(codes).size, 10);
    const digests = codes.map(recoveryCodeDigest);
    assert.equal(matchRecoveryCode(codes[3]!, digests), 3);
    assert.equal(matchRecoveryCode(codes[3]!.toLowerCase().replace('-', ' '), digests), 3);
    assert.equal(matchRecoveryCode('AAAAA-AAAAA', digests), -1);
    assert.ok(looksLikeRecoveryCode(codes[0]!));
    assert.ok(!looksLikeRecoveryCode('123456'));
  });
});
