import type { AttributeValue } from '../store/log-store.js';
import { dict, type Dict } from '../../../shared/dict.js';

/** Objects nested this deep are kept as JSON text; a document's first MAX_KEYS fields are kept. */
export const MAX_DEPTH = 8;
export const MAX_KEYS = 512;
/** Deeper documents are refused (Elasticsearch refuses past its mapping depth too); JSON.stringify recurses. */
export const MAX_DOCUMENT_DEPTH = 100;

/** Whether objects/arrays nest deeper than `limit` levels; iterative, so any depth is safe to ask about. */
export function nestedDeeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (typeof current !== 'object' || current === null) continue;
    if (depth >= limit) return true;
    for (const inner of Object.values(current)) if (typeof inner === 'object' && inner !== null) stack.push([inner, depth + 1]);
  }
  return false;
}

/** How many names a target of flattenInto holds, kept as it fills (not counted again at every value). */
export interface FieldCount {
  count: number;
}

/**
 * Flattens nested objects to dotted names ({"k8s": {"pod": "a"}} -> {"k8s.pod": "a"}). Arrays become
 * JSON text, nulls are dropped. Depth and key count are bounded so a hostile document cannot blow up.
 * `fields`: the names `target` holds, when the caller fills one target over several calls.
 */
export function flattenInto(
  target: Dict<AttributeValue>,
  value: unknown,
  prefix: string,
  depth = 0,
  fields: FieldCount = { count: Object.keys(target).length },
): void {
  if (value === null || value === undefined) return;
  if (fields.count >= MAX_KEYS) return;
  if (typeof value === 'string' || typeof value === 'boolean') {
    if (prefix) put(target, prefix, value, fields);
    return;
  }
  if (typeof value === 'number') {
    if (prefix && Number.isFinite(value)) put(target, prefix, value, fields);
    return;
  }
  if (Array.isArray(value) || depth >= MAX_DEPTH) {
    // The rest becomes JSON text, unless it nests too deep to write out (callers refuse such documents first).
    if (prefix && !nestedDeeperThan(value, MAX_DOCUMENT_DEPTH)) put(target, prefix, JSON.stringify(value), fields);
    return;
  }
  if (typeof value === 'object') {
    const keys = Object.keys(value);
    for (let i = 0; i < keys.length; i += 1) {
      const key = keys[i]!;
      flattenInto(target, (value as Record<string, unknown>)[key], prefix ? dottedName(prefix, key) : key, depth + 1, fields);
    }
  }
}

function put(target: Dict<AttributeValue>, name: string, value: AttributeValue, fields: FieldCount): void {
  if (target[name] === undefined) fields.count += 1;
  target[name] = value;
}

/** A flattened document: its fields, and the values of the reserved names (by their slot), kept apart. */
export interface FlatDocument {
  fields: Dict<AttributeValue>;
  reserved: (AttributeValue | undefined)[];
}

/**
 * A whole source document flattened as flattenInto does, and refused (undefined) when it nests
 * deeper than MAX_DOCUMENT_DEPTH, in one walk: the depth is only searched below where flattening
 * stops (arrays, MAX_DEPTH, MAX_KEYS), as everything above it is walked anyway. Every `_bulk`
 * document passes here: no array of keys per call, no stack of pairs. Fields named in `reserved`
 * (name -> slot) go to `reserved[slot]` instead of `fields` (and count towards MAX_KEYS alike), so
 * that the caller can take its core fields without deleting from `fields`; into `reservedValues`
 * when given (every slot undefined), which the caller may reuse from document to document.
 */
export function flattenDocument(
  doc: Record<string, unknown>,
  reserved?: ReadonlyMap<string, number>,
  reservedValues: (AttributeValue | undefined)[] = [],
): FlatDocument | undefined {
  const walk = new DocumentWalk(reserved, reservedValues);
  return walk.object(doc, '', 0) ? walk.result() : undefined;
}

/** A document's fields as a walk over it sets them (here, or over its text: flatten-json.ts). */
export class DocumentWalk {
  readonly fields = dict<AttributeValue>();
  /** How many fields (reserved ones too) are set. */
  count = 0;

  /** `reserved`: where the reserved names' values go (by slot), all undefined: a caller may reuse one array from document to document. */
  constructor(
    private readonly reservedNames: ReadonlyMap<string, number> | undefined,
    private readonly reserved: (AttributeValue | undefined)[],
  ) {}

  result(): FlatDocument {
    return { fields: this.fields, reserved: this.reserved };
  }

  /** A field; the empty name (a top-level `""` key) is not kept, as flattenInto does not keep it. */
  set(name: string, value: AttributeValue): void {
    this.setAt(name, this.reservedNames?.get(name) ?? -1, value);
  }

  /** set, the name's reserved slot (-1: none) known. */
  setAt(name: string, slot: number, value: AttributeValue): void {
    if (name === '') return;
    if (slot !== -1) {
      if (this.reserved[slot] === undefined) this.count += 1;
      this.reserved[slot] = value;
      return;
    }
    if (this.fields[name] === undefined) this.count += 1;
    this.fields[name] = value;
  }

  /** The members of a plain object at `depth` (below MAX_DEPTH); false when the document nests too deep. */
  object(value: Record<string, unknown>, prefix: string, depth: number): boolean {
    // for-in, not Object.keys: no array of names per object (V8 iterates a parsed object's own
    // names from its shape's cache); inherited names are skipped as Object.keys skips them.
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue;
      if (!this.value(value[key], prefix === '' ? key : dottedName(prefix, key), depth + 1)) return false;
    }
    return true;
  }

  private value(value: unknown, name: string, depth: number): boolean {
    if (value === null || value === undefined) return true;
    const full = this.count >= MAX_KEYS;
    if (typeof value !== 'object') {
      if (full) return true;
      if (typeof value === 'string' || typeof value === 'boolean') this.set(name, value);
      else if (typeof value === 'number' && Number.isFinite(value)) this.set(name, value);
      return true;
    }
    if (!full && !Array.isArray(value) && depth < MAX_DEPTH) return this.object(value as Record<string, unknown>, name, depth);
    return this.setAsText(name, this.reservedNames?.get(name) ?? -1, value, depth);
  }

  /**
   * Where flattening stops (an array, an object MAX_DEPTH deep, past MAX_KEYS fields), what is below
   * is searched for the document's depth (false: the document nests too deep), and kept as JSON text.
   */
  setAsText(name: string, slot: number, value: object, depth: number): boolean {
    if (nestedDeeperThan(value, MAX_DOCUMENT_DEPTH - depth)) return false;
    if (this.count < MAX_KEYS) this.setAt(name, slot, JSON.stringify(value));
    return true;
  }
}

/**
 * Dotted names already made, by prefix then key: the documents of a batch repeat their names, and a
 * name made once is not joined and hashed again for every document. Names are a client's: the
 * memory is bounded (at most NAME_MEMORY names of at most 256 characters) and starts over when full.
 */
const NAME_MEMORY = 4_096;
const namesByPrefix = new Map<string, Map<string, string>>();
let namesKept = 0;

export function dottedName(prefix: string, key: string): string {
  const names = namesByPrefix.get(prefix);
  const known = names?.get(key);
  if (known !== undefined) return known;
  const name = `${prefix}.${key}`;
  if (name.length > 256) return name;
  if (namesKept >= NAME_MEMORY) {
    namesByPrefix.clear();
    namesKept = 0;
  }
  if (names) names.set(key, name);
  else namesByPrefix.set(prefix, new Map([[key, name]]));
  namesKept += 1;
  return name;
}
