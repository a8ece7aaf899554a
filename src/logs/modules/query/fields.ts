import { canonicalLevel } from './levels.js';
import { QuerySyntaxError } from './errors.js';

/** The fixed columns of a log entry; any other field name is an attribute's dotted name. */
export const KEYWORD_COLUMNS = ['level', 'service', 'host', 'trace_id', 'span_id'] as const;
export type KeywordColumn = (typeof KEYWORD_COLUMNS)[number];

export type FieldRef =
  { kind: 'message' } | { kind: 'column'; column: KeywordColumn } | { kind: 'attribute'; name: string } | { kind: 'timestamp' };

export const TIMESTAMP_NAMES: ReadonlySet<string> = new Set(['@timestamp', 'timestamp']);

export function resolveField(name: string): FieldRef {
  if (name === 'message') return { kind: 'message' };
  if (TIMESTAMP_NAMES.has(name)) return { kind: 'timestamp' };
  if ((KEYWORD_COLUMNS as readonly string[]).includes(name)) return { kind: 'column', column: name as KeywordColumn };
  if (name.length === 0 || name.length > 256) throw new QuerySyntaxError('a field name must have 1 to 256 characters', 0);
  return { kind: 'attribute', name };
}

/** Levels are stored and searched as one set (levels.ts): `ERROR`, `err` and `3` are `error`. */
export function normalizeLevel(level: string): string {
  return canonicalLevel(level).level;
}

/** A value the user typed that may equal a JSON number or boolean attribute as well as a string. */
export function isJsonScalarLiteral(value: string): boolean {
  return value === 'true' || value === 'false' || /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(value);
}

export const FIXED_FIELDS = [
  { name: '@timestamp', type: 'date' },
  { name: 'message', type: 'string' },
  { name: 'level', type: 'string' },
  { name: 'service', type: 'string' },
  { name: 'host', type: 'string' },
  { name: 'trace_id', type: 'string' },
  { name: 'span_id', type: 'string' },
] as const;
