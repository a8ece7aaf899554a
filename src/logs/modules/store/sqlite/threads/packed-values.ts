/**
 * Many values packed for the SQLite thread (write-thread.ts): their strings as one string, the rest
 * in a few arrays. Received as a structured clone, every value would become a string of its own
 * before the first row is bound; packed, the clone copies one string and the thread slices it as it
 * binds each row (docs/performance-notes.md, "Databases"). The packing can be done before a batch
 * takes the writer.
 *
 * `kinds[i]` says what value `i` is: a string ending at that offset of `text` (starting where the
 * string before it ended), null (-1), `numbers[k]` as a number (-2 - 3k) or a BigInt (-3 - 3k), or
 * `others[k]` (-4 - 3k: anything else, cloned as it is).
 */
export interface PackedValues {
  text: string;
  kinds: Int32Array;
  numbers: Float64Array;
  others: unknown[];
}

/**
 * Characters of one packed text at most: V8's strings end near 2^29, and an operator may allow
 * bodies of a gigabyte (LOGS_INGEST_BODY_LIMIT). Strings past it are sent as they are (`others`).
 */
export const MAX_PACKED_TEXT = 2 ** 28;

export function packValues(values: readonly unknown[], maxText = MAX_PACKED_TEXT): PackedValues {
  // Locals only, and the strings appended into one: faster than pushing them to an array and joining
  // it, or than a class's fields (docs/performance-notes.md, "Databases").
  const kinds = new Int32Array(values.length);
  const numbers = new Float64Array(values.length);
  const others: unknown[] = [];
  let text = '';
  let numberCount = 0;
  for (let index = 0; index < values.length; index += 1) {
    const value = values[index];
    if (typeof value === 'string' && text.length + value.length <= maxText) {
      text += value;
      kinds[index] = text.length;
    } else if (value === null || value === undefined) {
      kinds[index] = -1;
    } else if (typeof value === 'number') {
      kinds[index] = -2 - 3 * numberCount;
      numbers[numberCount++] = value;
    } else if (typeof value === 'bigint' && value <= Number.MAX_SAFE_INTEGER && value >= Number.MIN_SAFE_INTEGER) {
      kinds[index] = -3 - 3 * numberCount;
      numbers[numberCount++] = Number(value);
    } else {
      kinds[index] = -4 - 3 * others.length;
      others.push(value);
    }
  }
  // Appending makes a rope; reading a character flattens it (V8) here rather than in the structured
  // clone, which the batch sends holding the writer.
  text.charCodeAt(0);
  return { text, kinds, numbers: numbers.slice(0, numberCount), others };
}

/** Sets value `index`, packed as a number, to `value` (an id known only once a batch holds the writer). */
export function setPackedNumber(packed: PackedValues, index: number, value: number): void {
  const kind = packed.kinds[index]!;
  if (kind > -2 || (-2 - kind) % 3 !== 0) throw new Error(`setPackedNumber: value ${index} is not a number`);
  packed.numbers[(-2 - kind) / 3] = value;
}

/**
 * `unpackRows(packed, width, row)` calls `row(values)` for each `width` values, in one array reused
 * from row to row. JavaScript source, because the SQLite thread runs no TypeScript (WORKER_SOURCE
 * includes it); `unpackValues` below runs the same code here.
 */
export const UNPACK_ROWS_SOURCE = `
function unpackRows(packed, width, row) {
  const { text, kinds, numbers, others } = packed;
  const values = new Array(width);
  let start = 0;
  for (let at = 0; at < kinds.length; at += width) {
    for (let column = 0; column < width; column += 1) {
      const kind = kinds[at + column];
      if (kind >= 0) {
        values[column] = text.slice(start, kind);
        start = kind;
      } else if (kind === -1) {
        values[column] = null;
      } else {
        const k = Math.floor((-2 - kind) / 3);
        const type = (-2 - kind) % 3;
        values[column] = type === 0 ? numbers[k] : type === 1 ? BigInt(numbers[k]) : others[k];
      }
    }
    row(values);
  }
}`;

type UnpackRows = (packed: PackedValues, width: number, row: (values: unknown[]) => void) => void;
// eslint-disable-next-line @typescript-eslint/no-implied-eval -- our own constant source, so that one unpacker serves both sides
const unpackRows = (new Function(`${UNPACK_ROWS_SOURCE}\nreturn unpackRows;`) as () => UnpackRows)();

/** The values again, as they were given to packValues (undefined as null). */
export function unpackValues(packed: PackedValues): unknown[] {
  const values: unknown[] = [];
  unpackRows(packed, 1, (row) => values.push(row[0]));
  return values;
}

export const isPacked = (values: readonly unknown[] | PackedValues): values is PackedValues => !Array.isArray(values);

/** Values as given, unpacked if need be. */
export const plainValues = (values: readonly unknown[] | PackedValues): readonly unknown[] =>
  isPacked(values) ? unpackValues(values) : values;
