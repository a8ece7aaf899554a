import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from 'kysely';
import { sql } from 'kysely';
import { parseQuery } from '../../../src/logs/modules/query/parser.js';
import { filtersToCondition, toCondition, type Condition } from '../../../src/logs/modules/query/condition.js';
import { attributePath, compileSqlite, ftsMatchExpression } from '../../../src/logs/modules/store/condition-sql/compile-sqlite.js';
import { compilePostgres } from '../../../src/logs/modules/store/condition-sql/compile-postgres.js';
import { tsvectorText } from '../../../src/logs/db/migrations/support/postgres-refacet.js';
import { facetLookup } from '../../../src/logs/modules/store/facets.js';
import { tokenize } from '../../../src/logs/modules/query/tokenize.js';

// Compiling needs no database: Kysely's DummyDriver with each dialect's adapter and compiler.
const sqliteDb = new Kysely<any>({
  dialect: {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  },
});
const postgresDb = new Kysely<any>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

const condition = (query: string): Condition => toCondition(parseQuery(query));
/** A tenant's facet dictionary (facets.ts): the numbers of the values the tests name. */
const FACETED = facetLookup(new Set(), [
  { field: 'a:http.status', value: '"500"', token: 10 },
  { field: 'a:http.status', value: '500', token: 11 },
  { field: 'c:level', value: 'error', token: 36 },
  { field: 'c:level', value: 'debug', token: 37 },
]);
/** As if the fields had too many values to be faceted: checked on the rows. */
const UNFACETED = facetLookup(new Set(['c:level', 'c:service', 'a:http.status', 'a:user']), []);
/** The tenant's index tables over the read's ids (fts-hours.ts): one hour here. */
const matchingIds = (match: string) =>
  sql`SELECT rowid FROM "log_fts_61" WHERE "log_fts_61" MATCH ${match} AND rowid BETWEEN ${10} AND ${20}`;
/** Attribute names as their own keys (the store numbers them: attribute-codes.ts). */
const keyOf = (name: string) => name;
const onSqlite = (query: string) => compileSqlite(condition(query), { matchingIds, facets: FACETED, keyOf }).compile(sqliteDb);
const onSqliteRows = (query: string) => compileSqlite(condition(query), { matchingIds, facets: UNFACETED, keyOf }).compile(sqliteDb);
const onPostgres = (query: string) => compilePostgres(condition(query), keyOf).compile(postgresDb);

function textOf(query: string): string {
  const compiled = condition(query);
  assert.equal(compiled.kind, 'text', query);
  return ftsMatchExpression(compiled.expr) ?? 'null';
}

describe('tokenizer', () => {
  test('letters and digits of any script, lower-cased, diacritics removed', () => {
    assert.deepEqual(tokenize('Disk FULL on /dev/sda1!'), ['disk', 'full', 'on', 'dev', 'sda1']);
    assert.deepEqual(tokenize('Café crème — 東京 ünïcödé'), ['cafe', 'creme', '東京', 'unicode']);
    assert.deepEqual(tokenize("'; DROP TABLE x; --"), ['drop', 'table', 'x']);
    assert.deepEqual(tokenize('--- => ***'), []);
    assert.deepEqual(tokenize(`${'a'.repeat(201)} ok`), ['ok'], 'over-long runs are not indexed');
  });

  test('tsvector literal keeps positions', () => {
    assert.equal(tsvectorText(['a', 'b', 'a']), "'a':1,3 'b':2");
    assert.equal(tsvectorText([]), '');
    // Facets follow the words, behind `=` and without positions; alone when the message has no word.
    assert.equal(tsvectorText(['x', 'y', 'x', 'x'], ['f1', 'fz']), "'x':1,3,4 'y':2 '=f1' '=fz'");
    assert.equal(tsvectorText([], ['f1']), "'=f1'");
    // Every position of a repeated token, in a short list and a long one.
    for (const length of [20, 80]) {
      const tokens = Array.from({ length }, (_, index) => `t${index % 10}`);
      const expected = Array.from({ length: 10 }, (_, token) => {
        const positions = Array.from({ length: length / 10 }, (_, round) => round * 10 + token + 1);
        return `'t${token}':${positions.join(',')}`;
      });
      assert.equal(tsvectorText(tokens), expected.join(' '), `${length} tokens`);
    }
  });
});

describe('query compilation', () => {
  test('message terms merge into one FTS5 expression', () => {
    assert.equal(textOf('disk full'), '("disk") AND ("full")');
    assert.equal(textOf('"disk full"'), '"disk full"');
    assert.equal(textOf('time*'), '"time" *');
    assert.equal(textOf('user-4*'), '"user 4" *');
    assert.equal(textOf('timeout OR refused'), '("timeout") OR ("refused")');
    assert.equal(textOf('connection -refused'), '(("connection")) NOT ("refused")');
    assert.equal(textOf('NOT refused'), 'null', 'FTS5 has no unary NOT: combined in SQL');
    assert.equal(textOf('message:Disk'), '"disk"');
  });

  test('FTS5 operators typed by the user are only quoted tokens', () => {
    assert.equal(textOf('NEAR(a b)'), '("near") AND ("a") AND ("b")');
    assert.equal(textOf('"col:x ^y *"'), '"col x y"');
    assert.equal(textOf('"\\"abc\\""'), '"abc"');
  });

  test('a lone NOT over text is an SQL NOT IN over the windowed FTS5 lookup', () => {
    const { sql, parameters } = onSqlite('NOT refused');
    assert.equal(sql, 'NOT (l.id IN (SELECT rowid FROM "log_fts_61" WHERE "log_fts_61" MATCH ? AND rowid BETWEEN ? AND ?))');
    assert.deepEqual(parameters, ['body : ("refused")', 10, 20]);
  });

  test('user values are always bound parameters, never SQL text', () => {
    const hostile = `level:"x'; DROP TABLE log_entries; --" service:a\\"b "'; DELETE FROM x" ';`;
    for (const compiled of [onSqliteRows(hostile), onPostgres(hostile)]) {
      assert.doesNotMatch(compiled.sql, /DROP|DELETE|'x'/);
      assert.ok(compiled.parameters.includes("x'; drop table log_entries; --"), 'level values are lower-cased');
      assert.ok(compiled.parameters.includes('a"b'));
      assert.ok(compiled.parameters.includes("';"));
    }
  });

  test('SQLite: attribute matches of unfaceted fields use a quoted JSON path and JSON text comparison', () => {
    assert.equal(attributePath('k8s.pod.name'), '$."k8s.pod.name"');
    assert.equal(attributePath('we"ird\\'), '$."we\\"ird\\\\"');
    const number = onSqliteRows('http.status:500');
    assert.equal(number.sql, '(l.attributes -> ?) IN (json_quote(?), ?)');
    assert.deepEqual(number.parameters, ['$."http.status"', '500', '500']);
    const text = onSqliteRows('user:alice');
    assert.equal(text.sql, '(l.attributes -> ?) = json_quote(?)');
    const prefix = onSqliteRows('user:al*');
    assert.equal(prefix.sql, 'substr((l.attributes ->> ?), 1, ?) = ?');
    assert.deepEqual(prefix.parameters, ['$."user"', 2, 'al']);
    assert.equal(onSqliteRows('level:ERROR').sql, '"l"."level" = ?');
    assert.deepEqual(onSqliteRows('level:ERROR').parameters, ['error']);
  });

  test('SQLite: equalities on faceted fields and words are one lookup in the full-text index', () => {
    const both = onSqlite('disk http.status:500 level:ERROR');
    assert.equal(both.sql, 'l.id IN (SELECT rowid FROM "log_fts_61" WHERE "log_fts_61" MATCH ? AND rowid BETWEEN ? AND ?)');
    assert.deepEqual(both.parameters, ['(body : ("disk")) AND ((facets : "fa" OR facets : "fb")) AND ((facets : "f10"))', 10, 20]);
    // A float, a long value and a range are checked on the rows, beside one lookup for the rest.
    const mixed = onSqlite('disk http.status:1.5 level:error');
    assert.match(mixed.sql, /^l\.id IN \(SELECT rowid .*\) AND \(\(l\.attributes -> \?\) IN \(json_quote\(\?\), \?\)\)$/);
    assert.match(onSqlite(`user:${'x'.repeat(70)}`).sql, /^\(l\.attributes -> \?\) = json_quote\(\?\)$/);
  });

  test('PostgreSQL: words as regular expressions over the message, attributes with jsonb operators', () => {
    const text = onPostgres('disk -level:debug');
    const check = (n: number) =>
      `(CASE WHEN l.words IS NULL THEN lower(l.message COLLATE "C") ~ $${n}::text\n        ELSE l.words ~ $${n + 1}::text END)`;
    assert.equal(text.sql, `(${check(1)}) AND (("l"."level" = $3::text) IS NOT TRUE)`);
    assert.deepEqual(text.parameters, ['(^|[^a-z0-9])disk([^a-z0-9]|$)', '(^| )disk( |$)', 'debug']);
    // A phrase: its words in order, anything but letters and digits between; a prefix: no end.
    assert.deepEqual(onPostgres('"disk full"').parameters, ['(^|[^a-z0-9])disk[^a-z0-9]+full([^a-z0-9]|$)', '(^| )disk full( |$)']);
    assert.deepEqual(onPostgres('user-4*').parameters, ['(^|[^a-z0-9])user[^a-z0-9]+4', '(^| )user 4']);
    assert.match(onPostgres('a OR (b -c)').sql, /^\(\(CASE .*\)\) OR \(\(\(CASE .*\)\) AND \(NOT \(\(CASE .*\)\)\)\)$/s);
    // NOT of a field the entry lacks (NULL) matches, as a plain scan says.
    assert.equal(onPostgres('-user:alice').sql, '((l.attributes -> $1::text) = to_jsonb($2::text)) IS NOT TRUE');
    const number = onPostgres('http.status:500');
    assert.equal(number.sql, '(l.attributes -> $1::text) IN (to_jsonb($2::text), $3::jsonb)');
    const prefix = onPostgres('service:api*');
    assert.equal(prefix.sql, 'starts_with("l"."service", $1::text)');
    const contains = onPostgres('=>');
    assert.equal(contains.sql, 'strpos(l.message, $1::text) > 0');
    // Faceted or not, an equality is checked on the row's value (facets serve the postings).
    assert.equal(onPostgres('level:error').sql, '"l"."level" = $1::text');
  });

  test('filters compile to exact matches', () => {
    const compiled = compilePostgres(
      filtersToCondition([
        { field: 'service', value: 'api' },
        { field: 'message', value: 'a b' },
      ]),
      keyOf,
    ).compile(postgresDb);
    assert.equal(compiled.sql, '("l"."service" = $1::text) AND ("l"."message" = $2::text)');
    assert.throws(() => filtersToCondition([{ field: '@timestamp', value: 'x' }]), /time range/);
    assert.throws(() => condition('@timestamp:1'), /time range/);
  });
});
