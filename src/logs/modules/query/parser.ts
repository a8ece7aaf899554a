import { QuerySyntaxError } from './errors.js';
import { hasWildcard } from './patterns.js';
import {
  joined,
  type AllNode,
  type ExistsNode,
  type QueryNode,
  type RangeBound,
  type RangeNode,
  type TermMatch,
  type TermNode,
} from './ast.js';

/**
 * Parses the search query language (docs/log-search.md) into an AST:
 *   query   := or EOF
 *   or      := and ("OR" and)*
 *   and     := unary (["AND"] unary)*          (juxtaposition means AND)
 *   unary   := ("NOT" | "-") unary | primary
 *   primary := ["field:"] "(" or ")" [boost] | term [boost]       boost := "^" number
 *   term    := [field ":"] (word | word"*" | wildcard | word"~"[digit] | "/regex/" | "quoted phrase") | "*"
 *            | field ":" ("[" | "{") bound "TO" bound ("]" | "}")      bound := word | "quoted" | "*"
 *            | field ":" (">" | ">=" | "<" | "<=") word
 *            | "_exists_:" field | field ":*"
 * Operators are upper case; a lower-case `and` is a word. Errors carry the 0-based offset.
 */

/** Bounds so that one query cannot make the database work without limit. */
export const MAX_QUERY_LENGTH = 4096;
export const MAX_TERMS = 100;
export const MAX_DEPTH = 32;
const TOO_DEEP = `query nested deeper than ${MAX_DEPTH} levels (parentheses and NOT/-)`;

export const FIELD_NAME = /^[\p{L}\p{N}_@][\p{L}\p{N}_@.\-/]*$/u;

type Operand = TermNode | RangeNode | ExistsNode | AllNode;
type Token =
  | { type: '(' | ')' | 'AND' | 'OR' | 'NOT' | '-'; position: number }
  | { type: 'term'; term: Operand; position: number }
  /** `field:(`: the group that follows searches `field` by default (its `(` is the next token). */
  | { type: 'group'; field: string; position: number };

/** A field name as typed, `*` and `?` allowed (a pattern over the known fields). */
export const FIELD_PATTERN = /^[\p{L}\p{N}_@*?][\p{L}\p{N}_@.\-/*?]*$/u;
const REGEX_START = /^([\p{L}\p{N}_@*?][\p{L}\p{N}_@.\-/*?]*:)?\//u;
const BOOST = /^\d+(\.\d+)?$/;
const FUZZY = /^\d*$/;

const RANGE_START = /^([\p{L}\p{N}_@][\p{L}\p{N}_@.\-/]*):([[{])/u;
const COMPARISON = /^(>=|<=|>|<)/;
const COMPARISON_ONLY = /^(>=|<=|>|<)$/;

function isSpace(char: string | undefined): boolean {
  return char !== undefined && /\s/u.test(char);
}

function lex(input: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;

  const readQuoted = (start: number): { value: string; end: number } => {
    const { value, end: quoteEnd } = readQuotedText(input, start);
    const j = skipBoost(input, quoteEnd);
    const next = input[j];
    if (next === '~') throw new QuerySyntaxError('phrase proximity ("a b"~N) is not supported', j);
    if (next !== undefined && !isSpace(next) && next !== ')' && next !== '(') {
      throw new QuerySyntaxError(`unexpected '${next}' after a quoted phrase`, j);
    }
    if (value.trim() === '') throw new QuerySyntaxError('empty quoted phrase', start);
    return { value, end: j };
  };

  while (i < input.length) {
    const char = input[i]!;
    if (isSpace(char)) {
      i += 1;
      continue;
    }
    if (char === '(' || char === ')') {
      tokens.push({ type: char, position: i });
      i += 1;
      if (char === ')') i = skipBoost(input, i);
      continue;
    }
    if (char === '"') {
      const { value, end } = readQuoted(i);
      tokens.push({ type: 'term', position: i, term: { kind: 'term', field: null, value, match: 'phrase', position: i } });
      i = end;
      continue;
    }
    if (char === '-') {
      const next = input[i + 1];
      if (next === undefined || isSpace(next) || next === ')') throw new QuerySyntaxError("expected a term after '-'", i);
      tokens.push({ type: '-', position: i });
      i += 1;
      continue;
    }

    const regex = REGEX_START.exec(input.slice(i, i + 300));
    if (regex) {
      const field = regex[1] === undefined ? null : regex[1].slice(0, -1);
      const open = i + regex[0].length - 1;
      const read = readRegex(input, open);
      if (read !== null) {
        tokens.push({ type: 'term', position: i, term: { kind: 'term', field, value: read.value, match: 'regex', position: open + 1 } });
        i = read.end;
        continue;
      }
    }

    const range = RANGE_START.exec(input.slice(i, i + 300));
    if (range) {
      const { node, end } = readRange(input, i, range[1]!, i + range[0].length - 1);
      tokens.push({ type: 'term', position: i, term: node });
      i = end;
      continue;
    }

    // A word: up to whitespace, a parenthesis or a quote. A backslash escapes the next character.
    const start = i;
    const chars: { c: string; escaped: boolean; at: number }[] = [];
    while (i < input.length) {
      const c = input[i]!;
      if (isSpace(c) || c === '(' || c === ')' || c === '"') break;
      if (c === '\\' && i + 1 < input.length) {
        chars.push({ c: input[i + 1]!, escaped: true, at: i });
        i += 2;
        continue;
      }
      chars.push({ c, escaped: false, at: i });
      i += 1;
    }
    const raw = chars.map((part) => part.c).join('');
    const plain = chars.every((part) => !part.escaped);
    if (plain && (raw === 'AND' || raw === 'OR' || raw === 'NOT')) {
      tokens.push({ type: raw, position: start });
      continue;
    }
    // `*` and `*:*` match everything (what Kibana and Grafana send for an empty query box).
    if (plain && (raw === '*' || raw === '*:*')) {
      tokens.push({ type: 'term', position: start, term: { kind: 'all' } });
      continue;
    }

    let field: string | null = null;
    let valueChars = chars;
    let valueStart = start;
    const colon = chars.findIndex((part) => part.c === ':' && !part.escaped);
    if (colon > 0) {
      const name = chars
        .slice(0, colon)
        .map((part) => part.c)
        .join('');
      if (FIELD_PATTERN.test(name) && chars.slice(0, colon).every((part) => !part.escaped)) {
        field = name;
        valueChars = chars.slice(colon + 1);
        valueStart = start + colon + 1;
      }
    }

    if (input[i] === '"') {
      const operator = valueChars.map((part) => part.c).join('');
      if (field !== null && valueChars.every((part) => !part.escaped) && COMPARISON_ONLY.test(operator)) {
        const { value, end } = readQuoted(i);
        tokens.push({ type: 'term', position: start, term: comparisonNode(field, operator, value, start) });
        i = end;
        continue;
      }
      if (field === null || valueChars.length > 0) {
        throw new QuerySyntaxError("unexpected '\"': put a space before a quoted phrase", i);
      }
      const { value, end } = readQuoted(i);
      tokens.push({ type: 'term', position: start, term: { kind: 'term', field, value, match: 'phrase', position: start } });
      i = end;
      continue;
    }
    if (field !== null && valueChars.length === 0) {
      if (input[i] === '(' && field !== '_exists_') {
        tokens.push({ type: 'group', field, position: start });
        continue;
      }
      throw new QuerySyntaxError(`expected a value after '${field}:'`, valueStart);
    }
    // `^2`: a boost changes scores only, and this store does not score: the term matches as it is.
    const caret = valueChars.findIndex((part) => part.c === '^' && !part.escaped);
    if (caret !== -1) {
      const boost = valueChars
        .slice(caret + 1)
        .map((part) => part.c)
        .join('');
      if (!BOOST.test(boost)) throw new QuerySyntaxError("expected a number after '^' (a boost: term^2)", valueChars[caret]!.at);
      if (caret === 0) throw new QuerySyntaxError("a boost needs a term before '^'", valueChars[caret]!.at);
      valueChars = valueChars.slice(0, caret);
    }
    let edits: number | 'auto' | undefined;
    const tilde = valueChars.findIndex((part) => part.c === '~' && !part.escaped);
    if (tilde !== -1) {
      const digits = valueChars
        .slice(tilde + 1)
        .map((part) => part.c)
        .join('');
      const at = valueChars[tilde]!.at;
      if (!FUZZY.test(digits) || Number(digits) > 2)
        throw new QuerySyntaxError("a fuzzy term allows 0, 1 or 2 edits after '~' (term~, term~1, term~2)", at);
      if (tilde === 0) throw new QuerySyntaxError("a fuzzy term needs a term before '~'", at);
      edits = digits === '' ? 'auto' : Number(digits);
      valueChars = valueChars.slice(0, tilde);
    }

    const valueText = valueChars.map((part) => part.c).join('');
    const valuePlain = valueChars.every((part) => !part.escaped);
    if (field === '_exists_') {
      if (!FIELD_NAME.test(valueText)) throw new QuerySyntaxError(`'${valueText}' is not a field name`, valueStart);
      tokens.push({ type: 'term', position: start, term: { kind: 'exists', field: valueText, position: start } });
      continue;
    }
    if (field !== null && valuePlain && valueText === '*') {
      tokens.push({ type: 'term', position: start, term: { kind: 'exists', field, position: start } });
      continue;
    }
    const comparison = field !== null && !valueChars[0]!.escaped ? COMPARISON.exec(valueText) : null;
    if (field !== null && comparison) {
      const operator = comparison[1]!;
      const bound = valueText.slice(operator.length);
      if (bound === '') throw new QuerySyntaxError(`expected a value after '${operator}'`, valueStart + operator.length);
      tokens.push({ type: 'term', position: start, term: comparisonNode(field, operator, bound, start) });
      continue;
    }

    if (edits !== undefined) {
      if (hasWildcard(valueChars)) throw new QuerySyntaxError('a fuzzy term cannot hold wildcards', start);
      const value = valueChars.map((part) => part.c).join('');
      tokens.push({ type: 'term', position: start, term: { kind: 'term', field, value, match: 'fuzzy', edits, position: start } });
      continue;
    }
    let match: TermMatch = 'word';
    const last = valueChars[valueChars.length - 1];
    const wildcards = valueChars.filter((part) => !part.escaped && (part.c === '*' || part.c === '?')).length;
    if (last && last.c === '*' && !last.escaped && wildcards === 1) {
      match = 'prefix';
      valueChars = valueChars.slice(0, -1);
      if (valueChars.length === 0) throw new QuerySyntaxError("a prefix needs at least one character before '*'", start + chars.length - 1);
    } else if (wildcards > 0) {
      // In wildcard syntax: escapes kept, so that `\*` stays a literal star.
      const value = valueChars.map((part) => (part.escaped ? `\\${part.c}` : part.c)).join('');
      tokens.push({ type: 'term', position: start, term: { kind: 'term', field, value, match: 'wildcard', position: start } });
      continue;
    }
    const value = valueChars.map((part) => part.c).join('');
    tokens.push({ type: 'term', position: start, term: { kind: 'term', field, value, match, position: start } });
  }
  return tokens;
}

/** The offset after a `^number` boost at `at`, or `at` when there is none; a `^` without a number is an error. */
function skipBoost(input: string, at: number): number {
  if (input[at] !== '^') return at;
  const boost = /^\d+(\.\d+)?/.exec(input.slice(at + 1, at + 40));
  if (!boost) throw new QuerySyntaxError("expected a number after '^' (a boost: term^2)", at);
  return at + 1 + boost[0].length;
}

/**
 * The source of `/regex/` from the opening slash at `open` (a backslash escapes, the slash too), and
 * the offset after it and its boost; null when no slash closes it before whitespace, a parenthesis
 * or the end (`/api/v1/users`, `http://x`: a word, as before regular expressions).
 */
function readRegex(input: string, open: number): { value: string; end: number } | null {
  let j = open + 1;
  while (j < input.length && input[j] !== '/') j += input[j] === '\\' ? 2 : 1;
  if (j >= input.length) return null;
  const after = input[j + 1];
  if (after !== undefined && !isSpace(after) && after !== ')' && after !== '(' && after !== '^') return null;
  // `\/` is a slash in the expression: as a plain character there.
  const value = input.slice(open + 1, j).replace(/\\\//g, '/');
  return { value, end: skipBoost(input, j + 1) };
}

/** The text of `"..."` from the opening quote at `start` (backslash escapes the next character), and the offset after it. */
function readQuotedText(input: string, start: number): { value: string; end: number } {
  let value = '';
  let j = start + 1;
  while (j < input.length && input[j] !== '"') {
    if (input[j] === '\\' && j + 1 < input.length) j += 1;
    value += input[j];
    j += 1;
  }
  if (j >= input.length) throw new QuerySyntaxError('unterminated quoted phrase', start);
  return { value, end: j + 1 };
}

/** `field:>=value` and the other comparisons as a range with one open end. */
function comparisonNode(field: string, operator: string, value: string, position: number): RangeNode {
  const edge: RangeBound = { value, inclusive: operator.length === 2 };
  return operator.startsWith('>')
    ? { kind: 'range', field, lower: edge, upper: null, position }
    : { kind: 'range', field, lower: null, upper: edge, position };
}

/** `field:[a TO b]` and its `{`/`}` forms, from the opening bracket at `open`. */
function readRange(input: string, start: number, field: string, open: number): { node: RangeNode; end: number } {
  let j = open + 1;
  const skipSpaces = () => {
    while (isSpace(input[j])) j += 1;
  };
  const readBound = (): RangeBound['value'] | null => {
    skipSpaces();
    const from = j;
    let value = '';
    if (input[j] === '"') {
      const quoted = readQuotedText(input, j);
      j = quoted.end;
      return quoted.value;
    }
    while (j < input.length && !isSpace(input[j]) && input[j] !== ']' && input[j] !== '}') value += input[j++];
    if (value === '') throw new QuerySyntaxError(`expected a range bound in '${field}:'`, from);
    return value === '*' ? null : value;
  };
  const lower = readBound();
  skipSpaces();
  if (input.slice(j, j + 2) !== 'TO' || !isSpace(input[j + 2])) throw new QuerySyntaxError("expected 'TO' in a range", j);
  j += 2;
  const upper = readBound();
  skipSpaces();
  const close = input[j];
  if (close !== ']' && close !== '}') throw new QuerySyntaxError("expected ']' or '}' to close the range", j);
  j += 1;
  const next = input[j];
  if (next !== undefined && !isSpace(next) && next !== ')' && next !== '(')
    throw new QuerySyntaxError(`unexpected '${next}' after a range`, j);
  const node: RangeNode = {
    kind: 'range',
    field,
    lower: lower === null ? null : { value: lower, inclusive: input[open] === '[' },
    upper: upper === null ? null : { value: upper, inclusive: close === ']' },
    position: start,
  };
  return { node, end: j };
}

export function parseQuery(input: string): QueryNode {
  if (input.length > MAX_QUERY_LENGTH) throw new QuerySyntaxError(`query longer than ${MAX_QUERY_LENGTH} characters`, MAX_QUERY_LENGTH);
  const tokens = lex(input);
  const terms = tokens.filter((token) => token.type === 'term').length;
  if (terms > MAX_TERMS) throw new QuerySyntaxError(`more than ${MAX_TERMS} terms`, 0);
  if (tokens.length === 0) return { kind: 'all' };

  let index = 0;
  const peek = (): Token | undefined => tokens[index];
  const end = input.length;

  const parseOr = (depth: number): QueryNode => {
    const children = [parseAnd(depth)];
    while (peek()?.type === 'OR') {
      const operator = tokens[index]!;
      index += 1;
      if (!startsOperand(peek())) throw new QuerySyntaxError('expected a term after OR', peek()?.position ?? end);
      void operator;
      children.push(parseAnd(depth));
    }
    return joined('or', children);
  };

  const parseAnd = (depth: number): QueryNode => {
    const children = [parseUnary(depth)];
    for (;;) {
      const next = peek();
      if (next === undefined || next.type === 'OR' || next.type === ')') break;
      if (next.type === 'AND') {
        index += 1;
        if (!startsOperand(peek())) throw new QuerySyntaxError('expected a term after AND', peek()?.position ?? end);
      }
      children.push(parseUnary(depth));
    }
    return joined('and', children);
  };

  const parseUnary = (depth: number): QueryNode => {
    const token = peek();
    if (token && (token.type === 'NOT' || token.type === '-')) {
      // Each NOT nests the SQL one level deeper, like a parenthesis: both count toward MAX_DEPTH.
      if (depth >= MAX_DEPTH) throw new QuerySyntaxError(TOO_DEEP, token.position);
      index += 1;
      if (!startsOperand(peek())) throw new QuerySyntaxError(`expected a term after ${token.type}`, peek()?.position ?? end);
      return { kind: 'not', child: parseUnary(depth + 1) };
    }
    return parsePrimary(depth);
  };

  const parsePrimary = (depth: number): QueryNode => {
    const token = peek();
    if (token === undefined) throw new QuerySyntaxError('unexpected end of query', end);
    if (token.type === 'term') {
      index += 1;
      return token.term;
    }
    if (token.type === 'group') {
      index += 1;
      return withDefaultField(parsePrimary(depth), token.field);
    }
    if (token.type === '(') {
      if (depth >= MAX_DEPTH) throw new QuerySyntaxError(TOO_DEEP, token.position);
      index += 1;
      if (peek()?.type === ')') throw new QuerySyntaxError('empty parentheses', token.position);
      if (peek() === undefined) throw new QuerySyntaxError('unclosed parenthesis', token.position);
      const inner = parseOr(depth + 1);
      if (peek()?.type !== ')') throw new QuerySyntaxError('unclosed parenthesis', token.position);
      index += 1;
      return inner;
    }
    if (token.type === ')') throw new QuerySyntaxError("unmatched ')'", token.position);
    throw new QuerySyntaxError(`unexpected ${token.type}`, token.position);
  };

  const node = parseOr(0);
  const rest = peek();
  if (rest !== undefined) {
    if (rest.type === ')') throw new QuerySyntaxError("unmatched ')'", rest.position);
    throw new QuerySyntaxError(`unexpected ${rest.type}`, rest.position);
  }
  return node;
}

function startsOperand(token: Token | undefined): boolean {
  return (
    token !== undefined &&
    (token.type === 'term' || token.type === '(' || token.type === 'group' || token.type === 'NOT' || token.type === '-')
  );
}

/** `field:(a OR b)`: the group's terms without a field of their own search `field`; its `*` is `field:*`. */
function withDefaultField(node: QueryNode, field: string): QueryNode {
  switch (node.kind) {
    case 'term':
      return node.field === null ? { ...node, field } : node;
    case 'all':
      return { kind: 'exists', field, position: 0 };
    case 'not':
      return { kind: 'not', child: withDefaultField(node.child, field) };
    case 'and':
    case 'or':
      return { kind: node.kind, children: node.children.map((child) => withDefaultField(child, field)) };
    default:
      return node;
  }
}

/**
 * The parser's bounds on a query built without text (the Elasticsearch DSL): at most MAX_TERMS
 * terms, and at most MAX_DEPTH levels of NOT and of a group inside another (the parentheses its
 * text would need). Returns the query.
 */
export function withinBounds(node: QueryNode): QueryNode {
  let terms = 0;
  const visit = (current: QueryNode, depth: number): void => {
    if (depth > MAX_DEPTH) throw new QuerySyntaxError(TOO_DEEP, 0);
    if (current.kind === 'not') return visit(current.child, depth + 1);
    if (current.kind === 'and' || current.kind === 'or') {
      for (const child of current.children) visit(child, child.kind === 'and' || child.kind === 'or' ? depth + 1 : depth);
      return;
    }
    terms += 1;
    if (terms > MAX_TERMS) throw new QuerySyntaxError(`more than ${MAX_TERMS} terms`, 0);
  };
  visit(node, 0);
  return node;
}
