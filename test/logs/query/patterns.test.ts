/**
 * The pattern engines (query/patterns.ts, query/pattern-match-source.ts) agree with each other and
 * with V8's RegExp on the corners of the syntax: classes with `]`, `-`, `^` and `\`, escaped
 * braces, empty alternatives, code points beyond the BMP, newlines; the Thompson automaton never
 * backtracks (a pattern that takes a backtracking engine exponential time answers at once); and
 * fuzzy terms count a swap of neighbours as one edit.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { fuzzyPattern, parseRegex, patternProgram, postgresFuzzy, postgresRegex } from '../../../src/logs/modules/query/patterns.js';
import { patternMatch } from '../../../src/logs/modules/query/pattern-match-source.js';
import { QuerySyntaxError } from '../../../src/logs/modules/query/errors.js';
import { describeOnPostgres } from '../../helpers/databases.js';
import { patternTest } from '../store/oracle.js';

const CASES: [string, string[]][] = [
  ['[\\]\\-^]x', [']x', '-x', '^x', 'ax', '\\x']],
  ['a\\{2\\}', ['a{2}', 'aa']],
  ['[\\[]', ['[', 'a']],
  ['é.', ['éa', 'ea', 'é\n']],
  ['[ -/]+', [' !/', 'a']],
  ['\\\\d', ['\\d', '1']],
  ['\\d+\\s\\w', ['12 a', '12\ta', '1 é']],
  ['(a|)b', ['b', 'ab', 'aab']],
  ['.*', ['', 'x\ny']],
  ['😀+', ['😀😀', 'x', '😀a']],
  ['[😀-😂]', ['😁', 'a']],
  ['a{0}', ['', 'a']],
  ['(ab){1,2}c?', ['ab', 'ababc', 'abab', 'abc', 'abababc']],
  ['[^a-c]x', ['dx', 'bx', '\nx']],
];

const regexMatch = (source: string, value: string) =>
  patternMatch(patternProgram({ kind: 'regex', regex: parseRegex(source, 0) }, false), value);

test('the automaton answers as V8 does on the corners of the syntax', () => {
  for (const [source, values] of CASES) {
    const pattern = { kind: 'regex' as const, regex: parseRegex(source, 0) };
    const v8 = patternTest(pattern);
    for (const value of values) assert.equal(regexMatch(source, value) === 1, v8(value), `${source} on ${JSON.stringify(value)}`);
  }
});

test('no backtracking: nested repetitions over a long value answer at once', { timeout: 20_000 }, () => {
  const long = 'a'.repeat(20_000);
  assert.equal(regexMatch('(a*)*b', long), 0);
  assert.equal(regexMatch('(a|aa)+c', long), 0);
  assert.equal(regexMatch('(a|a)*', long), 1);
});

test('fuzzy: insert, delete, substitute, swap of neighbours; AUTO by length; bounds refused with the position', () => {
  const fuzzy = (term: string, edits: number, value: string) => patternMatch(JSON.stringify({ f: term, k: edits, tok: 0 }), value) === 1;
  assert.ok(fuzzy('first', 1, 'frist'));
  assert.ok(fuzzy('first', 1, 'firs'));
  assert.ok(fuzzy('first', 1, 'firsts'));
  assert.ok(fuzzy('first', 1, 'fxyst') === false);
  assert.ok(fuzzy('ca', 2, 'abc') === false, 'optimal string alignment: a swapped pair is not edited again');
  assert.deepEqual(fuzzyPattern('ab', 'auto', 0), { kind: 'fuzzy', term: 'ab', edits: 0 });
  assert.deepEqual(fuzzyPattern('abcde', 'auto', 0), { kind: 'fuzzy', term: 'abcde', edits: 1 });
  assert.deepEqual(fuzzyPattern('abcdef', 'auto', 0), { kind: 'fuzzy', term: 'abcdef', edits: 2 });
  assert.throws(
    () => fuzzyPattern('x'.repeat(33), 2, 7),
    (error) => error instanceof QuerySyntaxError && error.position === 7,
  );
  assert.throws(
    () => parseRegex('(a{100}){100}'.repeat(1), 3),
    (error) => error instanceof QuerySyntaxError && error.position === 3 && /automaton states/.test(error.message),
  );
});

describeOnPostgres('PostgreSQL answers as the automaton does', () => {
  test('regular expressions and fuzzy terms, as compile-postgres.ts writes them', async () => {
    const client = new pg.Client(process.env.TEST_POSTGRES_URL);
    await client.connect();
    try {
      const pgMatch = async (expression: string, value: string) =>
        (await client.query<{ m: boolean }>('SELECT ($1::text COLLATE "C") ~ $2::text AS m', [value, `^(?:${expression})$`])).rows[0]!.m;
      for (const [source, values] of CASES) {
        const expression = postgresRegex(parseRegex(source, 0), '.');
        for (const value of values)
          assert.equal(await pgMatch(expression, value), regexMatch(source, value) === 1, `${source} on ${JSON.stringify(value)}`);
      }
      for (const [term, edits, values] of [
        ['timeout', 2, ['timeout', 'tiemout', 'tiemotu', 'timeo', 'imeou', 'timeouts', 'xtimeoutx', 'timed', 'tmieotu']],
        ['connection', 1, ['conenction', 'connectoin', 'connection', 'connecton', 'cnonection', 'connecxtion']],
        ['ab', 1, ['ba', 'a', 'abc', 'b', 'cb']],
      ] as const) {
        const expression = postgresFuzzy(term, edits, '.');
        for (const value of values) {
          const js = patternMatch(JSON.stringify({ f: term, k: edits, tok: 0 }), value) === 1;
          assert.equal(await pgMatch(expression, value), js, `${term}~${edits} on ${value}`);
        }
      }
    } finally {
      await client.end();
    }
  });
});
