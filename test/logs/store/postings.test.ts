import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  countOf,
  encodePostings,
  encodeTimes,
  GROUP_PREFIX,
  groupOf,
  groupOfPrefix,
  pairToken,
  placesOf,
  placesWithPrefix,
  timesOf,
} from '../../../src/logs/modules/store/postgres/postings.js';
import { PLACES, postingsPlan } from '../../../src/logs/modules/store/postgres/postgres-postings.js';
import { groupsFor, pairsFromFor, pieceOrders, postingsPieces } from '../../../src/logs/modules/store/postgres/postgres-postings-write.js';
import { facetLookup } from '../../../src/logs/modules/store/facets.js';
import { toCondition } from '../../../src/logs/modules/query/condition.js';
import { parseQuery } from '../../../src/logs/modules/query/parser.js';
import { HOUR } from '../../../src/logs/modules/store/minutes.js';
import { seededRandom } from '../../helpers/seeded-random.js';

const VOCABULARY = ['disk', 'full', 'timeout', 'declined', 'café', '日本', '=f0', '=f1z', 'a', 'ab', 'abc', '503'];

/** A batch's tokens, an entry's a few words of VOCABULARY. */
function batch(r: () => number, size: number): string[][] {
  return Array.from({ length: size }, () =>
    Array.from({ length: 1 + Math.floor(r() * 6) }, () => VOCABULARY[Math.floor(r() * VOCABULARY.length)]!),
  );
}

/** What the postings must answer: each token's places, read from the entries themselves. */
function expectedPlaces(tokens: readonly string[][], token: string): number[] {
  return tokens.flatMap((entryTokens, place) => (entryTokens.includes(token) ? [place] : []));
}

describe('postings of a batch', () => {
  for (const [seed, size] of [
    [1, 1],
    [2, 5_000],
    [3, 300],
    [4, 700],
  ] as const) {
    test(`every token's places and counts come back as the entries hold them (seed ${seed}, ${size} entries)`, () => {
      const tokens = batch(seededRandom(seed), size);
      const groups = encodePostings(tokens, 16);
      assert.deepEqual(
        groups.map(({ group }) => group),
        [...new Set(groups.map(({ group }) => group))].sort((a, b) => a - b),
        'one value per group, in order',
      );
      const valueOf = (token: string) => groups.find(({ group }) => group === groupOf(token, 16))?.data ?? Buffer.alloc(0);
      for (const token of [...VOCABULARY, 'absent', 'caf', 'dis']) {
        const places = expectedPlaces(tokens, token);
        assert.deepEqual(placesOf(valueOf(token), token), places, token);
        assert.equal(countOf(valueOf(token), token), places.length, token);
      }
      // A prefix's places: the entries holding any word that starts with it, from its one group
      // (groupOfPrefix), or from every group for a prefix shorter than GROUP_PREFIX.
      for (const prefix of ['d', 'di', 'dis', 'disk', 'caf', 'café', 'ab', 'abc', 'zz', 'zzz']) {
        const places = tokens.flatMap((entry, place) => (entry.some((token) => token.startsWith(prefix)) ? [place] : []));
        const group = groupOfPrefix(prefix, 16);
        assert.equal(group === null, prefix.length < GROUP_PREFIX, prefix);
        const values = group === null ? groups.map(({ data }) => data) : [valueOf(prefix)];
        const found = new Set(values.flatMap((data) => placesWithPrefix(data, prefix)));
        assert.deepEqual(
          [...found].sort((a, b) => a - b),
          places,
          prefix,
        );
      }
    });
  }

  test('a token repeated in one entry counts once; an empty batch has no values', () => {
    const [value] = encodePostings([['x', 'x', 'y'], [], ['x']], 1);
    assert.deepEqual(placesOf(value!.data, 'x'), [0, 2]);
    assert.deepEqual(placesOf(value!.data, 'y'), [0]);
    assert.deepEqual(encodePostings([], 8), []);
  });

  test('a value cut short is an error, not a wrong answer', () => {
    const [value] = encodePostings([['declined'], ['declined']], 1);
    assert.throws(() => placesOf(value!.data.subarray(0, value!.data.length - 1), 'other'), RangeError);
  });
});

describe('times of a batch, and its pieces by hour (PostgreSQL)', () => {
  test('times round-trip from the first, also before 1970; descending or cut-short times are refused', () => {
    const times = [-5_000, -5_000, -4_321, 0, 1, 3_600_000, 3_600_000 + 2 ** 40];
    assert.deepEqual(timesOf(encodeTimes(-5_000, times), -5_000, times.length), times);
    assert.throws(() => encodeTimes(0, [5, 4]), RangeError);
    assert.throws(() => timesOf(encodeTimes(0, [1, 2, 3]), 0, 2), /left over/);
    assert.throws(() => timesOf(encodeTimes(0, [1, 2]), 0, 3), RangeError);
  });

  test('a batch is split by UTC hour, each piece in time order with its tokens at the same places', () => {
    const hour = Date.UTC(2026, 10, 20, 5);
    const times = [hour + 10, hour - 1, hour + HOUR, hour, hour + 10];
    const tokens = [['b'], ['a'], ['d'], ['c'], ['e']];
    const pieces = postingsPieces(times, tokens);
    assert.deepEqual(
      pieces.map((piece) => [piece.first, piece.last, piece.entries, piece.groups]),
      [
        [hour - 1, hour - 1, 1, 1],
        [hour, hour + 10, 3, 1],
        [hour + HOUR, hour + HOUR, 1, 1],
      ],
    );
    const middle = pieces[1]!;
    assert.deepEqual(timesOf(middle.times, middle.first, middle.entries), [hour, hour + 10, hour + 10]);
    // Equal times keep the batch's order: c (place 3), then b (0), then e (4).
    assert.deepEqual(
      ['c', 'b', 'e'].map((token) => placesOf(middle.postings[0]!.data, token)),
      [[0], [1], [2]],
    );
  });

  test('a piece holds at most PLACES entries (an entry id is its batch × PLACES + its place): a larger hour of a batch is split', () => {
    const hour = Date.UTC(2026, 10, 20, 5);
    const times = Array.from({ length: PLACES + 3 }, (_, n) => hour + (PLACES + 2 - n)); // newest first
    const orders = pieceOrders(times);
    assert.deepEqual(
      orders.map((order) => order.length),
      [PLACES, 3],
    );
    assert.deepEqual(orders[0]!.slice(0, 2), [PLACES + 2, PLACES + 1], 'in time order');
    assert.deepEqual(orders[1], [2, 1, 0]);
  });

  test('a piece posts the pairs of words in a row whose words are each in pairsFromFor of its entries or more', () => {
    assert.deepEqual([1, 32, 4_096, 5_000, 100_000].map(pairsFromFor), [32, 32, 32, 40, 782]);
    const hour = Date.UTC(2026, 10, 20, 5);
    // 40 entries: "connection refused peer" in 30 of them, "refused connection peer" in one, "refused
    // connection" in eight and "refused connection refused connection" in the last (peer in 31, fewer
    // than 32); a facet lexeme after the words, never paired.
    const tokens = Array.from({ length: 40 }, (_, n) =>
      n < 30
        ? ['connection', 'refused', 'peer', '=f1']
        : n === 30
          ? ['refused', 'connection', 'peer', '=f1']
          : ['refused', 'connection', '=f1'],
    );
    tokens[39] = ['refused', 'connection', 'refused', 'connection', '=f1'];
    const wordCounts = tokens.map((entry) => entry.length - 1);
    const [piece] = postingsPieces(
      tokens.map((_, n) => hour + n),
      tokens,
      wordCounts,
    );
    assert.equal(piece!.pairs, 32);
    const group = (token: string) =>
      piece!.postings.find((posting) => posting.group === groupOf(token, piece!.groups))?.data ?? Buffer.alloc(0);
    const places = (token: string) => placesOf(group(token), token);
    // Not across entries (an entry's last word and the next one's first), a repeat once an entry.
    assert.deepEqual(places(pairToken('connection', 'refused')), [...expectedPlaces(tokens.slice(0, 30), 'connection'), 39]);
    assert.deepEqual(places(pairToken('refused', 'connection')), [30, 31, 32, 33, 34, 35, 36, 37, 38, 39]);
    assert.equal(countOf(group(pairToken('refused', 'connection')), pairToken('refused', 'connection')), 10);
    assert.deepEqual(places(pairToken('refused', 'peer')), [], 'peer is in 31 entries, fewer than 32');
    assert.deepEqual(places(pairToken('connection', 'peer')), []);
    assert.deepEqual(places(pairToken('peer', '=f1')), [], 'only words are paired');
    assert.deepEqual(places('connection').length, 40, 'the words themselves as before');
    assert.equal(postingsPieces([hour], [['a', 'b']])[0]!.pairs, 0, 'no pairs without the words in order');
  });

  test('about 16 entries a group, at most 256', () => {
    assert.deepEqual([1, 31, 32, 100, 5_000, 100_000].map(groupsFor), [1, 1, 2, 4, 256, 256]);
  });
});

describe('what postings answer (PostgreSQL)', () => {
  const facets = facetLookup(new Set(['a:user']), [{ field: 'c:level', value: 'error', token: 7 }]);
  const plan = (query: string) => postingsPlan(toCondition(parseQuery(query)), facets);
  const exact = (query: string) => {
    const found = plan(query);
    assert.equal(found?.exact, true, query);
    return found!.expr;
  };

  test('exactly: words, prefixes and facet equalities under AND, OR and NOT', () => {
    assert.deepEqual(exact('disk'), { kind: 'token', token: 'disk' });
    assert.deepEqual(exact('time*'), { kind: 'prefix', prefix: 'time' });
    assert.deepEqual(exact('level:error -disk'), {
      kind: 'and',
      children: [
        { kind: 'token', token: '=f7' },
        { kind: 'not', child: { kind: 'token', token: 'disk' } },
      ],
    });
    assert.deepEqual(exact('NOT level:warn'), { kind: 'not', child: { kind: 'token', token: '=g0' } }, 'a value no entry has');
    assert.deepEqual(exact('status:500'), {
      kind: 'or',
      children: [
        { kind: 'token', token: '=g0' },
        { kind: 'token', token: '=g0' },
      ],
    });
  });

  test('candidates for the rows to check: a phrase as its words, an AND without what postings cannot answer', () => {
    const candidates = (query: string) => {
      const found = plan(query);
      assert.equal(found?.exact, false, query);
      return found!.expr;
    };
    assert.deepEqual(candidates('"connection refused"'), { kind: 'phrase', tokens: ['connection', 'refused'] });
    assert.deepEqual(candidates('disk-ful*'), {
      kind: 'and',
      children: [
        { kind: 'token', token: 'disk' },
        { kind: 'prefix', prefix: 'ful' },
      ],
    });
    assert.deepEqual(candidates('disk-full'), { kind: 'phrase', tokens: ['disk', 'full'] });
    assert.deepEqual(candidates('disk-full-no*'), {
      kind: 'and',
      children: [
        { kind: 'phrase', tokens: ['disk', 'full'] },
        { kind: 'prefix', prefix: 'no' },
      ],
    });
    // Counted from the postings where pieces post the pair: a phrase of two words, also beside what
    // postings answer exactly; not one of three words, a prefix, or what the rows must check anyway.
    const byPairs = (query: string) => plan(query)!.exactByPairs;
    assert.deepEqual(
      ['"connection refused"', '"connection refused" level:error', '"disk full" OR timeout', 'disk-full -declined'].map(byPairs),
      [true, true, true, true],
    );
    assert.deepEqual(['"disk full now"', 'disk-full-no*', '"disk full" status:>=500', 'disk status:>=500'].map(byPairs), [
      false,
      false,
      false,
      false,
    ]);
    assert.deepEqual(candidates('disk status:>=500'), { kind: 'token', token: 'disk' });
    assert.deepEqual(candidates('level:error -user:u1'), { kind: 'token', token: '=f7' });
    assert.deepEqual(candidates('level:error -"disk full"'), { kind: 'token', token: '=f7' }, 'the NOT of candidates is none');
  });

  test('nothing where postings cannot narrow: ranges, unfaceted fields, substrings, an OR with one of those', () => {
    for (const query of ['status:>=500', 'user:u1', '=>', '_exists_:dur', 'disk OR user:u1', 'NOT "disk full"', ''])
      assert.equal(plan(query), null, query);
  });
});
