import { isPlainObject } from '../../../shared/text/storable-text.js';
import { FIELD_NAME, parseQuery } from '../store/query/parser.js';
import { parsingError, shown, unsupported } from './elastic-errors.js';
import { dict } from '../../../shared/dict.js';

/**
 * Elasticsearch's query DSL (the subset in docs/elasticsearch.md) as our query language
 * (docs/log-search.md): one parser and one compiler serve both APIs. Ranges on `@timestamp` at the
 * top level also narrow the time range the store reads.
 */
export interface TranslatedQuery {
  /** Query-language text; '' matches everything. */
  query: string;
  /** Epoch ms, inclusive; undefined = unbounded. */
  from?: number | undefined;
  to?: number | undefined;
}

const TIME_FIELDS = new Set(['@timestamp', 'timestamp']);

/** `host.keyword` is `host`: every text field here is already a keyword (exact match, aggregatable). */
export function fieldName(name: string): string {
  const plain = name.endsWith('.keyword') ? name.slice(0, -'.keyword'.length) : name;
  if (!FIELD_NAME.test(plain)) throw unsupported(`the field name [${name.slice(0, 100)}]`);
  return plain;
}

function quoted(value: unknown): string {
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
    throw parsingError('a term value must be a string, a number or a boolean');
  }
  const text = String(value);
  if (text.trim() === '') throw parsingError('an empty term value matches nothing; leave the clause out');
  return `"${text.replace(/[\\"]/g, (char) => `\\${char}`)}"`;
}

/** Outside quotes a backslash makes the next character literal: every non-alphanumeric one is escaped. */
function escapedWord(value: string): string {
  return value.replace(/[^\p{L}\p{N}]/gu, (char) => `\\${char}`);
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

class Translator {
  from: number | undefined;
  to: number | undefined;
  #boolDepth = 0;

  constructor(private readonly now: number) {}

  /** `top`: the clause is ANDed into the whole query, so a time range may narrow the store's read. */
  clause(query: unknown, top: boolean): string {
    if (!isPlainObject(query)) throw parsingError('a query must be an object');
    const kinds = Object.keys(query);
    if (kinds.length !== 1) throw parsingError(`a query must have exactly one type, got [${kinds.join(', ')}]`);
    const kind = kinds[0]!;
    const body = query[kind];
    switch (kind) {
      case 'match_all':
        return '';
      case 'match_none':
        return 'NOT *';
      case 'bool':
        return this.bool(body, top);
      case 'query_string':
        return this.queryString(body);
      case 'term': {
        const [field, spec] = single(kind, body);
        return `${fieldName(field)}:${quoted(leafValue(spec))}`;
      }
      case 'terms': {
        const [field, values] = single(kind, body);
        if (!Array.isArray(values)) throw parsingError('[terms] query needs an array of values');
        if (values.length === 0) return 'NOT *';
        return values.map((value) => `${fieldName(field)}:${quoted(value)}`).join(' OR ');
      }
      case 'match':
      case 'match_phrase': {
        const [field, spec] = single(kind, body);
        const text = leafValue(spec, 'query');
        if (kind === 'match_phrase' || typeof text !== 'string') return `${fieldName(field)}:${quoted(text)}`;
        const operator = isPlainObject(spec) && typeof spec.operator === 'string' ? spec.operator.toUpperCase() : 'OR';
        if (operator !== 'OR' && operator !== 'AND') throw parsingError(`[match] operator must be and or or`);
        const words = text.split(/\s+/).filter((word) => word !== '');
        if (words.length === 0) return 'NOT *';
        return words.map((word) => `${fieldName(field)}:${quoted(word)}`).join(` ${operator} `);
      }
      case 'prefix': {
        const [field, spec] = single(kind, body);
        const value = leafValue(spec);
        if (typeof value !== 'string' || value === '') throw parsingError('[prefix] needs a non-empty string');
        return `${fieldName(field)}:${escapedWord(value)}*`;
      }
      case 'exists': {
        if (!isPlainObject(body) || typeof body.field !== 'string') throw parsingError('[exists] needs a field');
        return `_exists_:${fieldName(body.field)}`;
      }
      case 'ids': {
        if (!isPlainObject(body) || !Array.isArray(body.values)) throw parsingError('[ids] needs values');
        if (body.values.length === 0) return 'NOT *';
        return body.values.map((value) => `_id:${quoted(value)}`).join(' OR ');
      }
      case 'range':
        return this.range(body, top);
      default:
        throw unsupported(`the query [${kind.slice(0, 50)}]`);
    }
  }

  private bool(body: unknown, top: boolean): string {
    if (!isPlainObject(body)) throw parsingError('[bool] query malformed');
    if (this.#boolDepth >= MAX_BOOL_DEPTH) throw parsingError(`[bool] queries nest deeper than ${MAX_BOOL_DEPTH} levels`);
    this.#boolDepth += 1;
    try {
      return this.boolClauses(body, top);
    } finally {
      this.#boolDepth -= 1;
    }
  }

  private boolClauses(body: Record<string, unknown>, top: boolean): string {
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
    if (should.length > 0 && shown(minimum) === '1') required.push(should.map(group).join(' OR '));
    const excluded = clauses(body.must_not).map((clause) => `NOT ${group(this.clause(clause, false))}`);
    return [...required, ...excluded]
      .filter((part) => part !== '')
      .map(group)
      .join(' AND ');
  }

  private queryString(body: unknown): string {
    if (!isPlainObject(body) || typeof body.query !== 'string') throw parsingError('[query_string] needs a query');
    for (const [key, value] of Object.entries(body)) {
      if (['query', 'analyze_wildcard', 'lenient', 'boost', '_name', 'allow_leading_wildcard', 'time_zone'].includes(key)) continue;
      if (key === 'default_operator' && String(value).toUpperCase() === 'AND') continue;
      if (key === 'default_field' && (value === '*' || value === 'message')) continue;
      if (key === 'fields' && Array.isArray(value) && value.every((field) => field === '*' || field === 'message')) continue;
      throw unsupported(`the query_string option [${key.slice(0, 50)}] with this value`);
    }
    parseQuery(body.query); // a syntax error is reported with its position in the user's own text
    return body.query.trim();
  }

  private range(body: unknown, top: boolean): string {
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
      return quoted(value);
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
      return '';
    }
    const lower = gte ?? gt;
    const upper = lte ?? lt;
    if (lower === undefined && upper === undefined) return `_exists_:${field}`;
    return `${field}:${gte !== undefined ? '[' : '{'}${lower ?? '*'} TO ${upper ?? '*'}${lte !== undefined ? ']' : '}'}`;
  }
}

function group(part: string): string {
  return part === '' ? '*' : `(${part})`;
}

export function translateQuery(query: unknown, now: number): TranslatedQuery {
  if (query === undefined) return { query: '' };
  const translator = new Translator(now);
  const text = translator.clause(query, true);
  return { query: text, from: translator.from, to: translator.to };
}
