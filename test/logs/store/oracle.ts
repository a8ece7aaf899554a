/**
 * The plain scan that the store's reads are checked against (test/logs/store/oracle.test.ts): a
 * condition of the query language evaluated in JavaScript on every stored entry, with the meaning
 * docs/log-search.md gives it. Whatever index or walk a read takes, its answer must be this one's.
 */
import { isJsonScalarLiteral, type FieldRef } from '../../../src/logs/modules/query/fields.js';
import type { AttributeValue, StoredLogEntry } from '../../../src/logs/modules/store/index.js';
import type { Condition, ConditionBound, TextExpr } from '../../../src/logs/modules/query/condition.js';
import { tokenize } from '../../../src/logs/modules/query/tokenize.js';
import type { Pattern, Regex } from '../../../src/logs/modules/query/patterns.js';

type Field = Exclude<FieldRef, { kind: 'timestamp' }>;

function valueOf(entry: StoredLogEntry, field: Field): AttributeValue | undefined {
  if (field.kind === 'message') return entry.message;
  if (field.kind === 'column') return entry[field.column] ?? undefined;
  return entry.attributes[field.name];
}

function textMatches(tokens: readonly string[], expr: TextExpr): boolean {
  switch (expr.kind) {
    case 'phrase':
      return tokens.some((_, start) =>
        expr.tokens.every((token, offset) => {
          const actual = tokens[start + offset];
          if (actual === undefined) return false;
          return expr.prefix && offset === expr.tokens.length - 1 ? actual.startsWith(token) : actual === token;
        }),
      );
    case 'and':
      return expr.children.every((child) => textMatches(tokens, child));
    case 'or':
      return expr.children.some((child) => textMatches(tokens, child));
    case 'not':
      return !textMatches(tokens, expr.child);
  }
}

/**
 * A pattern tested another way than the store's: a regular expression as V8's (on these short test
 * values only), a fuzzy term by the full table of edit distances.
 */
export function patternTest(pattern: Pattern): (value: string) => boolean {
  if (pattern.kind === 'fuzzy') return (value) => editDistance([...pattern.term], [...value]) <= pattern.edits;
  const regex = new RegExp(`^(?:${jsRegex(pattern.regex)})$`, 'su');
  return (value) => regex.test(value);
}

function jsChar(code: number): string {
  return `\\u{${code.toString(16)}}`;
}

function jsRegex(regex: Regex): string {
  switch (regex.t) {
    case 'char':
      return jsChar(regex.c.codePointAt(0)!);
    case 'any':
      return '.';
    case 'class':
      return `[${regex.negated ? '^' : ''}${regex.ranges.map(([lo, hi]) => `${jsChar(lo)}-${jsChar(hi)}`).join('')}]`;
    case 'cat':
      return regex.items.map(jsRegex).join('');
    case 'alt':
      return `(?:${regex.items.map(jsRegex).join('|')})`;
    case 'rep':
      return `(?:${jsRegex(regex.item)}){${regex.min},${regex.max ?? ''}}`;
  }
}

/** The optimal string alignment distance: Levenshtein's edits and swaps of two adjacent characters. */
function editDistance(a: readonly string[], b: readonly string[]): number {
  const table = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i += 1) {
    for (let j = 1; j <= b.length; j += 1) {
      let value = Math.min(table[i - 1]![j]! + 1, table[i]![j - 1]! + 1, table[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, table[i - 2]![j - 2]! + 1);
      table[i]![j] = value;
    }
  }
  return table[a.length]![b.length]!;
}

const NUMERIC = /^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/;

function inRange(value: number | string, lower: ConditionBound | null, upper: ConditionBound | null): boolean {
  if (lower && (lower.inclusive ? value < lower.value : value <= lower.value)) return false;
  if (upper && (upper.inclusive ? value > upper.value : value >= upper.value)) return false;
  return true;
}

export function matches(entry: StoredLogEntry, condition: Condition): boolean {
  switch (condition.kind) {
    case 'all':
      return true;
    case 'and':
      return condition.children.every((child) => matches(entry, child));
    case 'or':
      return condition.children.some((child) => matches(entry, child));
    case 'not':
      return !matches(entry, condition.child);
    case 'text':
      return textMatches(tokenize(entry.message), condition.expr);
    case 'contains':
      return entry.message.includes(condition.value);
    case 'equals': {
      const value = valueOf(entry, condition.field);
      if (value === undefined) return false;
      if (condition.field.kind !== 'attribute') return value === condition.value;
      // An attribute's JSON text equals the quoted text, or the text itself when it is a JSON scalar.
      return typeof value === 'string'
        ? value === condition.value
        : isJsonScalarLiteral(condition.value) && JSON.stringify(value) === condition.value;
    }
    case 'prefix': {
      const value = valueOf(entry, condition.field);
      return value !== undefined && String(value).startsWith(condition.value);
    }
    case 'exists': {
      const value = valueOf(entry, condition.field);
      return value !== undefined && value !== '';
    }
    case 'pattern': {
      const value = valueOf(entry, condition.field);
      // Strings, and integers as their digits.
      const text = typeof value === 'string' ? value : Number.isSafeInteger(value) ? String(value) : undefined;
      if (text === undefined) return false;
      const test = patternTest(condition.pattern);
      return condition.field.kind === 'message' ? tokenize(text).some(test) : test(text);
    }
    case 'entryId':
      return 'id' in entry && String(entry.id) === condition.id;
    case 'fields':
      throw new Error('the store expands field patterns: give the oracle the expanded condition');
    case 'range': {
      if (condition.field.kind === 'timestamp') return inRange(entry.timestamp, condition.lower, condition.upper);
      const value = valueOf(entry, condition.field);
      if (value === undefined) return false;
      if (condition.compare === 'text') return inRange(String(value), condition.lower, condition.upper);
      const number = typeof value === 'number' ? value : typeof value === 'string' && NUMERIC.test(value) ? Number(value) : undefined;
      return number !== undefined && inRange(number, condition.lower, condition.upper);
    }
  }
}

/** Newest first (or oldest first), ties by id in the same direction, as the store sorts. */
export function byTime(order: 'asc' | 'desc') {
  const sign = order === 'asc' ? 1 : -1;
  return (a: StoredLogEntry, b: StoredLogEntry): number =>
    sign * (a.timestamp - b.timestamp) || sign * (BigInt(a.id) < BigInt(b.id) ? -1 : BigInt(a.id) > BigInt(b.id) ? 1 : 0);
}
