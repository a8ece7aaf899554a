import { isPlainObject, storableText, type PlainObject } from '../../../shared/text/storable-text.js';
import type { AttributeValue } from '../store/log-store.js';
import { flattenInto } from './flatten.js';
import { dict, type Dict } from '../../../shared/dict.js';

/** Reading OTLP requests (JSON, or protobuf decoded to the same shape), for every signal's mapping. */

export const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/** An int64 (decimal text) as a number where one holds it exactly, else as its text. */
export function intValueOf(text: string): number | string {
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : text;
}

/** An AnyValue as a plain JS value. */
export function plainValue(any: unknown, depth = 0): unknown {
  if (!isPlainObject(any) || depth > 16) return undefined;
  if ('stringValue' in any) return String(any.stringValue);
  if ('boolValue' in any) return Boolean(any.boolValue);
  if ('intValue' in any) return intValueOf(String(any.intValue));
  if ('doubleValue' in any) return Number(any.doubleValue);
  if ('bytesValue' in any)
    return typeof any.bytesValue === 'string' ? any.bytesValue : Buffer.from(any.bytesValue as Uint8Array).toString('base64');
  if ('arrayValue' in any) return list((any.arrayValue as PlainObject | undefined)?.values).map((v) => plainValue(v, depth + 1));
  if ('kvlistValue' in any) return keyValues((any.kvlistValue as PlainObject | undefined)?.values, depth + 1);
  return undefined;
}

function keyValues(values: unknown, depth = 0): Dict<unknown> {
  const out = dict<unknown>();
  for (const kv of list(values)) {
    if (isPlainObject(kv) && typeof kv.key === 'string') out[kv.key] = plainValue(kv.value, depth);
  }
  return out;
}

/** OTLP KeyValue list -> flattened dotted attributes (a repeated key: the last one wins). */
export function attributesOf(values: unknown): Dict<AttributeValue> {
  const out = dict<AttributeValue>();
  const plain = keyValues(values);
  // One count of `out`'s names for every key (flattenInto would count them again at each).
  const fields = { count: 0 };
  for (const key in plain) flattenInto(out, plain[key], key, 0, fields);
  return out;
}

/**
 * `Object.assign(target, attributesOf(values))` without its two dictionaries when that makes the same
 * attributes: each key once and every value a scalar (what SDKs send), so that nothing is flattened
 * and no key repeats; else exactly that.
 */
export function assignAttributes(target: Dict<AttributeValue>, values: unknown): void {
  const keyValueList = list(values);
  if (!scalarsOnce(keyValueList)) {
    Object.assign(target, attributesOf(values));
    return;
  }
  const fields = { count: 0 };
  for (const kv of keyValueList) {
    if (isPlainObject(kv) && typeof kv.key === 'string') flattenInto(target, plainValue(kv.value), kv.key, 0, fields);
  }
}

/** How many attributes assignAttributes reads without attributesOf's dictionaries at most (and otlp-logs-decode.ts's plain records). */
export const PLAIN_ATTRIBUTES = 64;

/** Whether a short KeyValue list has each key once and no array or key-value list as a value. */
function scalarsOnce(keyValueList: readonly unknown[]): boolean {
  if (keyValueList.length > PLAIN_ATTRIBUTES) return false;
  for (let index = 0; index < keyValueList.length; index += 1) {
    const kv = keyValueList[index];
    if (!isPlainObject(kv)) continue;
    const value = kv.value;
    if (isPlainObject(value) && ('arrayValue' in value || 'kvlistValue' in value)) return false;
    for (let before = 0; before < index; before += 1) {
      const earlier = keyValueList[before];
      if (isPlainObject(earlier) && earlier.key === kv.key) return false;
    }
  }
  return true;
}

/** Attributes as both databases can store them (storableText on names and text values). */
export function storableAttributes(attributes: Record<string, AttributeValue>): Dict<AttributeValue> {
  const out = dict<AttributeValue>();
  for (const [key, value] of Object.entries(attributes)) out[storableText(key)] = typeof value === 'string' ? storableText(value) : value;
  return out;
}

/** Nanoseconds since the epoch (decimal string or number) -> BigInt; undefined when absent or zero; null when unreadable. */
export function nanos(value: unknown): bigint | undefined | null {
  if (value === undefined || value === null || value === '' || value === 0 || value === '0') return undefined;
  if (typeof value === 'number')
    return Number.isSafeInteger(value) && value > 0
      ? BigInt(value)
      : Number.isFinite(value) && value > 0
        ? BigInt(Math.floor(value))
        : null;
  if (typeof value === 'string' && /^\d{1,20}$/.test(value)) return BigInt(value);
  return null;
}

/** Trace and span ids: hex in OTLP/JSON, bytes in protobuf; undefined when absent or all zero; null when malformed. */
export function hexId(value: unknown, bytes: number): string | undefined | null {
  if (value === undefined || value === null || value === '') return undefined;
  let hex: string;
  if (typeof value === 'string') hex = value.toLowerCase();
  else if (value instanceof Uint8Array) hex = Buffer.from(value).toString('hex');
  else return null;
  if (hex.length === 0) return undefined;
  if (hex.length !== bytes * 2 || !/^[0-9a-f]+$/.test(hex)) return null;
  return /^0+$/.test(hex) ? undefined : hex;
}
