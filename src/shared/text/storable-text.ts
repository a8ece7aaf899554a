/**
 * Text as both databases can store it. PostgreSQL's text type rejects NUL and lone UTF-16
 * surrogates (SQLite takes them, but then the dialects would answer differently), so shippers'
 * NULs (escaped in JSON, raw in protobuf) and broken surrogate pairs become U+FFFD.
 */
// eslint-disable-next-line no-control-regex -- NUL is what PostgreSQL cannot store
const NEEDS_CLEANING = /[\u0000\uD800-\uDFFF]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

export function storableText(value: string): string {
  if (!NEEDS_CLEANING.test(value)) return value;
  const wellFormed = value.replace(LONE_SURROGATE, '\uFFFD');
  return wellFormed.includes('\u0000') ? wellFormed.replaceAll('\u0000', '\uFFFD') : wellFormed;
}

export type PlainObject = Record<string, unknown>;

/** A JSON object (not an array, not null). */
export const isPlainObject = (value: unknown): value is PlainObject => typeof value === 'object' && value !== null && !Array.isArray(value);
