import { QuerySyntaxError } from './errors.js';
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
 *   primary := "(" or ")" | term
 *   term    := [field ":"] (word | word"*" | "quoted phrase") | "*"
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
type Token = { type: '(' | ')' | 'AND' | 'OR' | 'NOT' | '-'; position: number } | { type: 'term'; term: Operand; position: number };

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
    const { value, end: j } = readQuotedText(input, start);
    const next = input[j];
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

    const range = RANGE_START.exec(input.slice(i, i + 300));
    if (range) {
      const { node, end } = readRange(input, i, range[1]!, i + range[0].length - 1);
      tokens.push({ type: 'term', position: i, term: node });
      i = end;
      continue;
    }

    // A word: up to whitespace, a parenthesis or a quote. A backslash escapes the next character.
    const start = i;
    const chars: { c: string; escaped: boolean }[] = [];
    while (i < input.length) {
      const c = input[i]!;
      if (isSpace(c) || c === '(' || c === ')' || c === '"') break;
      if (c === '\\' && i + 1 < input.length) {
        chars.push({ c: input[i + 1]!, escaped: true });
        i += 2;
        continue;
      }
      chars.push({ c, escaped: false });
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
      if (FIELD_NAME.test(name) && chars.slice(0, colon).every((part) => !part.escaped)) {
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
      if (input[i] === '(') throw new QuerySyntaxError(`grouping after '${field}:' is not supported; write (${field}:a OR ${field}:b)`, i);
      throw new QuerySyntaxError(`expected a value after '${field}:'`, valueStart);
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

    let match: TermMatch = 'word';
    const last = valueChars[valueChars.length - 1];
    if (last && last.c === '*' && !last.escaped) {
      match = 'prefix';
      valueChars = valueChars.slice(0, -1);
      if (valueChars.length === 0) throw new QuerySyntaxError("a prefix needs at least one character before '*'", start + chars.length - 1);
    }
    const value = valueChars.map((part) => part.c).join('');
    tokens.push({ type: 'term', position: start, term: { kind: 'term', field, value, match, position: start } });
  }
  return tokens;
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
  return token !== undefined && (token.type === 'term' || token.type === '(' || token.type === 'NOT' || token.type === '-');
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
