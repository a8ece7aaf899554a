/**
 * flattenDocument (every `_bulk` document) against the two walks it replaces: flattenInto for the
 * fields and nestedDeeperThan for the refusal, on random documents with the shapes that bound them
 * (more than MAX_KEYS fields with deep nesting after the limit, arrays, MAX_DEPTH, empty and
 * dotted names, nulls, non-finite numbers), with and without reserved names.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { flattenDocument, flattenInto, MAX_DOCUMENT_DEPTH, nestedDeeperThan } from '../../../src/logs/modules/ingest/flatten.js';
import { dict } from '../../../src/shared/dict.js';
import type { AttributeValue } from '../../../src/logs/modules/store/log-store.js';
import { seededRandom } from '../../helpers/seeded-random.js';

const NAMES = ['', 'a', 'b', 'a.b', 'message', 'level', 'x.y', '__proto__', 'k'];

function nest(depth: number, inner: unknown): unknown {
  let value = inner;
  for (let i = 0; i < depth; i += 1) value = { n: value };
  return value;
}

function randomValue(r: () => number, depth: number): unknown {
  const x = r();
  if (x < 0.1) return null;
  if (x < 0.25) return `v${Math.floor(r() * 10)}`;
  if (x < 0.35) return Math.floor(r() * 1000);
  if (x < 0.38) return r() < 0.5 ? Infinity : Number.NaN;
  if (x < 0.45) return r() < 0.5;
  if (x < 0.55) return [randomValue(r, depth + 1), 1];
  if (x < 0.6) return nest(Math.floor(r() * 110), 'deep');
  if (depth > 12) return 'leaf';
  const object: Record<string, unknown> = {};
  const keys = Math.floor(r() * 5);
  for (let i = 0; i < keys; i += 1)
    object[NAMES[Math.floor(r() * NAMES.length)]! + (r() < 0.5 ? '' : String(i))] = randomValue(r, depth + 1);
  return object;
}

function randomDocument(r: () => number): Record<string, unknown> {
  const doc: Record<string, unknown> = {};
  const wide = r() < 0.2; // past MAX_KEYS, so that what follows is only searched for its depth
  const keys = wide ? 520 + Math.floor(r() * 20) : Math.floor(r() * 8);
  for (let i = 0; i < keys; i += 1)
    doc[wide ? `f${i}` : NAMES[Math.floor(r() * NAMES.length)]! + (r() < 0.3 ? '' : String(i % 3))] = wide ? i : randomValue(r, 1);
  if (wide) doc.after = r() < 0.5 ? nest(MAX_DOCUMENT_DEPTH + 1, 1) : nest(5, 1);
  return doc;
}

function reference(doc: Record<string, unknown>): Record<string, AttributeValue> | undefined {
  if (nestedDeeperThan(doc, MAX_DOCUMENT_DEPTH)) return undefined;
  const flat = dict<AttributeValue>();
  flattenInto(flat, doc, '');
  return flat;
}

describe('flattenDocument', () => {
  test('flattens and refuses exactly as flattenInto and nestedDeeperThan do', () => {
    const r = seededRandom(40);
    let refused = 0;
    for (let run = 0; run < 2_000; run += 1) {
      const doc = randomDocument(r);
      const expected = reference(doc);
      const got = flattenDocument(doc);
      if (expected === undefined) {
        refused += 1;
        assert.equal(got, undefined, JSON.stringify(doc).slice(0, 300));
        continue;
      }
      assert.deepEqual({ ...got?.fields }, { ...expected }, JSON.stringify(doc).slice(0, 300));
    }
    assert.ok(refused > 50, 'the generator makes documents too deep to store');
  });

  test('reserved names go to their slots, and count towards the limit of fields alike', () => {
    const r = seededRandom(41);
    const reserved = new Map([
      ['message', 0],
      ['level', 1],
      ['a.b', 2],
    ]);
    for (let run = 0; run < 2_000; run += 1) {
      const doc = randomDocument(r);
      const expected = reference(doc);
      const got = flattenDocument(doc, reserved);
      if (expected === undefined) {
        assert.equal(got, undefined);
        continue;
      }
      const merged = { ...got!.fields };
      for (const [name, slot] of reserved) {
        assert.equal(name in merged, false, `${name} is in its slot only`);
        if (got!.reserved[slot] !== undefined) merged[name] = got!.reserved[slot]!;
      }
      assert.deepEqual(merged, { ...expected });
    }
  });
});
