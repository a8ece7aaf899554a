import type { AttributeValue } from '../store/log-store.js';
import { DocumentWalk, dottedName, MAX_DEPTH, MAX_KEYS, type FlatDocument } from './flatten.js';

/**
 * A JSON document's text flattened as `flattenDocument(JSON.parse(text))` flattens it, read straight
 * from the text: no object for the document and each of its nested objects, which JSON.parse makes
 * and the walk then reads once (most of `_bulk`'s work per document, and of its garbage). Only the
 * shape shippers send is read here: objects of scalars, objects and arrays (an array, or an object
 * MAX_DEPTH deep, is parsed alone and kept as its JSON text, as the walk keeps it), no raw control
 * characters or whitespace but spaces, no duplicate or numeric keys (which reorder an object), fewer
 * than MAX_KEYS fields. Any other text, and any text that is no JSON, answers `undefined`: the caller
 * parses and flattens it the general way, which reads it (or refuses it) as before.
 * test/logs/ingest/flatten-json.test.ts compares the two.
 */
export function flattenJsonText(
  text: string,
  reserved?: ReadonlyMap<string, number>,
  reservedValues: (AttributeValue | undefined)[] = [],
): FlatDocument | undefined {
  // Tabs, carriage returns and raw control characters (which JSON refuses inside strings): the general way.
  if (CONTROL.test(text)) return undefined;
  const scan = new JsonScan(text, new DocumentWalk(reserved, reservedValues), reserved ?? NO_RESERVED);
  const flat = scan.document();
  if (flat === undefined) {
    // The caller reuses the reserved values' array: left as it was given (all undefined).
    reservedValues.fill(undefined);
    return undefined;
  }
  return flat;
}

// eslint-disable-next-line no-control-regex -- control characters are what JSON refuses raw in strings
const CONTROL = /[\u0000-\u001f]/;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const SPACE = 0x20;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN = 0x7b;
const CLOSE = 0x7d;
const BRACKET = 0x5b;
const BRACKET_CLOSE = 0x5d;
const MINUS = 0x2d;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;

/** Thrown (and caught in `document`) when the text is not of the shape read here. */
const NOT_HERE = new Error('not read here');

/**
 * A key as documents of one shape have it under one parent: compared in place in the text (no
 * string sliced, hashed and looked up for it), its field's name and reserved slot found once.
 */
interface KeyShape {
  /** The key's text (without escapes). */
  key: string;
  /** The field's name (dotted below its parent's). */
  name: string;
  /** Its slot among the reserved names; -1 when it is none. */
  slot: number;
  /** The keys of the object it held, when it held one. */
  members: ObjectShape | undefined;
  /** The number of the object it was last seen in: seen twice in one object, it is a duplicate. */
  seenIn: number;
  /** The key that came after it in the last object of the shape: the one looked for first. */
  next: KeyShape | undefined;
}

/** The keys seen in an object (one place of a document), in the order they were first seen. */
interface ObjectShape {
  /** The name of the object's field: its members' names are dotted below it ('' at the top). */
  prefix: string;
  keys: KeyShape[];
  /** The key that came first in the last object of the shape. */
  first: KeyShape | undefined;
}

/**
 * Keys remembered, by reserved names: client data, so bounded (MAX_SHAPE_KEYS in all, at most
 * MAX_OBJECT_KEYS per object, of at most MAX_KEY_LENGTH characters, at most MAX_DEPTH deep) and
 * forgotten when full; a document with a key not remembered (long, with escapes, or numeric) goes
 * the general way.
 */
const roots = new Map<ReadonlyMap<string, number>, ObjectShape>();
const NO_RESERVED: ReadonlyMap<string, number> = new Map();
let shapeKeys = 0;
const MAX_SHAPE_KEYS = 4_096;
const MAX_OBJECT_KEYS = 64;
const MAX_KEY_LENGTH = 256;
let objectsRead = 0;

function rootOf(reserved: ReadonlyMap<string, number>): ObjectShape {
  let root = roots.get(reserved);
  if (!root) {
    // A root counts as a key: the Map of roots is bounded with the keys.
    if (shapeKeys >= MAX_SHAPE_KEYS) {
      roots.clear();
      shapeKeys = 0;
    }
    roots.set(reserved, (root = { prefix: '', keys: [], first: undefined }));
    shapeKeys += 1;
  }
  return root;
}

class JsonScan {
  private at = 0;
  /** Where the text's next backslash is (its length when none): strings before it have no escapes. */
  private backslash: number;

  constructor(
    private readonly text: string,
    private readonly walk: DocumentWalk,
    private readonly reserved: ReadonlyMap<string, number>,
  ) {
    const first = text.indexOf('\\');
    this.backslash = first === -1 ? text.length : first;
  }

  document(): FlatDocument | undefined {
    try {
      this.spaces();
      if (this.text.charCodeAt(this.at) !== OPEN) return undefined;
      this.object(rootOf(this.reserved), 0);
      this.spaces();
      if (this.at !== this.text.length) return undefined;
      return this.walk.result();
    } catch (error) {
      if (error === NOT_HERE) return undefined;
      throw error;
    }
  }

  private spaces(): void {
    while (this.text.charCodeAt(this.at) === SPACE) this.at += 1;
  }

  private expect(code: number): void {
    this.spaces();
    if (this.text.charCodeAt(this.at) !== code) throw NOT_HERE;
    this.at += 1;
    this.spaces();
  }

  /** An object at `this.at` (its `{`), of the shape `shape`, at `depth` as DocumentWalk counts it. */
  private object(shape: ObjectShape, depth: number): void {
    const { text } = this;
    this.at += 1;
    this.spaces();
    if (text.charCodeAt(this.at) === CLOSE) {
      this.at += 1;
      return;
    }
    const object = (objectsRead += 1);
    let previous: KeyShape | undefined;
    for (;;) {
      if (text.charCodeAt(this.at) !== QUOTE) throw NOT_HERE;
      const key = this.key(shape, previous ? previous.next : shape.first);
      if (key.seenIn === object) throw NOT_HERE;
      key.seenIn = object;
      if (previous) previous.next = key;
      else shape.first = key;
      previous = key;
      this.expect(COLON);
      this.value(key, depth + 1);
      this.spaces();
      const next = text.charCodeAt(this.at);
      this.at += 1;
      if (next === CLOSE) return;
      if (next !== COMMA) throw NOT_HERE;
      this.spaces();
    }
  }

  /** The key at `this.at` (its opening quote): `guess` (what followed the key before it last time), else any key of the shape, else a new one. */
  private key(shape: ObjectShape, guess: KeyShape | undefined): KeyShape {
    const { text } = this;
    const start = this.at + 1;
    const end = text.indexOf('"', start);
    // Escapes (a key with one remembered would match here too, but none is), no closing quote: the general way.
    if (end === -1 || end > this.backslash) throw NOT_HERE;
    this.at = end + 1;
    const length = end - start;
    if (guess !== undefined && guess.key.length === length && matches(text, guess.key, start)) return guess;
    const { keys } = shape;
    for (let index = 0; index < keys.length; index += 1) {
      const key = keys[index]!;
      if (key.key.length === length && matches(text, key.key, start)) return key;
    }
    // Long keys (not remembered: the memory would be as large as they are), numeric keys (which
    // objects enumerate first): the general way.
    if (end - start > MAX_KEY_LENGTH) throw NOT_HERE;
    const keyText = text.slice(start, end);
    if (isDigits(keyText)) throw NOT_HERE;
    if (keys.length >= MAX_OBJECT_KEYS || shapeKeys >= MAX_SHAPE_KEYS) {
      // Full: forgotten, and this document read the general way (another key of it may be remembered as seen).
      if (shapeKeys >= MAX_SHAPE_KEYS) {
        roots.clear();
        shapeKeys = 0;
      } else {
        keys.length = 0;
        shape.first = undefined;
      }
      throw NOT_HERE;
    }
    const name = shape.prefix === '' ? keyText : dottedName(shape.prefix, keyText);
    const key: KeyShape = { key: keyText, name, slot: this.reserved.get(name) ?? -1, members: undefined, seenIn: 0, next: undefined };
    keys.push(key);
    shapeKeys += 1;
    return key;
  }

  /** A member's value, of the key `key`, as DocumentWalk.value takes it. */
  private value(key: KeyShape, depth: number): void {
    const { text, walk } = this;
    if (walk.count >= MAX_KEYS) throw NOT_HERE;
    const code = text.charCodeAt(this.at);
    if (code === QUOTE) walk.setAt(key.name, key.slot, this.string());
    else if (code === OPEN && depth < MAX_DEPTH) this.object((key.members ??= { prefix: key.name, keys: [], first: undefined }), depth);
    else if (code === OPEN || code === BRACKET) {
      // An array, or an object MAX_DEPTH deep: kept as its JSON text, as the walk keeps it.
      const end = this.compositeEnd();
      let value: unknown;
      try {
        value = JSON.parse(text.slice(this.at, end));
      } catch {
        throw NOT_HERE;
      }
      this.at = end;
      this.backslashAfter(end);
      if (!walk.setAsText(key.name, key.slot, value as object, depth)) throw NOT_HERE;
    } else if (code === MINUS || (code >= ZERO && code <= NINE)) {
      const number = this.number();
      if (Number.isFinite(number)) walk.setAt(key.name, key.slot, number);
    } else if (text.startsWith('true', this.at)) {
      this.at += 4;
      walk.setAt(key.name, key.slot, true);
    } else if (text.startsWith('false', this.at)) {
      this.at += 5;
      walk.setAt(key.name, key.slot, false);
    } else if (text.startsWith('null', this.at)) this.at += 4;
    else throw NOT_HERE;
  }

  /** The next backslash from `at` on, once the text before it is read. */
  private backslashAfter(at: number): void {
    if (this.backslash >= at) return;
    const next = this.text.indexOf('\\', at);
    this.backslash = next === -1 ? this.text.length : next;
  }

  /** Where the array or object at `this.at` ends (after its closing bracket), its strings skipped. */
  private compositeEnd(): number {
    const { text } = this;
    let open = 0;
    for (let at = this.at; at < text.length; at += 1) {
      const code = text.charCodeAt(at);
      if (code === OPEN || code === BRACKET) open += 1;
      else if (code === CLOSE || code === BRACKET_CLOSE) {
        open -= 1;
        if (open === 0) return at + 1;
      } else if (code === QUOTE) {
        // To the closing quote: the first after an even run of backslashes.
        for (at += 1; at < text.length && text.charCodeAt(at) !== QUOTE; at += 1) if (text.charCodeAt(at) === BACKSLASH) at += 1;
      }
    }
    throw NOT_HERE;
  }

  /** A string at `this.at` (its opening quote): sliced when it has no escapes, else JSON.parse reads it. */
  private string(): string {
    const { text } = this;
    const start = this.at + 1;
    const end = text.indexOf('"', start);
    if (end === -1) throw NOT_HERE;
    if (end < this.backslash) {
      this.at = end + 1;
      return text.slice(start, end);
    }
    // Escapes: the closing quote is the first one after an even run of backslashes.
    let close = start;
    for (;;) {
      const code = text.charCodeAt(close);
      if (Number.isNaN(code)) throw NOT_HERE;
      if (code === QUOTE) break;
      close += code === BACKSLASH ? 2 : 1;
    }
    this.at = close + 1;
    this.backslashAfter(this.at);
    try {
      return JSON.parse(text.slice(start - 1, close + 1)) as string;
    } catch {
      throw NOT_HERE;
    }
  }

  /** A number as JSON writes it (-?(0|[1-9]d*)(.d+)?([eE][+-]?d+)?), read as JSON.parse reads it. */
  private number(): number {
    const { text } = this;
    const start = this.at;
    let at = start;
    if (text.charCodeAt(at) === MINUS) at += 1;
    if (text.charCodeAt(at) === ZERO) at += 1;
    else at = digits(text, at, true);
    if (text.charCodeAt(at) === DOT) at = digits(text, at + 1, true);
    const e = text.charCodeAt(at);
    if (e === 0x65 || e === 0x45) {
      at += 1;
      const sign = text.charCodeAt(at);
      if (sign === 0x2b || sign === MINUS) at += 1;
      at = digits(text, at, true);
    }
    this.at = at;
    return Number(text.slice(start, at));
  }
}

/** The end of a run of digits from `at`; at least one when `required`. */
function digits(text: string, at: number, required: boolean): number {
  const start = at;
  for (let code = text.charCodeAt(at); code >= ZERO && code <= NINE; code = text.charCodeAt(at)) at += 1;
  if (required && at === start) throw NOT_HERE;
  return at;
}

/** Whether `text` has `part` at `at` (which leaves room for it): startsWith, without a builtin's call for a few characters. */
function matches(text: string, part: string, at: number): boolean {
  for (let index = 0; index < part.length; index += 1) if (text.charCodeAt(at + index) !== part.charCodeAt(index)) return false;
  return true;
}

/** Whether a key is digits only: an array index (enumerated before the other keys) is one. */
function isDigits(key: string): boolean {
  if (key.length === 0) return false;
  for (let index = 0; index < key.length; index += 1) {
    const code = key.charCodeAt(index);
    if (code < ZERO || code > NINE) return false;
  }
  return true;
}
