import { QuerySyntaxError } from './errors.js';
import { FIXED_FIELDS, normalizeLevel, resolveField, TIMESTAMP_NAMES, type FieldRef } from './fields.js';
import { parseQuery } from './parser.js';
import { ASCII, tokenize } from './tokenize.js';
import { bounded, fuzzyPattern, parseRegex, patternProgram, wildcardChars, wildcardRegex, type Pattern, type Regex } from './patterns.js';
import { patternMatch } from './pattern-match-source.js';
import type { ExistsNode, QueryNode, RangeBound, RangeNode, TermNode } from './ast.js';

/**
 * The dialect-neutral form both compilers start from. Message words become `text` expressions, which
 * a full-text index answers (FTS5 on SQLite, tsvector on PostgreSQL); adjacent text expressions are
 * merged so that one index lookup answers e.g. `timeout OR refused`.
 */
export type TextExpr =
  { kind: 'phrase'; tokens: string[]; prefix: boolean } | { kind: 'and' | 'or'; children: TextExpr[] } | { kind: 'not'; child: TextExpr };

export type Condition =
  | { kind: 'all' }
  | { kind: 'and' | 'or'; children: Condition[] }
  | { kind: 'not'; child: Condition }
  | { kind: 'text'; expr: TextExpr }
  /** A message term without letters or digits (`=>`, `'`): a plain substring test. */
  | { kind: 'contains'; value: string }
  | { kind: 'equals'; field: Exclude<FieldRef, { kind: 'timestamp' }>; value: string }
  | { kind: 'prefix'; field: Exclude<FieldRef, { kind: 'timestamp' }>; value: string }
  /** `time` compares epoch milliseconds, `number` numeric values (JSON numbers and numeric strings), `text` bytewise. */
  | { kind: 'range'; field: FieldRef; compare: 'time' | 'number' | 'text'; lower: ConditionBound | null; upper: ConditionBound | null }
  /** The field has a value that is neither null nor empty. */
  | { kind: 'exists'; field: Exclude<FieldRef, { kind: 'timestamp' }> }
  /**
   * A wildcard, regular expression or fuzzy term (patterns.ts): on the message, one of its words
   * matches (lower-cased as tokenize.ts makes them); on a column, its value; on an attribute, its
   * value when a string or an integer (its digits).
   */
  | { kind: 'pattern'; field: Exclude<FieldRef, { kind: 'timestamp' }>; pattern: Pattern }
  /**
   * A term on a field-name pattern (`mess*ge:timeout`): the term on each known field whose name
   * matches, ORed. The store expands it (expandFieldPatterns) with the tenant's field names.
   */
  | { kind: 'fields'; names: Regex; node: FieldNode }
  /** The entry the store numbered so (its `id`, digits): the `_id` hits show for an entry stored without one. */
  | { kind: 'entryId'; id: string };

export interface ConditionBound {
  value: number | string;
  inclusive: boolean;
}

const NUMBER = /^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/;
/** The store's entry ids: positive whole numbers of int8 (18 digits at most). */
export const ENTRY_ID = /^[1-9]\d{0,17}$/;

export function toCondition(node: QueryNode): Condition {
  switch (node.kind) {
    case 'all':
      return { kind: 'all' };
    case 'not':
      return merge({ kind: 'not', child: toCondition(node.child) });
    case 'and':
    case 'or':
      return merge({ kind: node.kind, children: node.children.map(toCondition) });
    case 'exists': {
      if (/[*?]/.test(node.field)) return fieldsCondition(node);
      const field = resolveField(node.field);
      return field.kind === 'timestamp' ? { kind: 'all' } : { kind: 'exists', field };
    }
    case 'range':
      return /[*?]/.test(node.field) ? fieldsCondition(node) : rangeCondition(node);
    case 'term': {
      if (node.field !== null && /[*?]/.test(node.field)) return fieldsCondition(node);
      const field = resolveField(node.field ?? 'message');
      if (field.kind === 'timestamp') throw new QuerySyntaxError(`${node.field} cannot be searched: use the time range`, node.position);
      if (node.match === 'wildcard' || node.match === 'regex' || node.match === 'fuzzy') return patternCondition(node, field);
      if (field.kind === 'message') {
        const tokens = tokenize(node.value);
        if (tokens.length === 0) return { kind: 'contains', value: node.value };
        return { kind: 'text', expr: { kind: 'phrase', tokens, prefix: node.match === 'prefix' } };
      }
      const value = field.kind === 'column' && field.column === 'level' ? normalizeLevel(node.value) : node.value;
      if (
        field.kind === 'attribute' &&
        field.name === '_id' &&
        (node.match === 'word' || node.match === 'phrase') &&
        ENTRY_ID.test(value)
      ) {
        // Hits show our id as the `_id` of an entry stored without one (OTLP, the logs API): it finds that entry too.
        return {
          kind: 'or',
          children: [
            { kind: 'equals', field, value },
            {
              kind: 'and',
              children: [
                { kind: 'entryId', id: value },
                { kind: 'not', child: { kind: 'exists', field } },
              ],
            },
          ],
        };
      }
      return { kind: node.match === 'prefix' ? 'prefix' : 'equals', field, value };
    }
  }
}

/** Fields a field-name pattern may name at most. */
export const MAX_PATTERN_FIELDS = 100;

/** What a field-name pattern may stand before: a term, `field:*`, a range. */
type FieldNode = TermNode | RangeNode | ExistsNode;

function fieldsCondition(node: FieldNode): Condition {
  const names = bounded(wildcardRegex(wildcardChars(node.field!)), node.position);
  // The term's own errors (a bad regular expression or bound, say) show whatever fields the pattern finds.
  toCondition({ ...node, field: 'service' });
  return { kind: 'fields', names, node };
}

/**
 * Field-name patterns as the ORs of their terms on the fields they match among `known` (the fixed
 * fields and the tenant's attribute names). A regular expression or a range skips the message, as
 * `*:` does in Elasticsearch for fields it does not apply to.
 */
export function expandFieldPatterns(condition: Condition, known: readonly string[]): Condition {
  switch (condition.kind) {
    case 'and':
    case 'or':
      return { kind: condition.kind, children: condition.children.map((child) => expandFieldPatterns(child, known)) };
    case 'not':
      return { kind: 'not', child: expandFieldPatterns(condition.child, known) };
    case 'fields': {
      const { node } = condition;
      const program = patternProgram({ kind: 'regex', regex: condition.names }, false);
      const names = known.filter(
        (name) => !TIMESTAMP_NAMES.has(name) && !(name === 'message' && onlyKeywords(node)) && patternMatch(program, name) === 1,
      );
      if (names.length > MAX_PATTERN_FIELDS)
        throw new QuerySyntaxError(
          `the field pattern '${node.field!.slice(0, 100)}' matches more than ${MAX_PATTERN_FIELDS} fields`,
          node.position,
        );
      if (names.length === 0) return { kind: 'not', child: { kind: 'all' } };
      const children = names.map((name) => toCondition({ ...node, field: name }));
      return children.length === 1 ? children[0]! : merge({ kind: 'or', children });
    }
    default:
      return condition;
  }
}

/** Regular expressions and ranges do not apply to the message: a field pattern skips it for them. */
function onlyKeywords(node: FieldNode): boolean {
  return node.kind === 'range' || (node.kind === 'term' && node.match === 'regex');
}

/** The fields a field-name pattern may match: the fixed ones (but the time) and the tenant's attribute names. */
export function knownFields(attributes: readonly string[]): string[] {
  return [...FIXED_FIELDS.map((field) => field.name), ...attributes];
}

export function hasFieldPatterns(condition: Condition): boolean {
  if (condition.kind === 'fields') return true;
  if (condition.kind === 'and' || condition.kind === 'or') return condition.children.some(hasFieldPatterns);
  if (condition.kind === 'not') return hasFieldPatterns(condition.child);
  return false;
}

/** A message word as tokenize.ts makes it: lower-cased, diacritics removed. */
function asWordCharacters(text: string): string {
  return ASCII.test(text)
    ? text.toLowerCase()
    : text
        .normalize('NFKD')
        .replace(/\p{M}+/gu, '')
        .toLowerCase();
}

const WORD_CHARACTER = /^[\p{L}\p{N}]$/u;

function patternCondition(node: TermNode, field: Exclude<FieldRef, { kind: 'timestamp' }>): Condition {
  const level = field.kind === 'column' && field.column === 'level';
  if (node.match === 'regex') {
    if (field.kind === 'message')
      throw new QuerySyntaxError(
        'regular expressions apply to keyword fields (level, service, host, trace_id, span_id, attributes); on the message use words, wildcards or fuzzy terms',
        node.position,
      );
    return { kind: 'pattern', field, pattern: { kind: 'regex', regex: parseRegex(node.value, node.position) } };
  }
  if (node.match === 'fuzzy') {
    let term = level ? node.value.toLowerCase() : node.value;
    if (field.kind === 'message') {
      term = asWordCharacters(node.value);
      const tokens = tokenize(node.value);
      if (tokens.length !== 1 || tokens[0] !== term)
        throw new QuerySyntaxError('a fuzzy term on the message is one word (letters and digits)', node.position);
    }
    return { kind: 'pattern', field, pattern: fuzzyPattern(term, node.edits ?? 'auto', node.position) };
  }
  let chars = wildcardChars(node.value);
  if (field.kind === 'message') {
    chars = chars.flatMap((part) =>
      !part.escaped && (part.c === '*' || part.c === '?') ? [part] : [...asWordCharacters(part.c)].map((c) => ({ c, escaped: true })),
    );
    if (chars.some((part) => part.escaped && !WORD_CHARACTER.test(part.c)))
      throw new QuerySyntaxError('a wildcard on the message matches one word: letters, digits, ? and *', node.position);
  } else if (level) chars = chars.map((part) => ({ ...part, c: part.c.toLowerCase() }));
  const regex = bounded(wildcardRegex(chars), node.position);
  return { kind: 'pattern', field, pattern: { kind: 'regex', regex } };
}

function rangeCondition(node: RangeNode): Condition {
  const field = resolveField(node.field);
  const bounds = [node.lower, node.upper].filter((bound): bound is RangeBound => bound !== null);
  if (field.kind === 'message')
    throw new QuerySyntaxError('message cannot be compared: ranges apply to numbers, times and keywords', node.position);
  if (field.kind === 'timestamp') {
    const time = (bound: RangeBound | null): ConditionBound | null => {
      if (bound === null) return null;
      const ms = /^\d+$/.test(bound.value) ? Number(bound.value) : Date.parse(bound.value);
      if (!Number.isSafeInteger(ms))
        throw new QuerySyntaxError(`'${bound.value}' is not a time (ISO 8601 or epoch milliseconds)`, node.position);
      return { value: ms, inclusive: bound.inclusive };
    };
    return { kind: 'range', field, compare: 'time', lower: time(node.lower), upper: time(node.upper) };
  }
  if (bounds.length === 0) return { kind: 'exists', field };
  const numeric = bounds.every((bound) => NUMBER.test(bound.value));
  const convert = (bound: RangeBound | null): ConditionBound | null =>
    bound === null ? null : { value: numeric ? Number(bound.value) : bound.value, inclusive: bound.inclusive };
  return { kind: 'range', field, compare: numeric ? 'number' : 'text', lower: convert(node.lower), upper: convert(node.upper) };
}

/** An exact match on a field, as our search API and alert rules state filters. */
export interface FieldFilter {
  /** `level`, `service`, `host`, `trace_id`, `span_id`, `message` or an attribute's dotted name. */
  field: string;
  value: string;
}

/**
 * What our search API, alert rules and dashboards ask the store for: a query in the language (empty
 * or absent: everything) and exact-match filters, ANDed. A QuerySyntaxError when either is wrong.
 */
export function searchCondition(query: string | undefined, filters: readonly FieldFilter[] = []): Condition {
  return both(toCondition(parseQuery(query ?? '')), filtersToCondition(filters));
}

/** `filters` are exact matches; several are ANDed. */
export function filtersToCondition(filters: readonly FieldFilter[]): Condition {
  const children: Condition[] = filters.map((filter) => {
    const field = resolveField(filter.field);
    if (field.kind === 'timestamp') throw new QuerySyntaxError(`${filter.field} cannot be filtered: use the time range`, 0);
    const value = field.kind === 'column' && field.column === 'level' ? normalizeLevel(filter.value) : filter.value;
    return { kind: 'equals', field, value };
  });
  if (children.length === 0) return { kind: 'all' };
  return children.length === 1 ? children[0]! : { kind: 'and', children };
}

export function both(a: Condition, b: Condition): Condition {
  if (a.kind === 'all') return b;
  if (b.kind === 'all') return a;
  return { kind: 'and', children: [a, b] };
}

/** Folds text children of and/or (and a NOT over text) into one text expression. */
function merge(condition: Condition): Condition {
  if (condition.kind === 'not') {
    return condition.child.kind === 'text' ? { kind: 'text', expr: { kind: 'not', child: condition.child.expr } } : condition;
  }
  if (condition.kind !== 'and' && condition.kind !== 'or') return condition;
  const texts = condition.children.filter((child): child is Extract<Condition, { kind: 'text' }> => child.kind === 'text');
  if (texts.length < 2) return condition;
  const others = condition.children.filter((child) => child.kind !== 'text');
  const text: Condition = { kind: 'text', expr: { kind: condition.kind, children: texts.map((child) => child.expr) } };
  return others.length === 0 ? text : { kind: condition.kind, children: [text, ...others] };
}

export function hasText(condition: Condition): boolean {
  if (condition.kind === 'text') return true;
  if (condition.kind === 'and' || condition.kind === 'or') return condition.children.some(hasText);
  if (condition.kind === 'not') return hasText(condition.child);
  return false;
}
