import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { ERRORS } from '../../src/shared/errors/catalogue.js';

test('every error code and message of the catalogue is documented in docs/errors.md', () => {
  const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
  for (const [code, entry] of Object.entries(ERRORS)) {
    assert.ok(doc.includes(`\`${code}\``), `${code} is missing from docs/errors.md`);
    assert.ok(doc.includes(entry.en), `the message of ${code} ("${entry.en}") is missing from docs/errors.md`);
    assert.ok(doc.includes(`| ${entry.status} |`), `status of ${code}`);
  }
});
