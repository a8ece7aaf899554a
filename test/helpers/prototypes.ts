import assert from 'node:assert/strict';

/** Names that are members of Object.prototype (or reach it): a client may use each as a field, label or key name. */
export const HOSTILE_NAMES = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'valueOf',
  '__defineGetter__',
] as const;

// String.prototype is left out: a dependency of swagger2openapi adds toCamelCase to it when loaded.
const shared = [Object.prototype, Array.prototype, Function.prototype] as const;
const baseline = shared.map((proto) => Reflect.ownKeys(proto).map(String).sort().join(','));

/** What changed on a shared prototype since this module loaded (prototype pollution), or undefined. */
export function prototypeProblem(): string | undefined {
  for (const [index, proto] of shared.entries()) {
    const now = Reflect.ownKeys(proto).map(String).sort().join(',');
    if (now !== baseline[index]) return `a shared prototype was changed: ${now} (was ${baseline[index]})`;
  }
  return undefined;
}

export function assertPrototypesUntouched(after: string): void {
  assert.equal(prototypeProblem(), undefined, after);
}

/**
 * A deep copy whose dictionaries are plain objects, for comparing what the store returns (its
 * dictionaries have no prototype: src/shared/dict.ts) with object literals in `deepStrictEqual`.
 */
export const plain = <T>(value: T): T => structuredClone(value);
