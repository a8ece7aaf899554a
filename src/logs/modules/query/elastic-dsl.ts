import { isPlainObject } from '../../../shared/text/storable-text.js';
import { dict } from '../../../shared/dict.js';
import { joined, type QueryNode, type RangeBound } from './ast.js';
import { toCondition, type Condition } from './condition.js';
import { DslError } from './errors.js';
import { FIELD_NAME, parseQuery, withinBounds } from './parser.js';
import { hasWildcard, wildcardChars } from './patterns.js';

/**
 * Elasticsearch's query DSL (the subset in docs/elasticsearch.md) as a query of our language
 * (docs/log-search.md): the DSL builds the same AST the parser builds, so one condition and one
 * compiler serve both APIs, and no value the client sent is ever read as query syntax. Ranges on
 * `@timestamp` at the top level also narrow the time range the store reads.
 */
export interface DslSearch {
  condition: Condition;
  /** Epoch ms, inclusive; undefined = unbounded. */
  from?: number | undefined;
  to?: number | undefined;
}

const TIME_FIELDS = new Set(['@timestamp', 'timestamp']);
const NOTHING: QueryNode = { kind: 'not', child: { kind: 'all' } };

const parsingError = (reason: string) => new DslError('parsing', reason);
const unsupported = (what: string) => new DslError('unsupported', what);

/** A value of a request as error text: strings as they are, anything else as JSON, cut short. */
export function shown(value: unknown): string {
  return (typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value))).slice(0, 100);
}

/** `host.keyword` is `host`: every text field here is already a keyword (exact match, aggregatable). */
export function fieldName(name: string): string {
  const plain = name.endsWith('.keyword') ? name.slice(0, -'.keyword'.length) : name;
  if (!FIELD_NAME.test(plain)) throw unsupported(`the field name [${name.slice(0, 100)}]`);
  return plain;
}

/** A term's value as text: a string, a number or a boolean, not blank. */
function termText(value: unknown): string {
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
    throw parsingError('a term value must be a string, a number or a boolean');
  }
  const text = String(value);
  if (text.trim() === '') throw parsingError('an empty term value matches nothing; leave the clause out');
  return text;
}

/** `field:"value"`: an exact match (a phrase, on the message). */
function phrase(field: string, value: unknown): QueryNode {
  return { kind: 'term', field, value: termText(value), match: 'phrase', position: 0 };
}

/** One alternative per value; none matches nothing. */
function anyOf(nodes: QueryNode[]): QueryNode {
  return nodes.length === 0 ? NOTHING : joined('or', nodes);
}

function clauses(value: unknown): unknown[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/** The one `{field: spec}` pair of a leaf query such as term or range. */
function single(kind: string, body: unknown, extraKeys: readonly string[] = ['boost', '_name']): [string, unknown] {
  if (!isPlainObject(body)) throw parsingError(`[${kind}] query malformed, no start_object`);
  const entries = Object.entries(body).filter(([key]) => !extraKeys.includes(key));
  if (entries.length !== 1) throw parsingError(`[${kind}] query must name exactly one field`);
  return entries[0]!;
}

/**
 * The options of a leaf query's `{field: {...}}` beside its value: `allowed` and boost/_name (scoring
 * and naming only). Any other is refused rather than ignored, and so is `case_insensitive: true`.
 */
function options(kind: string, spec: unknown, allowed: readonly string[]): void {
  if (!isPlainObject(spec)) return;
  for (const key of Object.keys(spec)) {
    if (key !== 'boost' && key !== '_name' && !allowed.includes(key)) throw unsupported(`the [${kind}] option [${key.slice(0, 50)}]`);
  }
  if (spec.case_insensitive !== undefined && spec.case_insensitive !== false)
    throw unsupported(`[${kind}] case_insensitive (values match as stored; level is lower case)`);
  if (spec.prefix_length !== undefined && spec.prefix_length !== 0) throw unsupported(`[${kind}] prefix_length other than 0`);
  noSwapOption(kind, spec.transpositions ?? spec.fuzzy_transpositions);
}

/** A swap of neighbours is one edit here, as by Elasticsearch's default: `false` would ask for two. */
function noSwapOption(kind: string, value: unknown): void {
  if (value !== undefined && value !== true)
    throw unsupported(`[${kind}] transpositions other than true (a swap of neighbours is one edit)`);
}

const MATCH_OPTIONS = [
  'query',
  'operator',
  'lenient',
  'zero_terms_query',
  'auto_generate_synonyms_phrase_query',
  'fuzziness',
  'prefix_length',
  'max_expansions',
  'fuzzy_transpositions',
  'fuzzy_rewrite',
];

/** query_string options that change scoring, or what this store does anyway. */
const QUERY_STRING_IGNORED = [
  'query',
  'analyze_wildcard',
  'lenient',
  'boost',
  '_name',
  'allow_leading_wildcard',
  'time_zone',
  'fuzzy_max_expansions',
  'fuzzy_rewrite',
  'rewrite',
  'max_determinized_states',
  'auto_generate_synonyms_phrase_query',
];

/** Elasticsearch's `fuzziness`: AUTO, or 0, 1, 2 edits (number or string). */
function fuzziness(value: unknown): number | 'auto' {
  if (value === undefined || value === 'AUTO' || value === 'auto') return 'auto';
  if (value === 0 || value === 1 || value === 2 || value === '0' || value === '1' || value === '2') return Number(value);
  throw unsupported(`the fuzziness [${shown(value)}] (AUTO, 0, 1 or 2)`);
}

/** `{value: x}` or x. */
function leafValue(spec: unknown, key = 'value'): unknown {
  return isPlainObject(spec) ? spec[key] : spec;
}

const UNITS = dict<number>({ s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 });

/** A date as Elasticsearch takes it: epoch ms (or seconds with format epoch_second), ISO 8601, or `now-15m` (units s m h d w; rounding `/s` to `/d`). */
export function dateValue(value: unknown, format: unknown, now: number, roundUp: boolean): number {
  if (typeof value === 'number') return format === 'epoch_second' ? value * 1000 : value;
  if (typeof value !== 'string') throw parsingError('a date must be a number or a string');
  if (/^\d+$/.test(value)) return Number(value) * (format === 'epoch_second' ? 1000 : 1);
  const math = /^now((?:[+-]\d+[smhdw])*)(?:\/([smhd]))?$/.exec(value);
  if (math) {
    let time = now;
    for (const [, sign, amount, unit] of math[1]!.matchAll(/([+-])(\d+)([smhdw])/g)) {
      time += (sign === '-' ? -1 : 1) * Number(amount) * UNITS[unit!]!;
    }
    if (math[2]) {
      const size = UNITS[math[2]]!;
      time = Math.floor(time / size) * size + (roundUp ? size - 1 : 0);
    }
    return time;
  }
  if (value.startsWith('now')) throw unsupported(`the date math [${value.slice(0, 50)}] (units M and y, rounding by w, M, y)`);
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw parsingError(`failed to parse date field [${value.slice(0, 50)}]`);
  return ms;
}

/** Elasticsearch's `indices.query.bool.max_nested_depth`: deeper `bool`s are a client error there too. */
export const MAX_BOOL_DEPTH = 20;

/**
 * Clauses as AST nodes; null for a clause that constrains nothing (match_all, an empty bool, a
 * top-level time range): it is left out of a conjunction and means everything elsewhere.
 */
class Translator {
  from: number | undefined;
  to: number | undefined;
  #boolDepth = 0;

  constructor(private readonly now: number) {}

  /** `top`: the clause is ANDed into the whole query, so a time range may narrow the store's read. */
  clause(query: unknown, top: boolean): QueryNode | null {
    if (!isPlainObject(query)) throw parsingError('a query must be an object');
    const kinds = Object.keys(query);
    if (kinds.length !== 1) throw parsingError(`a query must have exactly one type, got [${kinds.join(', ')}]`);
    const kind = kinds[0]!;
    const body = query[kind];
    switch (kind) {
      case 'match_all':
        return null;
      case 'match_none':
        return NOTHING;
      case 'bool':
        return this.bool(body, top);
      case 'query_string':
        return this.queryString(body);
      case 'term': {
        const [field, spec] = single(kind, body);
        options(kind, spec, ['value', 'case_insensitive']);
        return phrase(fieldName(field), leafValue(spec));
      }
      case 'wildcard': {
        const [field, spec] = single(kind, body);
        options(kind, spec, ['value', 'wildcard', 'case_insensitive', 'rewrite']);
        const value = isPlainObject(spec) ? (spec.value ?? spec.wildcard) : spec;
        if (typeof value !== 'string' || value === '') throw parsingError('[wildcard] needs a non-empty string');
        const chars = wildcardChars(value);
        // Without a `*` or `?`, the value itself (a backslash still escapes).
        if (!hasWildcard(chars)) return phrase(fieldName(field), chars.map((part) => part.c).join(''));
        return { kind: 'term', field: fieldName(field), value, match: 'wildcard', position: 0 };
      }
      case 'regexp': {
        const [field, spec] = single(kind, body);
        options(kind, spec, ['value', 'flags', 'case_insensitive', 'max_determinized_states', 'rewrite']);
        const value = leafValue(spec);
        if (typeof value !== 'string') throw parsingError('[regexp] needs a string');
        return { kind: 'term', field: fieldName(field), value, match: 'regex', position: 0 };
      }
      case 'fuzzy': {
        const [field, spec] = single(kind, body);
        options(kind, spec, ['value', 'fuzziness', 'max_expansions', 'prefix_length', 'transpositions', 'rewrite']);
        const edits = fuzziness(isPlainObject(spec) ? spec.fuzziness : undefined);
        return { kind: 'term', field: fieldName(field), value: termText(leafValue(spec)), match: 'fuzzy', edits, position: 0 };
      }
      case 'terms': {
        const [field, values] = single(kind, body);
        if (!Array.isArray(values)) throw parsingError('[terms] query needs an array of values');
        return anyOf(values.map((value) => phrase(fieldName(field), value)));
      }
      case 'match':
      case 'match_phrase': {
        const [field, spec] = single(kind, body);
        options(kind, spec, kind === 'match' ? MATCH_OPTIONS : ['query', 'slop', 'zero_terms_query']);
        if (isPlainObject(spec) && spec.slop !== undefined && spec.slop !== 0)
          throw unsupported('[match_phrase] slop (phrases match exactly)');
        const text = leafValue(spec, 'query');
        if (kind === 'match_phrase' || typeof text !== 'string') return phrase(fieldName(field), text);
        const operator = isPlainObject(spec) && typeof spec.operator === 'string' ? spec.operator.toUpperCase() : 'OR';
        if (operator !== 'OR' && operator !== 'AND') throw parsingError(`[match] operator must be and or or`);
        const words = text.split(/\s+/).filter((word) => word !== '');
        if (words.length === 0) return NOTHING;
        // With `fuzziness`, each word is a fuzzy term (on the message: each of its words, tokenize.ts).
        const edits = isPlainObject(spec) && spec.fuzziness !== undefined ? fuzziness(spec.fuzziness) : undefined;
        return joined(
          operator === 'AND' ? 'and' : 'or',
          words.map((word) =>
            edits === undefined
              ? phrase(fieldName(field), word)
              : { kind: 'term', field: fieldName(field), value: word, match: 'fuzzy', edits, position: 0 },
          ),
        );
      }
      case 'prefix': {
        const [field, spec] = single(kind, body);
        options(kind, spec, ['value', 'case_insensitive', 'rewrite']);
        const value = leafValue(spec);
        if (typeof value !== 'string' || value === '') throw parsingError('[prefix] needs a non-empty string');
        return { kind: 'term', field: fieldName(field), value, match: 'prefix', position: 0 };
      }
      case 'exists': {
        if (!isPlainObject(body) || typeof body.field !== 'string') throw parsingError('[exists] needs a field');
        return { kind: 'exists', field: fieldName(body.field), position: 0 };
      }
      case 'ids': {
        if (!isPlainObject(body) || !Array.isArray(body.values)) throw parsingError('[ids] needs values');
        return anyOf(body.values.map((value) => phrase('_id', value)));
      }
      case 'range':
        return this.range(body, top);
      default:
        throw unsupported(`the query [${kind.slice(0, 50)}]`);
    }
  }

  private bool(body: unknown, top: boolean): QueryNode | null {
    if (!isPlainObject(body)) throw parsingError('[bool] query malformed');
    if (this.#boolDepth >= MAX_BOOL_DEPTH) throw parsingError(`[bool] queries nest deeper than ${MAX_BOOL_DEPTH} levels`);
    this.#boolDepth += 1;
    try {
      return this.boolClauses(body, top);
    } finally {
      this.#boolDepth -= 1;
    }
  }

  private boolClauses(body: Record<string, unknown>, top: boolean): QueryNode | null {
    for (const key of Object.keys(body)) {
      if (!['must', 'filter', 'should', 'must_not', 'minimum_should_match', 'boost', '_name'].includes(key)) {
        throw unsupported(`the bool option [${key.slice(0, 50)}]`);
      }
    }
    const required = [...clauses(body.must), ...clauses(body.filter)].map((clause) => this.clause(clause, top));
    const should = clauses(body.should).map((clause) => this.clause(clause, false));
    const minimum = body.minimum_should_match ?? (required.length === 0 ? 1 : 0);
    if (should.length > 0 && minimum !== 0 && minimum !== 1 && minimum !== '1' && minimum !== '0') {
      throw unsupported(`minimum_should_match [${shown(minimum)}] (only 0 and 1)`);
    }
    // With required clauses and no minimum, `should` only scores in Elasticsearch: it filters nothing.
    if (should.length > 0 && shown(minimum) === '1') required.push(joined('or', should.map(everythingIfNull)));
    const excluded = clauses(body.must_not).map((clause): QueryNode => ({
      kind: 'not',
      child: everythingIfNull(this.clause(clause, false)),
    }));
    return allOf([...required, ...excluded]);
  }

  private queryString(body: unknown): QueryNode | null {
    if (!isPlainObject(body) || typeof body.query !== 'string') throw parsingError('[query_string] needs a query');
    for (const [key, value] of Object.entries(body)) {
      if (QUERY_STRING_IGNORED.includes(key)) continue;
      if (key === 'fuzziness' && fuzziness(value) === 'auto') continue;
      if (key === 'fuzzy_prefix_length' && value === 0) continue;
      if (key === 'fuzzy_transpositions') {
        noSwapOption('query_string', value);
        continue;
      }
      if (key === 'default_operator' && String(value).toUpperCase() === 'AND') continue;
      if (key === 'default_field' && (value === '*' || value === 'message')) continue;
      if (key === 'fields' && Array.isArray(value) && value.every((field) => field === '*' || field === 'message')) continue;
      throw unsupported(`the query_string option [${key.slice(0, 50)}] with this value`);
    }
    return typedQuery(body.query);
  }

  private range(body: unknown, top: boolean): QueryNode | null {
    const [rawField, spec] = single('range', body);
    if (!isPlainObject(spec)) throw parsingError('[range] query malformed');
    const field = fieldName(rawField);
    const time = TIME_FIELDS.has(field);
    for (const key of Object.keys(spec)) {
      if (!['gte', 'gt', 'lte', 'lt', 'format', 'boost', 'time_zone'].includes(key))
        throw unsupported(`the range option [${key.slice(0, 50)}]`);
    }
    if (spec.time_zone !== undefined && !['UTC', 'Z', '+00:00', 'Etc/UTC'].includes(shown(spec.time_zone))) {
      throw unsupported(`the time_zone [${shown(spec.time_zone).slice(0, 50)}] (dates are UTC)`);
    }
    const bound = (value: unknown, roundUp: boolean): string | undefined => {
      if (value === undefined || value === null) return undefined;
      if (time) return String(dateValue(value, spec.format, this.now, roundUp));
      if (typeof value === 'number') return String(value);
      return termText(value);
    };
    const gte = bound(spec.gte, false);
    const gt = bound(spec.gt, true);
    const lte = bound(spec.lte, true);
    const lt = bound(spec.lt, false);
    if (time && top) {
      const lower = gte !== undefined ? Number(gte) : gt !== undefined ? Number(gt) + 1 : undefined;
      const upper = lte !== undefined ? Number(lte) : lt !== undefined ? Number(lt) - 1 : undefined;
      if (lower !== undefined) this.from = Math.max(this.from ?? lower, lower);
      if (upper !== undefined) this.to = Math.min(this.to ?? upper, upper);
      return null;
    }
    const lower = gte ?? gt;
    const upper = lte ?? lt;
    if (lower === undefined && upper === undefined) return { kind: 'exists', field, position: 0 };
    const edge = (value: string | undefined, inclusive: boolean): RangeBound | null => (value === undefined ? null : { value, inclusive });
    return { kind: 'range', field, lower: edge(lower, gte !== undefined), upper: edge(upper, lte !== undefined), position: 0 };
  }
}

function everythingIfNull(node: QueryNode | null): QueryNode {
  return node ?? { kind: 'all' };
}

/** The clauses that constrain something, ANDed; null when none does. */
function allOf(nodes: readonly (QueryNode | null)[]): QueryNode | null {
  const present = nodes.filter((node): node is QueryNode => node !== null);
  return present.length === 0 ? null : joined('and', present);
}

/** A query the client typed in our language (query_string, `q=`); blank constrains nothing. Syntax errors carry positions in its own text. */
function typedQuery(text: string): QueryNode | null {
  const node = parseQuery(text);
  return text.trim() === '' ? null : node;
}

/**
 * The index part of a path or an msearch header as a query on the `_index` field (kept at ingestion):
 * `*`, `_all` or none = every entry of the tenant (null); `name`, `prefix*` and comma lists select by `_index`.
 */
export function indexQuery(index: string | string[] | undefined): QueryNode | null {
  const names = (Array.isArray(index) ? index : (index ?? '').split(',')).map((name) => name.trim()).filter((name) => name !== '');
  if (names.length === 0 || names.some((name) => name === '*' || name === '_all')) return null;
  return joined(
    'or',
    names.map((name): QueryNode => {
      if (name.startsWith('-')) throw unsupported(`excluding an index [${name.slice(0, 100)}]`);
      const star = name.indexOf('*');
      if (star !== -1 && star !== name.length - 1) throw unsupported(`the index pattern [${name.slice(0, 100)}] (a * only at the end)`);
      const value = star === -1 ? name : name.slice(0, -1);
      return { kind: 'term', field: '_index', value, match: star === -1 ? 'word' : 'prefix', position: 0 };
    }),
  );
}

/**
 * What a `_search` (or one search of `_msearch`) asks for: its body's `query`, the `q` URL parameter
 * and the index pattern, ANDed, within the parser's bounds on terms and nesting.
 */
export function dslSearch(
  request: { query: unknown; q?: string | undefined; index: string | string[] | undefined },
  now: number,
): DslSearch {
  const translator = new Translator(now);
  const query = request.query === undefined ? null : translator.clause(request.query, true);
  const q = request.q === undefined ? null : typedQuery(request.q);
  const node = allOf([query, q, indexQuery(request.index)]) ?? { kind: 'all' };
  return { condition: toCondition(withinBounds(node)), from: translator.from, to: translator.to };
}
