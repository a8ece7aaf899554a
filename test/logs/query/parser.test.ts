import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseQuery } from '../../../src/logs/modules/query/parser.js';
import { QuerySyntaxError } from '../../../src/logs/modules/query/errors.js';
import type { QueryNode } from '../../../src/logs/modules/query/ast.js';

/** A compact rendering of the AST: terms as field:value[*|"..."], and/or/not as s-expressions. */
function show(node: QueryNode): string {
  switch (node.kind) {
    case 'all':
      return '*ALL*';
    case 'term': {
      const field = node.field === null ? '' : `${node.field}:`;
      if (node.match === 'phrase') return `${field}"${node.value}"`;
      if (node.match === 'regex') return `${field}/${node.value}/`;
      if (node.match === 'fuzzy') return `${field}${node.value}~${node.edits}`;
      return `${field}${node.value}${node.match === 'prefix' ? '*' : ''}`;
    }
    case 'range': {
      const lower = node.lower ? `${node.lower.inclusive ? '[' : '{'}${node.lower.value}` : '{*';
      const upper = node.upper ? `${node.upper.value}${node.upper.inclusive ? ']' : '}'}` : '*}';
      return `${node.field}:${lower} TO ${upper}`;
    }
    case 'exists':
      return `_exists_:${node.field}`;
    case 'not':
      return `(not ${show(node.child)})`;
    case 'and':
    case 'or':
      return `(${node.kind} ${node.children.map(show).join(' ')})`;
  }
}

const parse = (input: string): string => show(parseQuery(input));

function syntaxError(input: string, position: number, message?: RegExp): void {
  assert.throws(
    () => parseQuery(input),
    (error: unknown) => {
      assert.ok(error instanceof QuerySyntaxError, `${input}: ${String(error)}`);
      assert.equal(error.position, position, `${input}: ${error.message}`);
      if (message) assert.match(error.message, message);
      return true;
    },
  );
}

describe('query parser', () => {
  test('empty and blank queries match everything', () => {
    assert.equal(parse(''), '*ALL*');
    assert.equal(parse('   \t\n'), '*ALL*');
  });

  test('words are ANDed', () => {
    assert.equal(parse('disk'), 'disk');
    assert.equal(parse('disk full'), '(and disk full)');
    assert.equal(parse('disk AND full'), '(and disk full)');
    assert.equal(parse('  disk   full  now '), '(and disk full now)');
  });

  test('quoted phrases, with escapes', () => {
    assert.equal(parse('"disk full"'), '"disk full"');
    assert.equal(parse('"say \\"hi\\"" x'), '(and "say "hi"" x)');
    assert.equal(parse('"back\\\\slash"'), '"back\\slash"');
    assert.equal(parse('"a (b) OR c"'), '"a (b) OR c"');
    assert.equal(parse('("x y")'), '"x y"');
  });

  test('field:value, field:"phrase", prefixes', () => {
    assert.equal(parse('level:error'), 'level:error');
    assert.equal(parse('service:"api gateway"'), 'service:"api gateway"');
    assert.equal(parse('k8s.pod.name:api-1'), 'k8s.pod.name:api-1');
    assert.equal(parse('@version:1'), '@version:1');
    assert.equal(parse('time*'), 'time*');
    assert.equal(parse('service:api*'), 'service:api*');
    assert.equal(parse('url:http://x:1/y'), 'url:http://x:1/y', 'only the first colon separates the field');
    assert.equal(parse('status:-1'), 'status:-1');
  });

  test('a colon that does not follow a field name is part of the word', () => {
    assert.equal(parse(':x'), ':x');
    syntaxError('^col:', 0, /number after '\^'/);
    assert.equal(parse('a\\:b'), 'a:b');
    assert.equal(parse('12\\:30'), '12:30');
  });

  test('escaped stars and operators are literal', () => {
    assert.equal(parseQuery('a\\*').kind, 'term');
    assert.equal((parseQuery('a\\*') as { match: string }).match, 'word');
    assert.equal(parse('\\AND x'), '(and AND x)');
    assert.equal(parse('and or not'), '(and and or not)', 'lower-case operators are words');
    assert.equal(parse('foo*bar'), 'foo*bar');
    assert.equal((parseQuery('foo*bar') as { match: string }).match, 'wildcard', 'a star inside a term is a wildcard');
  });

  test('NOT and -', () => {
    assert.equal(parse('NOT debug'), '(not debug)');
    assert.equal(parse('-debug'), '(not debug)');
    assert.equal(parse('error -level:debug'), '(and error (not level:debug))');
    assert.equal(parse('NOT NOT x'), '(not (not x))');
    assert.equal(parse('-(a OR b)'), '(not (or a b))');
    assert.equal(parse('a-b'), 'a-b', 'a dash inside a word is part of it');
    assert.equal(parse('-"a b"'), '(not "a b")');
  });

  test('OR, AND precedence and parentheses', () => {
    assert.equal(parse('a OR b'), '(or a b)');
    assert.equal(parse('a b OR c'), '(or (and a b) c)');
    assert.equal(parse('a AND b OR c AND d'), '(or (and a b) (and c d))');
    assert.equal(parse('a (b OR c)'), '(and a (or b c))');
    assert.equal(parse('(a OR b) (c OR d)'), '(and (or a b) (or c d))');
    assert.equal(parse('((a))'), 'a');
    assert.equal(parse('a OR b OR c'), '(or a b c)');
    assert.equal(parse('(a b) c'), '(and a b c)');
    assert.equal(parse('NOT a OR b'), '(or (not a) b)');
  });

  test('term positions are character offsets', () => {
    const node = parseQuery('  level:error "x y"');
    assert.equal(node.kind, 'and');
    const [first, second] = (node as { children: QueryNode[] }).children as [QueryNode, QueryNode];
    assert.equal((first as { position: number }).position, 2);
    assert.equal((second as { position: number }).position, 14);
  });

  test('syntax errors carry the position', () => {
    syntaxError('"open', 0, /unterminated/);
    syntaxError('a "open', 2, /unterminated/);
    syntaxError('(a', 0, /unclosed/);
    syntaxError('x (a OR (b)', 2, /unclosed/);
    syntaxError('a)', 1, /unmatched/);
    syntaxError(')', 0, /unmatched/);
    syntaxError('()', 0, /empty parentheses/);
    syntaxError('a OR', 4, /after OR/);
    syntaxError('a AND', 5, /after AND/);
    syntaxError('OR a', 0, /unexpected OR/);
    syntaxError('AND a', 0, /unexpected AND/);
    syntaxError('a OR OR b', 5, /after OR/);
    syntaxError('a AND ) b', 6, /after AND/);
    syntaxError('NOT', 3, /after NOT/);
    syntaxError('a NOT', 5, /after NOT/);
    syntaxError('-', 0, /after '-'/);
    syntaxError('a - b', 2, /after '-'/);
    syntaxError('--', 1, /after '-'/);
    syntaxError('level:', 6, /value after 'level:'/);
    syntaxError('level: error', 6, /value after/);
    syntaxError('""', 0, /empty quoted/);
    syntaxError('"a"b', 3, /after a quoted phrase/);
    syntaxError('ab"c d"', 2, /put a space/);
    syntaxError('level:x"y"', 7, /put a space/);
  });

  test('limits: length, number of terms, nesting', () => {
    syntaxError('x'.repeat(5000), 4096, /longer than/);
    assert.doesNotThrow(() => parseQuery(Array.from({ length: 100 }, (_, i) => `w${i}`).join(' ')));
    syntaxError(Array.from({ length: 101 }, (_, i) => `w${i}`).join(' '), 0, /more than 100 terms/);
    assert.equal(parse(`${'('.repeat(32)}a${')'.repeat(32)}`), 'a');
    syntaxError(`${'('.repeat(33)}a${')'.repeat(33)}`, 32, /nested deeper/);
  });

  test('hostile input never escapes the grammar', () => {
    assert.equal(parse(`'; DROP TABLE log_entries; --x`), `(and '; DROP TABLE log_entries; (not (not x)))`);
    assert.equal(parse('NEAR(a b)'), '(and NEAR a b)');
    assert.equal(parse('"NEAR(a b)"'), '"NEAR(a b)"');
    assert.equal(parse('a^2 {x} [y]'), '(and a {x} [y])');
    syntaxError('a ~z', 2, /0, 1 or 2 edits/);
    assert.equal(parse('東京 "ünï cödé"'), '(and 東京 "ünï cödé")');
  });

  test('ranges: brackets, braces, open ends, quoted bounds and comparisons', () => {
    assert.equal(parse('status:[500 TO 599]'), 'status:[500 TO 599]');
    assert.equal(parse('status:{500 TO 599}'), 'status:{500 TO 599}');
    assert.equal(parse('status:[500 TO 599}'), 'status:[500 TO 599}');
    assert.equal(parse('latency:[ 1.5  TO * ]'), 'latency:[1.5 TO *}');
    assert.equal(
      parse('@timestamp:["2026-11-24T00:00:00Z" TO "2026-11-24T01:00:00Z"]'),
      '@timestamp:[2026-11-24T00:00:00Z TO 2026-11-24T01:00:00Z]',
    );
    assert.equal(parse('status:>=500'), 'status:[500 TO *}');
    assert.equal(parse('status:>500'), 'status:{500 TO *}');
    assert.equal(parse('status:<500'), 'status:{* TO 500}');
    assert.equal(parse('status:<=500'), 'status:{* TO 500]');
    assert.equal(parse('status:>=500 AND NOT status:[502 TO 503] timeout'), '(and status:[500 TO *} (not status:[502 TO 503]) timeout)');
    assert.equal(parse('status:\\>500'), 'status:>500');
  });

  test('existence: _exists_:field and field:*; * alone matches everything', () => {
    assert.equal(parse('_exists_:trace_id'), '_exists_:trace_id');
    assert.equal(parse('NOT _exists_:k8s.pod.name'), '(not _exists_:k8s.pod.name)');
    assert.equal(parse('user.id:*'), '_exists_:user.id');
    assert.equal(parse('*'), '*ALL*');
    assert.equal(parse('*:*'), '*ALL*');
  });

  test('malformed ranges and comparisons are refused with their position', () => {
    syntaxError('status:[500 599]', 12, /TO/);
    syntaxError('status:[500 TO 599', 18, /close the range/);
    syntaxError('status:[500 TO ]', 15, /range bound/);
    syntaxError('a status:[1 TO 2]x', 17, /after a range/);
    syntaxError('status:>=', 9, /value after '>='/);
    syntaxError('_exists_:(a)', 9);
    syntaxError('status:["5 TO 6]', 8, /unterminated/);
  });

  test('boosts are accepted and change nothing: terms, phrases, regular expressions, groups', () => {
    assert.equal(parse('level:error^2'), 'level:error');
    assert.equal(parse('"a b"^1.5 c'), '(and "a b" c)');
    assert.equal(parse('(a OR b)^3 c'), '(and (or a b) c)');
    assert.equal(parse('level:/err.*/^2'), 'level:/err.*/');
    syntaxError('level:error^', 11, /number after '\^'/);
    syntaxError('level:error^x', 11, /number after '\^'/);
    syntaxError('(a)^', 3, /number after '\^'/);
  });

  test('fuzzy terms: ~ (AUTO), ~0 to ~2; more edits, a fraction or a phrase proximity is refused', () => {
    assert.equal(parse('timeout~'), 'timeout~auto');
    assert.equal(parse('timeout~1'), 'timeout~1');
    assert.equal(parse('level:error~2^3'), 'level:error~2');
    syntaxError('timeout~3', 7, /0, 1 or 2 edits/);
    syntaxError('timeout~0.5', 7, /0, 1 or 2 edits/);
    syntaxError('"a b"~2', 5, /proximity/);
    syntaxError('ti*out~1', 0, /cannot hold wildcards/);
  });

  test('wildcards: ? and * anywhere in a term, escaped ones literal; field-name wildcards', () => {
    const term = (input: string) => parseQuery(input) as { match: string; value: string; field: string | null };
    assert.deepEqual([term('level:err?r').match, term('level:err?r').value], ['wildcard', 'err?r']);
    assert.equal(term('ti*ut').match, 'wildcard');
    assert.equal(term('*out').match, 'wildcard');
    assert.equal(term('time*').match, 'prefix', 'a trailing star alone is a prefix');
    assert.deepEqual([term('a\\*b?').match, term('a\\*b?').value], ['wildcard', 'a\\*b?']);
    assert.deepEqual([term('mess*ge:timeout').field, term('mess*ge:timeout').match], ['mess*ge', 'word']);
  });

  test('regular expressions: /.../ after a field or alone; a slash inside a word is a word', () => {
    assert.equal(parse('level:/err.*/'), 'level:/err.*/');
    assert.equal(parse('level:/a b|c d/ x'), '(and level:/a b|c d/ x)');
    assert.equal(parse('path:/\\/api\\/.*/'), 'path://api/.*/', 'an escaped slash is a slash');
    assert.equal(parse('/api/v1/users'), '/api/v1/users');
    assert.equal(parse('url:http://x:1/y'), 'url:http://x:1/y');
  });

  test('field groups: field:(a OR b) searches the field for each term without its own', () => {
    assert.equal(parse('level:(error OR warn)'), '(or level:error level:warn)');
    assert.equal(parse('level:(error OR host:h1) x'), '(and (or level:error host:h1) x)');
    assert.equal(parse('service:(NOT api* AND "a b")'), '(and (not service:api*) service:"a b")');
    assert.equal(parse('level:(*)'), '_exists_:level');
    syntaxError('level:()', 6, /empty parentheses/);
    syntaxError('level:(a', 6, /unclosed/);
  });
});
