import assert from 'node:assert/strict';

/** Names that are members of Object.prototype (or reach it): a client may use each as a field, label or key name. */
export const HOSTILE_NAMES = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__'] as const;

const shared = [Object.prototype, Array.prototype, Function.prototype, String.prototype] as const;
const baseline = shared.map((proto) => Reflect.ownKeys(proto).map(String).sort().join(','));

/** Throws when any shared prototype gained or lost a property since this module loaded (prototype pollution). */
export function assertPrototypesUntouched(after: string): void {
  shared.forEach((proto, index) => {
    const now = Reflect.ownKeys(proto).map(String).sort().join(',');
    assert.equal(now, baseline[index], `${after}: a shared prototype was changed`);
  });
  assert.equal(({} as Record<string, unknown>).properties, undefined, `${after}: Object.prototype.properties`);
}
