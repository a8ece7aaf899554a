/**
 * The Elasticsearch DSL builds a condition of the query language directly (query/elastic-dsl.ts):
 * no value a client sends is written into query text and parsed again. For values that are syntax
 * in the language (quotes, backslashes, `:`, `*`, parentheses, operators) and for field names with
 * dots or `__proto__`, the condition is the one the language gives the same query written as
 * escaped text (what the DSL used to produce), and the store finds exactly the same documents on
 * both dialects.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { dslSearch } from '../../../src/logs/modules/query/elastic-dsl.js';
import { toCondition } from '../../../src/logs/modules/query/condition.js';
import { DslError, QuerySyntaxError } from '../../../src/logs/modules/query/errors.js';
import { MAX_DEPTH, MAX_TERMS, parseQuery } from '../../../src/logs/modules/query/parser.js';
import type { LogEntry, LogStore } from '../../../src/logs/modules/store/index.js';
import { DIALECTS } from '../../helpers/databases.js';
import { openTestStore, T0, type TestStore } from '../store/helpers.js';

/** How a value is written in the language: quoted (a phrase), or as one word with everything but letters and digits escaped. */
const quoted = (value: string) => `"${value.replace(/[\\"]/g, (char) => `\\${char}`)}"`;
const word = (value: string) => value.replace(/[^\p{L}\p{N}]/gu, (char) => `\\${char}`);

/** `__proto__` as a name a client chose: an own property, as JSON.parse makes it. */
const PROTO_ATTRIBUTES = JSON.parse('{"__proto__": "polluted", "_index": "other"}') as Record<string, string>;

const DOCUMENTS: LogEntry[] = [
  { timestamp: T0 + 1, message: 'first', attributes: { 'k8s.pod.name': 'api "1"', q: 'a"b', _index: 'app.logs' } },
  { timestamp: T0 + 2, message: 'second', attributes: { path: 'C:\\temp\\', _index: 'weird:idx' } },
  { timestamp: T0 + 3, message: 'third (paren', attributes: { kv: 'key:value', _index: 'other' } },
  { timestamp: T0 + 4, message: 'fourth', attributes: { star: '*', _index: 'other' } },
  { timestamp: T0 + 5, message: 'fifth', attributes: PROTO_ATTRIBUTES },
  { timestamp: T0 + 6, message: 'sixth', attributes: { paren: '(a OR b)', op: 'OR', _index: 'other' } },
];

interface Case {
  name: string;
  /** The request: its `query` and index pattern. */
  query: unknown;
  index?: string;
  /** The same search as query text with every value escaped (what the DSL was translated to before). */
  text: string;
  /** The messages of the documents it finds. */
  finds: string[];
}

const CASES: Case[] = [
  { name: 'a quote', query: { term: { q: 'a"b' } }, text: `q:${quoted('a"b')}`, finds: ['first'] },
  {
    name: 'a dotted field name and a quoted value',
    query: { term: { 'k8s.pod.name.keyword': 'api "1"' } },
    text: `k8s.pod.name:${quoted('api "1"')}`,
    finds: ['first'],
  },
  { name: 'backslashes', query: { term: { path: 'C:\\temp\\' } }, text: `path:${quoted('C:\\temp\\')}`, finds: ['second'] },
  {
    name: 'a prefix with a colon and a backslash',
    query: { prefix: { path: 'C:\\te' } },
    text: `path:${word('C:\\te')}*`,
    finds: ['second'],
  },
  { name: 'a colon', query: { term: { kv: 'key:value' } }, text: `kv:${quoted('key:value')}`, finds: ['third (paren'] },
  { name: 'a prefix ending in a colon', query: { prefix: { kv: 'key:' } }, text: `kv:${word('key:')}*`, finds: ['third (paren'] },
  { name: 'a star is a value, not everything', query: { term: { star: '*' } }, text: `star:${quoted('*')}`, finds: ['fourth'] },
  { name: 'a prefix of a star', query: { prefix: { star: '*' } }, text: `star:${word('*')}*`, finds: ['fourth'] },
  {
    name: 'parentheses and operators in a value',
    query: { term: { paren: '(a OR b)' } },
    text: `paren:${quoted('(a OR b)')}`,
    finds: ['sixth'],
  },
  { name: 'an operator as a value', query: { terms: { op: ['OR', 'AND'] } }, text: `op:"OR" OR op:"AND"`, finds: ['sixth'] },
  {
    name: 'a phrase with a parenthesis',
    query: { match_phrase: { message: 'third (paren' } },
    text: `message:${quoted('third (paren')}`,
    finds: ['third (paren'],
  },
  {
    name: '__proto__ as a field',
    query: JSON.parse('{"term": {"__proto__": "polluted"}}'),
    text: `__proto__:"polluted"`,
    finds: ['fifth'],
  },
  { name: '__proto__ exists', query: { exists: { field: '__proto__' } }, text: `_exists_:__proto__`, finds: ['fifth'] },
  {
    name: 'a range with a colon in its bounds',
    query: { range: { kv: { gte: 'key:', lte: 'key:zzz' } } },
    text: `kv:[${quoted('key:')} TO ${quoted('key:zzz')}]`,
    finds: ['third (paren'],
  },
  {
    name: 'NOT a star value',
    query: { bool: { must_not: [{ term: { star: '*' } }] } },
    text: `(NOT (star:${quoted('*')}))`,
    finds: ['first', 'second', 'third (paren', 'fifth', 'sixth'],
  },
  {
    name: 'an index name with a colon',
    query: { match_all: {} },
    index: 'weird:idx',
    text: `_index:${word('weird:idx')}`,
    finds: ['second'],
  },
  { name: 'an index pattern with a dot', query: undefined, index: 'app.*', text: `_index:${word('app.')}*`, finds: ['first'] },
  { name: 'a wildcard', query: { wildcard: { kv: { value: 'key?val*' } } }, text: 'kv:key?val*', finds: ['third (paren'] },
  { name: 'a wildcard with an escaped star', query: { wildcard: { star: '\\*' } }, text: 'star:\\*', finds: ['fourth'] },
  { name: 'a regexp', query: { regexp: { path: { value: 'C:.temp.*', flags: 'ALL' } } }, text: 'path:/C:.temp.*/', finds: ['second'] },
  { name: 'a fuzzy term', query: { fuzzy: { message: { value: 'secnod', fuzziness: 2 } } }, text: 'secnod~2', finds: ['second'] },
  { name: 'a fuzzy term, AUTO', query: { fuzzy: { message: 'fift' } }, text: 'fift~', finds: ['fifth'] },
  {
    name: 'a match with fuzziness',
    query: { match: { message: { query: 'frist thrid', fuzziness: 'AUTO' } } },
    text: 'frist~ OR thrid~',
    finds: ['first', 'third (paren'],
  },
  {
    name: 'query_string with boosts, wildcards and a field group',
    query: { query_string: { query: 'message:(fir?t OR sixth^2)^3', fuzziness: 'AUTO' } },
    text: 'message:fir?t OR message:sixth',
    finds: ['first', 'sixth'],
  },
];

describe('Elasticsearch DSL as a condition', () => {
  test('values stay values: the condition holds them as sent, with no escaping', () => {
    assert.deepEqual(dslSearch({ query: { term: { q: 'a"b\\' } }, index: undefined }, 0).condition, {
      kind: 'equals',
      field: { kind: 'attribute', name: 'q' },
      value: 'a"b\\',
    });
    assert.deepEqual(dslSearch({ query: JSON.parse('{"prefix": {"__proto__": "(x:*"}}'), index: undefined }, 0).condition, {
      kind: 'prefix',
      field: { kind: 'attribute', name: '__proto__' },
      value: '(x:*',
    });
  });

  test('the condition is the one of the same query written as escaped text', () => {
    for (const { name, query, index, text } of CASES) {
      assert.deepEqual(dslSearch({ query, index }, 0).condition, toCondition(parseQuery(text)), name);
    }
  });

  test("the parser's bounds hold for a query built from the DSL: terms, and the depth of NOTs and groups", () => {
    const values = (count: number) => Array.from({ length: count }, (_, index) => `v${index}`);
    assert.doesNotThrow(() => dslSearch({ query: { terms: { a: values(MAX_TERMS) } }, index: undefined }, 0));
    assert.throws(
      () => dslSearch({ query: { terms: { a: values(MAX_TERMS + 1) } }, index: undefined }, 0),
      (error) => error instanceof QuerySyntaxError && /more than 100 terms/.test(error.message),
    );
    // A must_not around a query_string that is as deep as the parser allows on its own.
    const negated = (nots: number) => ({ bool: { must_not: [{ query_string: { query: `${'NOT '.repeat(nots)}a` } }] } });
    assert.doesNotThrow(() => dslSearch({ query: negated(MAX_DEPTH - 1), index: undefined }, 0));
    assert.throws(
      () => dslSearch({ query: negated(MAX_DEPTH), index: undefined }, 0),
      (error) => error instanceof QuerySyntaxError && /nested deeper than 32/.test(error.message),
    );
  });

  test('options that would change the answer and are not supported are refused, never ignored', () => {
    const refused = (query: unknown, reason: RegExp) =>
      assert.throws(
        () => dslSearch({ query, index: undefined }, 0),
        (error) => (error instanceof DslError || error instanceof QuerySyntaxError) && reason.test(error.message),
        JSON.stringify(query),
      );
    refused({ term: { level: { value: 'ERROR', case_insensitive: true } } }, /case_insensitive/);
    refused({ wildcard: { host: { value: 'H*', case_insensitive: true } } }, /case_insensitive/);
    refused({ fuzzy: { message: { value: 'x', prefix_length: 2 } } }, /prefix_length/);
    refused({ fuzzy: { message: { value: 'timeout', fuzziness: 3 } } }, /fuzziness/);
    refused({ fuzzy: { message: { value: 'timeout', fuzziness: 'AUTO:3,6' } } }, /fuzziness/);
    refused({ match: { message: { query: 'x', analyzer: 'standard' } } }, /analyzer/);
    refused({ match_phrase: { message: { query: 'a b', slop: 2 } } }, /slop/);
    refused({ regexp: { host: '^h.*' } }, /anchor/);
    refused({ regexp: { host: 'h&x' } }, /operator '&'/);
    refused({ regexp: { message: 'time.*' } }, /keyword fields/);
    refused({ query_string: { query: 'a', fuzziness: 1 } }, /fuzziness/);
    refused({ fuzzy: { message: { value: 'frist', transpositions: false } } }, /transpositions/);
    refused({ match: { message: { query: 'frist', fuzziness: 1, fuzzy_transpositions: false } } }, /transpositions/);
    refused({ query_string: { query: 'frist~1', fuzzy_transpositions: false } }, /transpositions/);
  });

  test('a field name with a space is refused, as before', () => {
    assert.throws(
      () => dslSearch({ query: { term: { 'my field': 'x' } }, index: undefined }, 0),
      (error) => error instanceof DslError && error.kind === 'unsupported' && /my field/.test(error.message),
    );
  });

  for (const dialect of DIALECTS) {
    describe(dialect, () => {
      let handle: TestStore;
      let store: LogStore;
      before(async () => {
        handle = await openTestStore(dialect);
        store = handle.store;
        await store.append('acme', DOCUMENTS);
      });
      after(async () => handle.close());

      test('each query finds exactly its documents', async () => {
        for (const { name, query, index, finds } of CASES) {
          const { condition } = dslSearch({ query, index }, 0);
          const result = await store.search({ tenantId: 'acme', condition, from: T0, to: T0 + 10, page: 1, limit: 10 });
          assert.deepEqual(result.entries.map((entry) => entry.message).sort(), [...finds].sort(), name);
        }
      });
    });
  }
});
