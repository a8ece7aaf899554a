/**
 * Dictionaries keyed by names a client chose (field and attribute names, label keys, tenant and
 * index names, JSON keys). A plain object literal inherits from Object.prototype, so `__proto__`,
 * `constructor` or `toString` would read or write the prototype instead of an entry. A `Dict` has
 * no prototype: every name is an ordinary key. The lint rule `gerbang/client-keys` keeps writes by
 * computed name on plain objects out of src/.
 */
declare const nullPrototype: unique symbol;

/** A null-prototype dictionary, made by `dict()`. The brand only tells the lint rule where it came from. */
export type Dict<T> = { [name: string]: T } & { readonly [nullPrototype]?: true };

/** A new dictionary with no prototype, optionally filled from entries or from an object's own properties. */
export function dict<T>(from?: Iterable<readonly [string, T]> | { readonly [name: string]: T }): Dict<T> {
  // Not Object.create(null): V8 keeps that object in dictionary mode, slow to fill and read
  // (docs/performance-notes.md); a literal whose prototype is then taken away stays fast.
  const out = Object.setPrototypeOf({}, null) as Dict<T>;
  if (from === undefined) return out;
  const entries = Symbol.iterator in from ? (from as Iterable<readonly [string, T]>) : Object.entries(from);
  for (const [name, value] of entries) out[name] = value;
  return out;
}

/** The own property `name` of a parsed JSON object (never one inherited from Object.prototype). */
export function own(object: object, name: string): unknown {
  return Object.hasOwn(object, name) ? (object as Record<string, unknown>)[name] : undefined;
}
