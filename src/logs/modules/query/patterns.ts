import { dict } from '../../../shared/dict.js';
import { QuerySyntaxError } from './errors.js';

/**
 * Patterns of the query language (docs/log-search.md, "Wildcards, regular expressions, fuzzy"):
 * `?`/`*` wildcards, `/regular expressions/` (a subset of Lucene's syntax) and fuzzy terms. A
 * wildcard or a regular expression becomes a Regex tree; each dialect matches it with an engine
 * that never backtracks: SQLite with the Thompson automaton of pattern-match-source.ts, PostgreSQL
 * with its own regex engine (an NFA/DFA hybrid) on the expression that postgresRegex writes.
 */
export type Regex =
  | { t: 'char'; c: string }
  | { t: 'any' }
  /** Code point ranges, inclusive. */
  | { t: 'class'; ranges: [number, number][]; negated: boolean }
  | { t: 'cat' | 'alt'; items: Regex[] }
  /** max null: unbounded. */
  | { t: 'rep'; item: Regex; min: number; max: number | null };

export type Pattern = { kind: 'regex'; regex: Regex } | { kind: 'fuzzy'; term: string; edits: number };

/** Bounds so that a pattern's automaton stays small whatever a client sends. */
export const MAX_PATTERN_LENGTH = 256;
export const MAX_REPEAT = 100;
export const MAX_STATES = 2_000;
/** Fuzzy terms are at most this long (PostgreSQL's expression of a term grows as n log n). */
export const MAX_FUZZY_LENGTH = 32;

/** A value's character with whether a backslash escaped it. */
export interface PatternChar {
  c: string;
  escaped: boolean;
}

export function hasWildcard(chars: readonly PatternChar[]): boolean {
  return chars.some((part) => !part.escaped && (part.c === '*' || part.c === '?'));
}

/** `?` one character, `*` any run; everything else (and an escaped `*`/`?`) literal. */
export function wildcardRegex(chars: readonly PatternChar[], any: Regex = { t: 'any' }): Regex {
  const items: Regex[] = [];
  for (const part of chars) {
    if (!part.escaped && part.c === '*') {
      if (items.at(-1)?.t !== 'rep') items.push({ t: 'rep', item: any, min: 0, max: null });
    } else if (!part.escaped && part.c === '?') items.push(any);
    else for (const c of part.c) items.push({ t: 'char', c });
  }
  return { t: 'cat', items };
}

/** Wildcard text as Elasticsearch's `wildcard` query takes it: a backslash escapes the next character. */
export function wildcardChars(text: string): PatternChar[] {
  const chars: PatternChar[] = [];
  for (let i = 0; i < text.length; i += 1) {
    if (text[i] === '\\' && i + 1 < text.length) {
      chars.push({ c: text[i + 1]!, escaped: true });
      i += 1;
    } else chars.push({ c: text[i]!, escaped: false });
  }
  return chars;
}

const DIGIT: [number, number][] = [[0x30, 0x39]];
const WORD: [number, number][] = [
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
];
const SPACE: [number, number][] = [
  [0x09, 0x0d],
  [0x20, 0x20],
];
const SHORTHANDS = dict<{ ranges: [number, number][]; negated: boolean }>({
  d: { ranges: DIGIT, negated: false },
  D: { ranges: DIGIT, negated: true },
  w: { ranges: WORD, negated: false },
  W: { ranges: WORD, negated: true },
  s: { ranges: SPACE, negated: false },
  S: { ranges: SPACE, negated: true },
});

/** Lucene's optional operators (complement, intersection, numeric ranges, any string, empty language) and what we do not read. */
const REFUSED = new Set(['&', '~', '<', '>', '@', '#', '"', '^', '$']);

/**
 * A Lucene regular expression (`source` without its slashes; `offset` is where it starts in the
 * query): `.`, `[a-z]`, `[^...]`, `( )`, `|`, `*`, `+`, `?`, `{n}`, `{n,}`, `{n,m}`, `\d \w \s`
 * and `\` before any other character. It always matches the whole value. Anything else is a
 * QuerySyntaxError at its position.
 */
export function parseRegex(source: string, offset: number): Regex {
  if ([...source].length > MAX_PATTERN_LENGTH)
    throw new QuerySyntaxError(`regular expression longer than ${MAX_PATTERN_LENGTH} characters`, offset);
  const chars = [...source];
  // Positions in the query: UTF-16 offsets of each code point.
  const at: number[] = [];
  let utf16 = 0;
  for (const c of chars) {
    at.push(offset + utf16);
    utf16 += c.length;
  }
  at.push(offset + utf16);
  let i = 0;
  const fail = (message: string, index = i): never => {
    throw new QuerySyntaxError(message, at[Math.min(index, at.length - 1)]!);
  };

  const parseAlt = (depth: number): Regex => {
    if (depth > 32) fail('regular expression nested too deeply');
    const items = [parseCat(depth)];
    while (chars[i] === '|') {
      i += 1;
      items.push(parseCat(depth));
    }
    return items.length === 1 ? items[0]! : { t: 'alt', items };
  };
  const parseCat = (depth: number): Regex => {
    const items: Regex[] = [];
    while (i < chars.length && chars[i] !== '|' && chars[i] !== ')') items.push(parseRepeat(depth));
    return items.length === 1 ? items[0]! : { t: 'cat', items };
  };
  const number = (): number => {
    const start = i;
    while (i < chars.length && /[0-9]/.test(chars[i]!)) i += 1;
    if (start === i) fail('expected a number in {n,m}');
    const value = Number(chars.slice(start, i).join(''));
    if (value > MAX_REPEAT) fail(`a repetition count is at most ${MAX_REPEAT}`, start);
    return value;
  };
  const parseRepeat = (depth: number): Regex => {
    let item = parseAtom(depth);
    for (;;) {
      const c = chars[i];
      if (c === '*' || c === '+' || c === '?') {
        i += 1;
        item = { t: 'rep', item, min: c === '+' ? 1 : 0, max: c === '?' ? 1 : null };
      } else if (c === '{') {
        const open = i;
        i += 1;
        const min = number();
        let max: number | null = min;
        if (chars[i] === ',') {
          i += 1;
          max = chars[i] === '}' ? null : number();
        }
        if (chars[i] !== '}') fail("expected '}' to close the repetition", open);
        i += 1;
        if (max !== null && max < min) fail('a repetition {n,m} needs n <= m', open);
        item = { t: 'rep', item, min, max };
      } else return item;
    }
  };
  const parseAtom = (depth: number): Regex => {
    const c = chars[i];
    if (c === undefined) return fail('unexpected end of the regular expression');
    if (c === '(') {
      const open = i;
      i += 1;
      const inner = chars[i] === ')' ? ({ t: 'cat', items: [] } as Regex) : parseAlt(depth + 1);
      if (chars[i] !== ')') fail('unclosed parenthesis in the regular expression', open);
      i += 1;
      return inner;
    }
    if (c === '[') return parseClass();
    if (c === '.') {
      i += 1;
      return { t: 'any' };
    }
    if (c === '\\') {
      const next = chars[i + 1];
      if (next === undefined) fail('a backslash ends the regular expression');
      i += 2;
      const shorthand = SHORTHANDS[next!];
      return shorthand ? { t: 'class', ranges: shorthand.ranges, negated: shorthand.negated } : { t: 'char', c: next! };
    }
    if (c === '*' || c === '+' || c === '?' || c === '{') fail(`nothing to repeat before '${c}'`);
    if (c === ']' || c === '}') fail(`unmatched '${c}' in the regular expression (escape it as \\${c})`);
    if (REFUSED.has(c)) {
      fail(
        c === '^' || c === '$'
          ? `'${c}' is not an anchor here: a regular expression matches the whole value (escape it as \\${c})`
          : `the regular expression operator '${c}' is not supported (escape it as \\${c})`,
      );
    }
    i += 1;
    return { t: 'char', c };
  };
  const classChar = (): number => {
    let c = chars[i];
    if (c === undefined) fail('unclosed character class');
    if (c === '\\') {
      i += 1;
      c = chars[i];
      if (c === undefined) fail('unclosed character class');
    }
    i += 1;
    return c!.codePointAt(0)!;
  };
  const parseClass = (): Regex => {
    const open = i;
    i += 1;
    const negated = chars[i] === '^';
    if (negated) i += 1;
    const ranges: [number, number][] = [];
    while (chars[i] !== ']') {
      if (i >= chars.length) fail('unclosed character class', open);
      if (chars[i] === '[') fail("'[' inside a character class (escape it as \\[)");
      const lo = classChar();
      if (chars[i] === '-' && chars[i + 1] !== ']' && chars[i + 1] !== undefined) {
        i += 1;
        const hi = classChar();
        if (hi < lo) fail('a character range out of order', open);
        ranges.push([lo, hi]);
      } else ranges.push([lo, lo]);
    }
    i += 1;
    if (ranges.length === 0) fail('empty character class', open);
    return { t: 'class', ranges, negated };
  };

  const regex = parseAlt(0);
  if (i < chars.length) fail("unmatched ')' in the regular expression");
  return bounded(regex, offset);
}

/** The regex, once its automaton is known to be within MAX_STATES (else a QuerySyntaxError at `position`). */
export function bounded(regex: Regex, position: number): Regex {
  program(regex, position);
  return regex;
}

/** Edits a fuzzy term allows: `~` alone is Elasticsearch's AUTO (0 up to 2 characters, 1 up to 5, else 2). */
export function fuzzyEdits(term: string, requested: number | 'auto'): number {
  if (requested !== 'auto') return requested;
  const length = [...term].length;
  return length <= 2 ? 0 : length <= 5 ? 1 : 2;
}

/** A fuzzy term within the bounds (MAX_FUZZY_LENGTH); `position` for the error. */
export function fuzzyPattern(term: string, requested: number | 'auto', position: number): Pattern {
  if (requested !== 'auto' && !(Number.isInteger(requested) && requested >= 0 && requested <= 2))
    throw new QuerySyntaxError('a fuzzy term allows 0, 1 or 2 edits (term~, term~1, term~2)', position);
  if ([...term].length > MAX_FUZZY_LENGTH)
    throw new QuerySyntaxError(`a fuzzy term is at most ${MAX_FUZZY_LENGTH} characters long`, position);
  return { kind: 'fuzzy', term, edits: fuzzyEdits(term, requested) };
}

/**
 * A pattern as the program the SQLite function `gerbang_match` runs (pattern-match-source.ts),
 * JSON: a Thompson automaton, states [op, a, b] (op 0: a character of set a, then b; 1: split to a
 * and b; 2: match; 3: go to a), or a fuzzy term. `tokens`: the value is a message, matched when
 * one of its words matches.
 */
export function patternProgram(pattern: Pattern, tokens: boolean): string {
  if (pattern.kind === 'fuzzy') return JSON.stringify({ f: pattern.term, k: pattern.edits, tok: tokens ? 1 : 0 });
  return JSON.stringify({ ...program(pattern.regex, 0), tok: tokens ? 1 : 0 });
}

interface Program {
  s: number[];
  c: [number, number[]][];
  st: number;
}

function program(regex: Regex, position: number): Program {
  const states: number[] = [];
  const sets: [number, number[]][] = [];
  const add = (op: number, a: number, b: number): number => {
    if (states.length / 3 >= MAX_STATES)
      throw new QuerySyntaxError(`pattern too large (more than ${MAX_STATES} automaton states): use fewer repetitions`, position);
    states.push(op, a, b);
    return states.length / 3 - 1;
  };
  const setOf = (negated: boolean, ranges: [number, number][]): number => {
    sets.push([negated ? 1 : 0, ranges.flat()]);
    return sets.length - 1;
  };
  // Builds the states of `node` that continue at `next`; returns its first state.
  const build = (node: Regex, next: number): number => {
    switch (node.t) {
      case 'char': {
        const code = node.c.codePointAt(0)!;
        return add(0, setOf(false, [[code, code]]), next);
      }
      case 'any':
        return add(0, setOf(true, []), next);
      case 'class':
        return add(0, setOf(node.negated, node.ranges), next);
      case 'cat': {
        let first = next;
        for (let k = node.items.length - 1; k >= 0; k -= 1) first = build(node.items[k]!, first);
        return first;
      }
      case 'alt': {
        let first = build(node.items.at(-1)!, next);
        for (let k = node.items.length - 2; k >= 0; k -= 1) first = add(1, build(node.items[k]!, next), first);
        return first;
      }
      case 'rep': {
        let first = next;
        if (node.max === null) {
          // A loop: a split state that either enters the item (which returns to it) or leaves.
          const loop = add(1, -1, next);
          const body = build(node.item, loop);
          states[loop * 3 + 1] = body;
          first = loop;
        } else if (node.max > node.min) first = optionalChain(node, next);
        for (let k = 0; k < node.min; k += 1) first = build(node.item, first);
        return first;
      }
    }
  };
  // item{0,m}: m nested optionals, each skipping straight to `next`.
  const optionalChain = (node: Extract<Regex, { t: 'rep' }>, next: number): number => {
    let first = next;
    for (let k = node.max! - node.min; k > 0; k -= 1) first = add(1, build(node.item, first), next);
    return first;
  };
  const match = add(2, 0, 0);
  const start = build(regex, match);
  return { s: states, c: sets, st: start };
}

/**
 * The variants of a fuzzy term within its edits, as the optimal string alignment distance counts
 * them (insert, delete, substitute a character, or swap two adjacent characters of the term, each
 * part of the term edited once): each an array of characters and null (any one character).
 * postgresFuzzy writes short terms as their alternation; over MAX_VARIANTS they are refused.
 */
export const MAX_VARIANTS = 3_000;
export function fuzzyVariants(term: string, edits: number, position: number): (string | null)[][] {
  const chars = [...term];
  const seen = new Map<string, (string | null)[]>();
  const walk = (at: number, cost: number, made: (string | null)[]): void => {
    if (cost < edits) walk(at, cost + 1, [...made, null]);
    if (at === chars.length) {
      const id = key(made);
      if (!seen.has(id)) seen.set(id, made);
      if (seen.size > MAX_VARIANTS)
        throw new QuerySyntaxError(`fuzzy term too long for ${edits} edits: use ~1 or a shorter term`, position);
      return;
    }
    walk(at + 1, cost, [...made, chars[at]!]);
    if (cost === edits) return;
    walk(at + 1, cost + 1, [...made, null]);
    walk(at + 1, cost + 1, made);
    if (at + 1 < chars.length && chars[at] !== chars[at + 1]) walk(at + 2, cost + 1, [...made, chars[at + 1]!, chars[at]!]);
  };
  walk(0, 0, []);
  return [...seen.values()];
}

function key(variant: readonly (string | null)[]): string {
  return variant.map((c) => (c === null ? '\u0000' : c)).join('\u0001');
}

/** A character of a PostgreSQL regular expression: letters and digits as they are, anything else escaped. */
function areChar(c: string): string {
  return /^[\p{L}\p{N}]$/u.test(c) ? c : `\\${c}`;
}

/**
 * A Regex as a PostgreSQL (ARE) regular expression, unanchored; `any` is what `.` may match (a
 * message word's characters, or anything). Every character of the client is escaped or a letter.
 */
export function postgresRegex(regex: Regex, any: string): string {
  switch (regex.t) {
    case 'char':
      return areChar(regex.c);
    case 'any':
      return any;
    case 'class': {
      const body = regex.ranges
        .map(([lo, hi]) => {
          const from = areChar(String.fromCodePoint(lo));
          return lo === hi ? from : `${from}-${areChar(String.fromCodePoint(hi))}`;
        })
        .join('');
      return `[${regex.negated ? '^' : ''}${body}]`;
    }
    case 'cat':
      return regex.items.length === 0 ? '(?:)' : regex.items.map((item) => postgresRegex(item, any)).join('');
    case 'alt':
      return `(?:${regex.items.map((item) => postgresRegex(item, any)).join('|')})`;
    case 'rep': {
      const inner = `(?:${postgresRegex(regex.item, any)})`;
      if (regex.max === null) return regex.min === 0 ? `${inner}*` : regex.min === 1 ? `${inner}+` : `${inner}{${regex.min},}`;
      return regex.min === regex.max ? `${inner}{${regex.min}}` : `${inner}{${regex.min},${regex.max}}`;
    }
  }
}

/**
 * A fuzzy term as a PostgreSQL regular expression of the words within its edits; `any` as in
 * postgresRegex. The alternation of every variant grows with the square of the term's length for 2
 * edits, and PostgreSQL builds its automaton anew for each value it matches, so the term is split
 * in two instead: a word is within k edits when its two parts are within a and b edits of the
 * term's halves (a + b = k), or a swap joins the halves and the parts around it are within k - 1
 * (the optimal string alignment passes the middle of the term either way). Short terms are the
 * alternation of their variants. The expression grows as n log n.
 */
export function postgresFuzzy(term: string, edits: number, any: string): string {
  const memo = new Map<string, string>();
  const within = (chars: readonly string[], k: number): string => {
    const id = `${k}\u0000${chars.join('')}`;
    let found = memo.get(id);
    if (found !== undefined) return found;
    if (k === 0) found = chars.map(areChar).join('');
    else if (chars.length <= 3) {
      const variants = fuzzyVariants(chars.join(''), k, 0);
      found = `(?:${variants.map((variant) => variant.map((c) => (c === null ? any : areChar(c))).join('') || '(?:)').join('|')})`;
    } else {
      const middle = Math.floor(chars.length / 2);
      const [left, right] = [chars.slice(0, middle), chars.slice(middle)];
      const parts: string[] = [];
      for (let a = 0; a <= k; a += 1) parts.push(within(left, a) + within(right, k - a));
      if (chars[middle - 1] !== chars[middle]) {
        const swapped = areChar(chars[middle]!) + areChar(chars[middle - 1]!);
        for (let a = 0; a < k; a += 1)
          parts.push(within(chars.slice(0, middle - 1), a) + swapped + within(chars.slice(middle + 1), k - 1 - a));
      }
      found = `(?:${parts.join('|')})`;
    }
    memo.set(id, found);
    return found;
  };
  return within([...term], edits);
}
