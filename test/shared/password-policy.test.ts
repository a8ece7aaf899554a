import assert from 'node:assert/strict';
import { test } from 'node:test';
import { brokenPasswordRule, generatePassword } from '../../src/shared/auth/password-policy.js';

test('each rule of spec 2.2 is reported, in order, and the length cap holds', () => {
  assert.equal(brokenPasswordRule('Ab1!xyz'), 'PASSWORD_TOO_SHORT');
  assert.equal(brokenPasswordRule(`Ab1!${'x'.repeat(125)}`), 'PASSWORD_TOO_LONG');
  assert.equal(brokenPasswordRule('ABCDEFG1!'), 'PASSWORD_NEEDS_LOWERCASE');
  assert.equal(brokenPasswordRule('abcdefg1!'), 'PASSWORD_NEEDS_UPPERCASE');
  assert.equal(brokenPasswordRule('Abcdefgh!'), 'PASSWORD_NEEDS_DIGIT');
  assert.equal(brokenPasswordRule('Abcdefgh1'), 'PASSWORD_NEEDS_SPECIAL');
  assert.equal(brokenPasswordRule('Rahasia#123'), undefined);
  assert.equal(brokenPasswordRule('Kata Sandi 1 ü'), 'PASSWORD_NEEDS_SPECIAL', 'a space is not a special character');
});

test('generated passwords meet every rule and differ', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 50; i++) {
    const password = generatePassword();
    assert.equal(brokenPasswordRule(password), undefined, password);
    seen.add(password);
  }
  assert.equal(seen.size, 50);
});
