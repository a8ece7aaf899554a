/**
 * No query gets a silently different answer (issue 40): random query strings drawn from the
 * language's grammar, valid and not (wildcards in terms and field names, regular expressions,
 * fuzzy terms, boosts, field groups, and the syntax around them), are each either refused with a
 * QuerySyntaxError (a 400 on both APIs) or answered by the store exactly as a plain scan of every
 * entry answers them (oracle.ts, which tests patterns another way than the store: V8's RegExp on
 * short values, a full Levenshtein table). On both dialects, seeded and of a fixed number of runs.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import type { LogEntry, StoredLogEntry } from '../../../src/logs/modules/store/index.js';
import {
  expandFieldPatterns,
  hasFieldPatterns,
  knownFields,
  searchCondition,
  type Condition,
} from '../../../src/logs/modules/query/condition.js';
import { QuerySyntaxError } from '../../../src/logs/modules/query/errors.js';
import { DIALECTS } from '../../helpers/databases.js';
import { matches } from './oracle.js';
import { HOUR, T0, openTestStore, type TestStore } from './helpers.js';

const WORDS = [
  'timeout',
  'timeouts',
  'timed',
  'e500',
  'err42',
  'connection',
  'refused',
  'Café',
  'cafe',
  'disk',
  'full',
  'retry',
  'ディスク',
  'error',
  'eror',
];
const LEVELS = ['error', 'warn', 'info', 'debug', 'fatal'];
const SERVICES = ['api', 'api-gw', 'billing', 'auth', 'a.b', 'Api'];
const PATHS = ['/api/v1/users', '/api/v2/users', '/health', 'a*b', 'a?b', 'x\\y'];

function entries(): LogEntry[] {
  const made: LogEntry[] = [];
  for (let index = 0; index < 48; index += 1) {
    const words = [0, 1, 2].map((k) => WORDS[(index * (k + 3) + k) % WORDS.length]!);
    const attributes: Record<string, string | number | boolean> = {
      path: PATHS[index % PATHS.length]!,
      status: [200, 404, 500, 503][index % 4]!,
    };
    if (index % 3 === 0) attributes.code = String([500, 503, 5030][index % 3 === 0 ? (index / 3) % 3 : 0]);
    if (index % 5 === 0) attributes.message_id = `m${index}`;
    const entry: LogEntry = { timestamp: T0 + index * 60_000, message: `${words.join(' ')} #${index}`, attributes };
    if (index % 7 !== 0) entry.level = LEVELS[index % LEVELS.length]!;
    if (index % 4 !== 0) entry.service = SERVICES[index % SERVICES.length]!;
    entry.host = `h${index % 3}`;
    made.push(entry);
  }
  return made;
}

/** A term's value with some characters turned into `?` or `*`. */
const wildcarded = (words: readonly string[]) =>
  fc
    .tuple(fc.constantFrom(...words), fc.array(fc.tuple(fc.nat(12), fc.constantFrom('?', '*', '\\*')), { maxLength: 3 }))
    .map(([word, edits]) => {
      const chars = [...word];
      for (const [at, mark] of edits) chars.splice(at % (chars.length + 1), mark === '\\*' ? 0 : 1, mark);
      return chars.join('');
    });

const regexAtom: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.constantFrom('a', 'e', 'r', 'o', 'p', 'i', '.', '\\.', '\\d', '\\w', '[a-f]', '[^a-f]', '[0-9]', '/', '\\/', 'é'),
  },
  // What stays refused: anchors, Lucene's optional operators, broken syntax.
  { weight: 1, arbitrary: fc.constantFrom('^', '$', '&', '~', '@', '#', '<1-5>', '[', ']', '(', '{2}', '{3,1}', '"') },
);
const regex: fc.Arbitrary<string> = fc
  .array(
    fc.tuple(
      fc.oneof(
        regexAtom,
        fc.array(regexAtom, { minLength: 1, maxLength: 3 }).map((atoms) => `(${atoms.join('|')})`),
      ),
      fc.constantFrom('', '', '*', '+', '?', '{1,2}', '{2}'),
    ),
    { maxLength: 5 },
  )
  .map((parts) => parts.map(([atom, repeat]) => atom + repeat).join(''))
  // Whole values too, so that some expressions match.
  .chain((body) =>
    fc.constantFrom(body, 'err.*', 'error', 'api.*', '/api/v[12]/users', 'h[0-1]', '(error|warn)', '.*s', 'm[0-9]+', '50(3|30)?'),
  );

const field = fc.constantFrom(
  'level',
  'service',
  'host',
  'message',
  'path',
  'code',
  'status',
  'mess*ge',
  'se?vice',
  'h*',
  '*',
  'message_*',
  'lev?l',
  'nope*',
);
const word = fc.constantFrom(...WORDS, ...LEVELS, ...SERVICES, 'h1', '500', '503', 'm5', 'tim', 'cafe');

/** A word with a typo: two neighbours swapped, or one character dropped or doubled. */
const typo = fc.tuple(word, fc.nat(12), fc.constantFrom('swap', 'drop', 'double')).map(([value, at, kind]) => {
  const chars = [...value];
  const k = at % chars.length;
  if (kind === 'swap' && k + 1 < chars.length) [chars[k], chars[k + 1]] = [chars[k + 1]!, chars[k]!];
  else if (kind === 'drop') chars.splice(k, 1);
  else chars.splice(k, 0, chars[k]!);
  return chars.join('');
});

const term: fc.Arbitrary<string> = fc.oneof(
  word,
  wildcarded([...WORDS, ...LEVELS, ...SERVICES, 'h1', '503']),
  regex.map((body) => `/${body}/`),
  fc
    .tuple(fc.oneof(word, typo), fc.constantFrom('~', '~', '~0', '~1', '~1', '~2', '~2', '~3', '~x', '~1.5'))
    .map(([value, fuzzy]) => value + fuzzy),
  word.map((value) => `"${value}"`),
);
const boost = fc.constantFrom('', '', '', '', '', '', '', '^2', '^0.5', '^', '^x');

const leaf: fc.Arbitrary<string> = fc.oneof(
  fc.tuple(term, boost).map(([value, weight]) => value + weight),
  field.map((name) => `${name}:*`),
  fc.tuple(field, fc.constantFrom('>=500', '<404', '[a TO m]', '{200 TO 503]', '>h1')).map(([name, range]) => `${name}:${range}`),
  fc.tuple(field, term, boost).map(([name, value, weight]) => `${name}:${value}${weight}`),
  fc.tuple(field, term, term, boost).map(([name, a, b, weight]) => `${name}:(${a} OR ${b})${weight}`),
);

const query: fc.Arbitrary<string> = fc.letrec<{ q: string }>((tie) => ({
  q: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.tuple(tie('q'), fc.constantFrom(' ', ' AND ', ' OR '), tie('q')).map(([a, op, b]) => `${a}${op}${b}`),
    tie('q').map((inner) => `NOT ${inner}`),
    fc.tuple(tie('q'), boost).map(([inner, weight]) => `(${inner})${weight}`),
  ),
})).q;

// Strings of the grammar's characters in any order: mostly refused, never a wrong answer.
const junk = fc.string({
  unit: fc.constantFrom('a', 'e', 'r', ':', '*', '?', '/', '~', '^', '(', ')', '"', '\\', ' ', '[', ']', '{', '}', '1', 'level', 'OR'),
  maxLength: 16,
});

const sorted = (ids: readonly string[]) => [...ids].sort();

for (const dialect of DIALECTS) {
  describe(`the query language against a plain scan (${dialect})`, () => {
    let testStore: TestStore;
    let stored: StoredLogEntry[];
    const tenantId = 'tenant-q';
    const from = T0;
    const to = T0 + 2 * HOUR;

    before(async () => {
      testStore = await openTestStore(dialect);
      await testStore.store.append(tenantId, entries());
      stored = (await testStore.store.search({ tenantId, from, to, page: 1, limit: 1000 })).entries;
      assert.equal(stored.length, 48);
    });
    after(async () => testStore.close());

    /** The store's answer and the scan's, or 'refused' when the query is a QuerySyntaxError (a 400). */
    async function answers(text: string): Promise<'refused' | { store: string[]; scan: string[] }> {
      let condition: Condition;
      try {
        condition = searchCondition(text);
      } catch (error) {
        if (error instanceof QuerySyntaxError) return 'refused';
        throw error;
      }
      let found: StoredLogEntry[];
      try {
        found = (await testStore.store.search({ tenantId, condition, from, to, page: 1, limit: 1000 })).entries;
      } catch (error) {
        if (error instanceof QuerySyntaxError) return 'refused';
        throw error;
      }
      const attributeNames = [...new Set(stored.flatMap((entry) => Object.keys(entry.attributes)))];
      const scanned = hasFieldPatterns(condition) ? expandFieldPatterns(condition, knownFields(attributeNames)) : condition;
      return {
        store: sorted(found.map((entry) => entry.id)),
        scan: sorted(stored.filter((entry) => matches(entry, scanned)).map((entry) => entry.id)),
      };
    }

    test("the issue's queries are answered as the scan answers them, none with an empty page", async () => {
      for (const text of [
        'level:error^2',
        'level:error~',
        'timeout~1',
        'timeout~',
        'level:/err.*/',
        'level:err?r',
        'mess*ge:timeout',
        'level:(error OR warn)',
      ]) {
        const answer = await answers(text);
        assert.notEqual(answer, 'refused', text);
        if (answer === 'refused') continue;
        assert.deepEqual(answer.store, answer.scan, text);
        assert.ok(answer.store.length > 0, `${text} finds entries`);
      }
      // What each means, read off the entries themselves.
      const ids = (keep: (entry: StoredLogEntry) => boolean) => sorted(stored.filter(keep).map((entry) => entry.id));
      const words = (entry: StoredLogEntry) => entry.message.toLowerCase().split(/[^a-z0-9]+/);
      const expected: [string, string[]][] = [
        ['level:error^2', ids((entry) => entry.level === 'error')],
        ['level:err?r', ids((entry) => entry.level === 'error')],
        ['level:/err.*/', ids((entry) => entry.level === 'error')],
        ['level:(error OR warn)', ids((entry) => entry.level === 'error' || entry.level === 'warn')],
        ['mess*ge:timeout', ids((entry) => words(entry).includes('timeout'))],
        // AUTO: 2 edits from 6 characters on (`timed` is 3 away), 1 for 3 to 5.
        ['timeout~', ids((entry) => words(entry).some((w) => ['timeout', 'timeouts'].includes(w)))],
        ['eror~', ids((entry) => words(entry).some((w) => ['error', 'eror'].includes(w)))],
        ['timed~2', ids((entry) => words(entry).includes('timed'))],
        // A swap of two neighbours is one edit, as in Elasticsearch.
        ['timoeut~1', ids((entry) => words(entry).includes('timeout'))],
        // Swaps across the middle of the term (PostgreSQL's expression splits the term there).
        ['tiemout~1', ids((entry) => words(entry).includes('timeout'))],
        ['tiemotu~2', ids((entry) => words(entry).includes('timeout'))],
        ['conenction~1', ids((entry) => words(entry).includes('connection'))],
        ['timeout~1', ids((entry) => words(entry).some((w) => ['timeout', 'timeouts'].includes(w)))],
        ['e5?0', ids((entry) => words(entry).includes('e500'))],
        ['h*:h1', ids((entry) => entry.host === 'h1')],
        ['lev*:*', ids((entry) => entry.level !== undefined && entry.level !== null)],
        ['stat?s:>=500', ids((entry) => Number(entry.attributes.status) >= 500)],
        [
          'path:\\/api\\/v*\\/users',
          ids((entry) => typeof entry.attributes.path === 'string' && entry.attributes.path.startsWith('/api/v')),
        ],
      ];
      for (const [text, want] of expected) {
        const answer = await answers(text);
        assert.ok(answer !== 'refused', text);
        assert.deepEqual(answer.store, want, text);
      }
    });

    test('random queries of the grammar are answered as the scan answers them, or refused', async () => {
      let refused = 0;
      let answered = 0;
      await fc.assert(
        fc.asyncProperty(fc.oneof({ arbitrary: query, weight: 5 }, { arbitrary: junk, weight: 1 }), async (text) => {
          const answer = await answers(text);
          if (answer === 'refused') {
            refused += 1;
            return;
          }
          answered += 1;
          assert.deepEqual(answer.store, answer.scan, `query ${JSON.stringify(text)}`);
        }),
        { seed: 40, numRuns: 400, endOnFailure: true },
      );
      // Both kinds of outcome were exercised.
      assert.ok(answered > 150 && refused > 40, `answered ${answered}, refused ${refused}`);
    });
  });
}
