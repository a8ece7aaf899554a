import { deflateRawSync } from 'node:zlib';
import type { LogEntry } from '../../src/logs/modules/store/index.js';
import { IDS_PER_SECOND } from '../../src/logs/modules/store/sqlite/time-ids.js';
import { varintSize, writeVarintAt } from '../../src/shared/encoding/varint.js';

/** What the spikes share (block-spike.ts, postings-spike.ts): ids, facets and blocks as the store would make them. */

/** Time-ordered ids as time-ids.ts gives them, for entries that arrive in time order (the generator's). */
export class SpikeIds {
  #second = -1;
  #seq = 0;

  next(timestamp: number): number {
    const second = Math.floor(timestamp / 1000);
    if (second !== this.#second) {
      this.#second = second;
      this.#seq = 0;
    }
    return second * IDS_PER_SECOND + this.#seq++;
  }
}

/**
 * Entries with their ids as one deflated block: columns, not rows, so that each column's values sit
 * together and deflate better.
 */
export function deflatedBlock(entries: readonly LogEntry[], ids: readonly number[], level = 1): Buffer {
  const columns = {
    id: ids,
    ts: entries.map((entry) => entry.timestamp),
    level: entries.map((entry) => entry.level ?? null),
    service: entries.map((entry) => entry.service ?? null),
    host: entries.map((entry) => entry.host ?? null),
    trace_id: entries.map((entry) => entry.trace_id ?? null),
    span_id: entries.map((entry) => entry.span_id ?? null),
    message: entries.map((entry) => entry.message),
    attributes: entries.map((entry) => entry.attributes ?? {}),
  };
  return deflateRawSync(JSON.stringify(columns), { level });
}

/**
 * The spikes' facets, numbered per field=value as the store numbers them (facets.ts): a token per
 * short string, boolean or whole number of level, service, host and the attributes; past 1,000
 * values a field is not faceted. `prefix` keeps the tokens apart from words where both share an index.
 */
export class SpikeFacets {
  readonly #numbers = new Map<string, number>();
  readonly #valuesPerField = new Map<string, number>();

  constructor(private readonly prefix: string) {}

  token(field: string, value: string | number | boolean): string | null {
    const key = `${field}\u0000${String(value)}`;
    let number = this.#numbers.get(key);
    if (number === undefined) {
      const count = this.#valuesPerField.get(field) ?? 0;
      if (count >= 1000) return null;
      this.#valuesPerField.set(field, count + 1);
      number = this.#numbers.size;
      this.#numbers.set(key, number);
    }
    return `${this.prefix}${number.toString(36)}`;
  }

  of(entry: LogEntry): string[] {
    const tokens: string[] = [];
    for (const [field, value] of [
      ['level', entry.level],
      ['service', entry.service],
      ['host', entry.host],
      ...Object.entries(entry.attributes ?? {}),
    ] as [string, unknown][]) {
      if (typeof value === 'string' ? value.length <= 64 : typeof value === 'boolean' || Number.isSafeInteger(value)) {
        const token = this.token(field, value as string);
        if (token) tokens.push(token);
      }
    }
    return tokens;
  }
}

const zigzag = (value: number): number => (value >= 0 ? 2 * value : -2 * value - 1);
const unzigzag = (value: number): number => (value % 2 === 0 ? value / 2 : -(value + 1) / 2);

/**
 * A batch's ids, ascending, as runs of consecutive ids of one second: the second (from the one before,
 * zigzag-encoded), the first id's place in its second, how many (LEB128 varints). A batch of 5,000
 * entries over 43 seconds is 43 runs, a few hundred bytes.
 */
export function encodeLayout(ids: readonly number[]): Buffer {
  const runs: number[] = [];
  let previousSecond = 0;
  for (let start = 0; start < ids.length;) {
    const first = ids[start]!;
    const second = Math.floor(first / IDS_PER_SECOND);
    let end = start + 1;
    while (end < ids.length && ids[end] === first + (end - start) && Math.floor(ids[end]! / IDS_PER_SECOND) === second) end += 1;
    if (end < ids.length && ids[end]! <= ids[end - 1]!) throw new RangeError('a batch layout needs ascending ids');
    runs.push(zigzag(second - previousSecond), first - second * IDS_PER_SECOND, end - start);
    previousSecond = second;
    start = end;
  }
  const layout = Buffer.alloc(runs.reduce((size, value) => size + varintSize(value), 0));
  runs.reduce((at, value) => writeVarintAt(layout, at, value), 0);
  return layout;
}

/** The ids of ascending `places` of a batch, by its layout. */
export function idsOfPlaces(layout: Uint8Array, places: readonly number[]): number[] {
  let at = 0;
  const varint = (): number => {
    let value = 0;
    for (let scale = 1; ; scale *= 0x80) {
      const byte = layout[at++];
      if (byte === undefined) throw new RangeError('a varint runs past the end');
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return value;
    }
  };
  const ids: number[] = [];
  let second = 0;
  let runStart = 0; // the place of the run's first entry
  let runFirst = 0; // its id's place in its second
  let runLength = 0;
  for (const place of places) {
    while (place >= runStart + runLength) {
      runStart += runLength;
      second += unzigzag(varint());
      runFirst = varint();
      runLength = varint();
    }
    ids.push(second * IDS_PER_SECOND + runFirst + (place - runStart));
  }
  return ids;
}
