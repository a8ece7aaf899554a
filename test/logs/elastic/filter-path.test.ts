import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyFilterPath, parseFilterPath } from '../../../src/logs/modules/elastic/filter-path.js';
import { ElasticError } from '../../../src/logs/modules/elastic/elastic-errors.js';

/** Elasticsearch's filter_path on answers (docs/elasticsearch.md "Every call"): the shapes clients and shippers send. */

const filtered = (answer: unknown, spec: string) => JSON.parse(JSON.stringify(applyFilterPath(answer, parseFilterPath(spec)!)));

const bulk = {
  took: 3,
  errors: true,
  items: [
    { create: { _index: 'logs', _id: 'a', status: 201, result: 'created' } },
    { create: { _index: 'logs', _id: 'b', status: 400, error: { type: 'mapper_parsing_exception', reason: 'bad' } } },
  ],
};

test("Logstash's and Beats' filter_path on a _bulk answer keeps errors, each item's status and error", () => {
  assert.deepEqual(filtered(bulk, 'errors,items.*.error,items.*.status'), {
    errors: true,
    items: [{ create: { status: 201 } }, { create: { status: 400, error: { type: 'mapper_parsing_exception', reason: 'bad' } } }],
  });
});

test('wildcards within a name, ** for any depth, exclusions first then inclusions; nothing reached is {}', () => {
  const search = {
    took: 1,
    hits: {
      total: { value: 2, relation: 'eq' },
      hits: [
        { _id: '1', _source: { a: 1, b: { c: 2 } } },
        { _id: '2', _source: { a: 3 } },
      ],
    },
  };
  assert.deepEqual(filtered(search, 'hits.hits._source'), { hits: { hits: [{ _source: { a: 1, b: { c: 2 } } }, { _source: { a: 3 } }] } });
  assert.deepEqual(filtered(search, 'hits.hits._s*e.a'), { hits: { hits: [{ _source: { a: 1 } }, { _source: { a: 3 } }] } });
  assert.deepEqual(filtered(search, '**.c'), { hits: { hits: [{ _source: { b: { c: 2 } } }] } });
  assert.deepEqual(filtered(search, 'hits.**'), { hits: search.hits });
  assert.deepEqual(filtered(search, '-hits,-took'), {});
  assert.deepEqual(filtered(search, '-hits.hits._source,took'), { took: 1 });
  assert.deepEqual(filtered(search, '-hits.hits._source'), {
    took: 1,
    hits: { total: search.hits.total, hits: [{ _id: '1' }, { _id: '2' }] },
  });
  assert.deepEqual(filtered({ hits: { hits: [] } }, 'hits.hits._source'), {});
  assert.deepEqual(filtered(search, 'nothing.here'), {});
  assert.deepEqual(filtered(search, '*'), search);
  assert.equal(parseFilterPath(''), null);
  assert.equal(parseFilterPath(undefined), null);
});

test('names a client chose are data: __proto__ and constructor as keys and as paths', () => {
  const answer = JSON.parse('{"aggregations":{"__proto__":{"value":1},"constructor":{"value":2},"x":{"value":3}}}');
  const kept = applyFilterPath(answer, parseFilterPath('aggregations.__proto__.value,aggregations.constructor')!) as any;
  assert.equal(Object.getPrototypeOf(kept), null);
  assert.deepEqual(JSON.parse(JSON.stringify(kept)), JSON.parse('{"aggregations":{"__proto__":{"value":1},"constructor":{"value":2}}}'));
  assert.equal(({} as any).value, undefined);
  assert.deepEqual(filtered(answer, '-aggregations.__proto__'), { aggregations: { constructor: { value: 2 }, x: { value: 3 } } });
});

test('a bad filter_path is a 400 parsing_exception: repeated, too long, too many paths or names, an empty name', () => {
  for (const spec of [
    ['a', 'b'],
    'a'.repeat(5000),
    Array.from({ length: 101 }, (_, i) => `p${i}`).join(','),
    'a.'.repeat(40) + 'a',
    'a..b',
  ]) {
    assert.throws(
      () => parseFilterPath(spec),
      (error: unknown) => error instanceof ElasticError && error.status === 400 && error.type === 'parsing_exception',
    );
  }
});

test('wildcards match each part once, in order (a long name against many wildcards: no backtracking)', () => {
  const name = 'a'.repeat(50_000);
  assert.deepEqual(filtered({ [name]: 1 }, `${'*a'.repeat(30)}*b`), {});
  assert.deepEqual(filtered({ [name]: 1 }, `${'*a'.repeat(30)}*`), { [name]: 1 });
  assert.deepEqual(filtered({ abcabd: 1, abd: 2, ab: 3 }, 'a*b*d'), { abcabd: 1, abd: 2 });
});

test('a filter_path of many ** keeps each state once: a deep answer is filtered, not a hang of the service', () => {
  // Without states kept once, 31 `**` over 16 levels make billions of states: past the steps an
  // answer may take (which bound the work whatever the paths), a 400.
  let answer: unknown = { x: 1, zz: 2 };
  for (let level = 0; level < 8; level += 1) answer = { a: answer, b: [answer] };
  const many = `${Array(31).fill('**').join('.')}.zz`;
  const kept = filtered(answer, many) as { a: unknown; b: unknown[] };
  assert.deepEqual(Object.keys(kept), ['a', 'b']);
  assert.match(JSON.stringify(kept), /"zz":2/);
  assert.doesNotMatch(JSON.stringify(kept), /"x"/);
  // And the whole parameter is bounded: more than 128 names in all is a 400.
  assert.throws(() => parseFilterPath(Array(5).fill(Array(30).fill('a').join('.')).join(',')), ElasticError);
});
