import { varintSize, writeVarintAt } from '../../../../shared/encoding/varint.js';

/**
 * Postings of a piece (docs/log-store.md, glossary) of entries: for each token (a word or a facet), which of the piece's entries
 * hold it, by their place in the piece. Instead of a word index with one entry per word of every
 * entry (GIN on PostgreSQL; docs/scaling.md step 2) the tokens are hashed into groups, and
 * each group of a piece is one value (a `bytea` row), so a piece writes one row per group instead of
 * an index entry per word, and a word's lookup over a day reads one small row per piece.
 * The PostgreSQL store (postgres-postings.ts) keeps each piece's times beside its postings
 * (encodeTimes), so that places turn into times.
 *
 * A group's value: for each of its tokens, the token (UTF-8, length first), how many entries hold
 * it, the byte length of their places, and the places (the first as it is, then each as its distance
 * from the one before). Numbers are LEB128 varints.
 */

/**
 * Characters of a word that choose its group: a prefix at least this long finds all its words in one
 * group. A facet lexeme (`=…`, which no word starts with, and no prefix query reads) is grouped by
 * all of it, so that a piece's facets spread over every group.
 */
export const GROUP_PREFIX = 3;

/** The group of a token among `groups` (FNV-1a of the UTF-16 code units that choose it). */
export function groupOf(token: string, groups: number): number {
  const length = token.charCodeAt(0) === 0x3d ? token.length : Math.min(token.length, GROUP_PREFIX);
  let hash = 0x811c9dc5;
  for (let i = 0; i < length; i += 1) hash = Math.imul(hash ^ token.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % groups;
}

/** The group that holds every word starting with `prefix`, or null when they may be in any (a short prefix). */
export function groupOfPrefix(prefix: string, groups: number): number | null {
  return prefix.length >= GROUP_PREFIX ? groupOf(prefix, groups) : null;
}

function isAscii(text: string): boolean {
  for (let char = 0; char < text.length; char += 1) if (text.charCodeAt(char) > 0x7f) return false;
  return true;
}

/** A growable byte buffer with LEB128 varints. */
class Bytes {
  #buffer = Buffer.allocUnsafe(1024);
  length = 0;

  #reserve(n: number): void {
    if (this.length + n <= this.#buffer.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.#buffer.length * 2, this.length + n));
    this.#buffer.copy(next, 0, 0, this.length);
    this.#buffer = next;
  }

  varint(value: number): void {
    this.#reserve(8); // 2^53 takes 8
    this.length = writeVarintAt(this.#buffer, this.length, value);
  }

  bytes(value: Buffer): void {
    this.#reserve(value.length);
    value.copy(this.#buffer, this.length);
    this.length += value.length;
  }

  take(): Buffer {
    return Buffer.from(this.#buffer.subarray(0, this.length));
  }
}

/** LEB128 varints from a buffer. */
class Reader {
  at = 0;
  constructor(readonly data: Uint8Array) {}

  varint(): number {
    let value = 0;
    let scale = 1;
    for (;;) {
      const byte = this.data[this.at++];
      if (byte === undefined) throw new RangeError('postings: a varint runs past the end');
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return value;
      scale *= 0x80;
    }
  }
}

/**
 * The token of two words in a row of a message (PostgreSQL's pairs: postgres-postings.ts,
 * pairsFromFor): no word holds a space, so no word or prefix of one is a pair (a prefix finds the
 * pairs that start with its words, entries it finds by those words anyway).
 */
export function pairToken(first: string, second: string): string {
  return `${first} ${second}`;
}

/** Which pairs of words a piece's postings hold (encodePostings). */
export interface PairsOf {
  /** The first `wordCounts[place]` tokens of an entry are its message's words, in order. */
  wordCounts: readonly number[];
  /** The pairs of two words each held by at least this many of the piece's entries. */
  least: number;
}

/**
 * The postings of a piece: `tokens[place]` are the tokens of the piece's entry at `place` (repeats
 * count once). One value per group that holds a token, groups numbered from 0 to `groups` − 1.
 * Written without an array per token (a piece of 5,000 log lines has some 20,000 distinct tokens):
 * each token gets a number, its places are gathered by a counting sort, and every group's value is a
 * slice of one buffer sized in advance. With `pairs`, the pairs of words in a row (pairToken) whose
 * words are common enough are tokens too, found by the words' numbers.
 */
export function encodePostings(tokens: readonly (readonly string[])[], groups: number, pairs?: PairsOf): { group: number; data: Buffer }[] {
  let occurrences = 0;
  let words = 0;
  for (let place = 0; place < tokens.length; place += 1) {
    occurrences += tokens[place]!.length;
    if (pairs) words += pairs.wordCounts[place]!;
  }
  const capacity = occurrences + words; // an entry has fewer pairs than words
  const numbers = new Map<string, number>();
  const names: string[] = [];
  const lastPlace = new Int32Array(capacity); // by token number: the last place that held it
  const tokenOf = new Int32Array(capacity); // by occurrence (a repeat within an entry left out)
  const placeOf = new Int32Array(capacity);
  const sequence = new Int32Array(words); // each entry's words by number, in order
  let kept = 0;
  for (let place = 0, word = 0; place < tokens.length; place += 1) {
    const entry = tokens[place]!;
    const wordCount = pairs ? pairs.wordCounts[place]! : 0;
    for (let index = 0; index < entry.length; index += 1) {
      const token = entry[index]!;
      let number = numbers.get(token);
      if (number === undefined) {
        number = names.length;
        numbers.set(token, number);
        names.push(token);
        lastPlace[number] = -1;
      }
      if (index < wordCount) sequence[word++] = number;
      if (lastPlace[number] === place) continue;
      lastPlace[number] = place;
      tokenOf[kept] = number;
      placeOf[kept] = place;
      kept += 1;
    }
  }
  if (pairs) kept = addPairs(tokens.length, pairs, { names, lastPlace, tokenOf, placeOf, sequence }, kept);
  // Each token's places, ascending, at `first[number]` of `places`.
  const count = new Int32Array(names.length);
  for (let index = 0; index < kept; index += 1) count[tokenOf[index]!]! += 1;
  const first = new Int32Array(names.length);
  for (let number = 1; number < names.length; number += 1) first[number] = first[number - 1]! + count[number - 1]!;
  const places = new Int32Array(kept);
  const next = first.slice();
  for (let index = 0; index < kept; index += 1) places[next[tokenOf[index]!]!++] = placeOf[index]!;

  // Each token's group and the bytes of its places and text; then each group's size.
  const groupOfToken = new Int32Array(names.length);
  const placeBytes = new Int32Array(names.length);
  const textBytes = new Int32Array(names.length);
  const groupSize = new Float64Array(groups);
  for (let number = 0; number < names.length; number += 1) {
    let bytes = 0;
    let previous = 0;
    for (let index = first[number]!; index < first[number]! + count[number]!; index += 1) {
      bytes += varintSize(places[index]! - previous);
      previous = places[index]!;
    }
    const name = names[number]!;
    const text = isAscii(name) ? name.length : Buffer.byteLength(name);
    const group = groupOf(name, groups);
    groupOfToken[number] = group;
    placeBytes[number] = bytes;
    textBytes[number] = text;
    groupSize[group]! += varintSize(text) + text + varintSize(count[number]!) + varintSize(bytes) + bytes;
  }
  const groupStart = new Float64Array(groups + 1);
  for (let group = 0; group < groups; group += 1) groupStart[group + 1] = groupStart[group]! + groupSize[group]!;
  const buffer = Buffer.allocUnsafe(groupStart[groups]!);
  const at = groupStart.slice(0, groups);
  for (let number = 0; number < names.length; number += 1) {
    const group = groupOfToken[number]!;
    const name = names[number]!;
    let pos = writeVarintAt(buffer, at[group]!, textBytes[number]!);
    if (textBytes[number] === name.length) {
      // ASCII: byte by byte (a native write per token costs more than the token).
      for (let char = 0; char < name.length; char += 1) buffer[pos++] = name.charCodeAt(char);
    } else pos += buffer.write(name, pos);
    pos = writeVarintAt(buffer, pos, count[number]!);
    pos = writeVarintAt(buffer, pos, placeBytes[number]!);
    let previous = 0;
    for (let index = first[number]!; index < first[number]! + count[number]!; index += 1) {
      pos = writeVarintAt(buffer, pos, places[index]! - previous);
      previous = places[index]!;
    }
    at[group] = pos;
  }
  const values: { group: number; data: Buffer }[] = [];
  for (let group = 0; group < groups; group += 1) {
    if (groupSize[group]! > 0) values.push({ group, data: buffer.subarray(groupStart[group], groupStart[group + 1]) });
  }
  return values;
}

/** The occurrences of the pairs (PairsOf) appended after the first `kept` of the piece's tokens; returns how many there are then. */
function addPairs(
  entries: number,
  { wordCounts, least }: PairsOf,
  tokens: { names: string[]; lastPlace: Int32Array; tokenOf: Int32Array; placeOf: Int32Array; sequence: Int32Array },
  kept: number,
): number {
  const { names, lastPlace, tokenOf, placeOf, sequence } = tokens;
  const single = names.length; // words and facets are numbered below this
  const entriesOf = new Int32Array(single);
  for (let index = 0; index < kept; index += 1) entriesOf[tokenOf[index]!]! += 1;
  // The words common enough for pairs, numbered again from 0: a pair's key is then exact (fewer
  // than 2^26 of them, as each is in `least` of fewer than 2^31 occurrences).
  const common = new Int32Array(single);
  let commonCount = 0;
  for (let number = 0; number < single; number += 1) common[number] = entriesOf[number]! >= least ? commonCount++ : -1;
  if (commonCount > 2 ** 26) throw new RangeError('postings: too many words for pairs');
  const pairNumbers = new Map<number, number>(); // by the words' common numbers, first * commonCount + second
  for (let place = 0, word = 0; place < entries; word += wordCounts[place]!, place += 1) {
    for (let index = word + 1; index < word + wordCounts[place]!; index += 1) {
      const [first, second] = [sequence[index - 1]!, sequence[index]!];
      const [a, b] = [common[first]!, common[second]!];
      if (a < 0 || b < 0) continue;
      const key = a * commonCount + b;
      let number = pairNumbers.get(key);
      if (number === undefined) {
        number = names.length;
        pairNumbers.set(key, number);
        names.push(pairToken(names[first]!, names[second]!));
        lastPlace[number] = -1;
      }
      if (lastPlace[number] === place) continue;
      lastPlace[number] = place;
      tokenOf[kept] = number;
      placeOf[kept] = place;
      kept += 1;
    }
  }
  return kept;
}

/**
 * Whether `data` holds `wanted` at `at`, byte by byte: most tokens of a group differ in their first
 * byte, and a view and a native call per token cost more than the comparison (a phrase's full-day
 * histogram looks up three tokens in each of 2,000 pieces).
 */
function startsWith(data: Uint8Array, at: number, wanted: Uint8Array): boolean {
  if (at + wanted.length > data.length) return false;
  for (let index = 0; index < wanted.length; index += 1) if (data[at + index] !== wanted[index]) return false;
  return true;
}

/** Where `token`'s places are in a group's value, and how many; null when no entry of the piece holds it. */
function find(data: Uint8Array, token: string): { reader: Reader; count: number; end: number } | null {
  const wanted = Buffer.from(token);
  const reader = new Reader(data);
  while (reader.at < data.length) {
    const length = reader.varint();
    const same = length === wanted.length && startsWith(data, reader.at, wanted);
    reader.at += length;
    const count = reader.varint();
    const bytes = reader.varint();
    if (reader.at + bytes > data.length) throw new RangeError("postings: a token's places run past the end");
    if (same) return { reader, count, end: reader.at + bytes };
    reader.at += bytes;
  }
  return null;
}

/** How many entries of the piece hold `token` (`data`: the value of the token's group). */
export function countOf(data: Uint8Array, token: string): number {
  return find(data, token)?.count ?? 0;
}

/** The places of the entries that hold `token`, ascending (`data`: the value of the token's group). */
export function placesOf(data: Uint8Array, token: string): number[] {
  const found = find(data, token);
  if (found === null) return [];
  const { reader, end } = found;
  const places: number[] = [];
  let place = 0;
  while (reader.at < end) {
    place += reader.varint();
    places.push(place);
  }
  return places;
}

/**
 * The places of the entries that hold a token starting with `prefix`, in any order and possibly
 * repeated (`data`: a group's value: the one of groupOfPrefix, or each of them for a short prefix).
 */
export function placesWithPrefix(data: Uint8Array, prefix: string): number[] {
  const wanted = Buffer.from(prefix);
  const reader = new Reader(data);
  const places: number[] = [];
  while (reader.at < data.length) {
    const length = reader.varint();
    const starts = length >= wanted.length && startsWith(data, reader.at, wanted);
    reader.at += length;
    reader.varint(); // how many
    const bytes = reader.varint();
    const end = reader.at + bytes;
    if (end > data.length) throw new RangeError("postings: a token's places run past the end");
    if (!starts) {
      reader.at = end;
      continue;
    }
    let place = 0;
    while (reader.at < end) {
      place += reader.varint();
      places.push(place);
    }
  }
  return places;
}

/**
 * The times of a piece's entries in place order (ascending, epoch ms): each as its distance from the
 * one before, the first from `first` (0 when it is `first`). About a byte an entry at 100 entries a second.
 */
export function encodeTimes(first: number, times: readonly number[]): Buffer {
  const encoded = new Bytes();
  let previous = first;
  for (const time of times) {
    if (time < previous) throw new RangeError('postings: times must be ascending from the first');
    encoded.varint(time - previous);
    previous = time;
  }
  return encoded.take();
}

/** The `count` times encodeTimes wrote from `first`. */
export function timesOf(data: Uint8Array, first: number, count: number): number[] {
  const reader = new Reader(data);
  const times: number[] = [];
  let time = first;
  for (let place = 0; place < count; place += 1) {
    time += reader.varint();
    times.push(time);
  }
  if (reader.at !== data.length) throw new RangeError('postings: times left over');
  return times;
}
