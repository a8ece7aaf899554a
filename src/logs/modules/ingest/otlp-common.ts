import type { AttributeValue } from '../store/log-store.js';
import { flattenInto } from './flatten.js';
import { plainValue } from './otlp-logs.js';

/** Helpers shared by the OTLP trace and metric mappings (JSON or decoded protobuf). */
export type Obj = Record<string, unknown>;

export const isObj = (value: unknown): value is Obj => typeof value === 'object' && value !== null && !Array.isArray(value);
export const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/** OTLP KeyValue list -> flattened dotted attributes. */
export function attributesOf(values: unknown): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  for (const kv of list(values)) {
    if (isObj(kv) && typeof kv.key === 'string') flattenInto(out, plainValue(kv.value), kv.key);
  }
  return out;
}

/** Nanoseconds since the epoch (decimal string or number) -> BigInt; undefined when absent or zero; null when unreadable. */
export function nanos(value: unknown): bigint | undefined | null {
  if (value === undefined || value === null || value === '' || value === 0 || value === '0') return undefined;
  if (typeof value === 'number') return Number.isSafeInteger(value) && value > 0 ? BigInt(value) : Number.isFinite(value) && value > 0 ? BigInt(Math.floor(value)) : null;
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

const NUL = /\u0000/g;
/** PostgreSQL text cannot hold NUL: it becomes U+FFFD, as in log ingestion. */
export const clean = (text: string): string => text.replace(NUL, '\uFFFD');

export function cleanAttributes(attributes: Record<string, AttributeValue>): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  for (const [key, value] of Object.entries(attributes)) out[clean(key)] = typeof value === 'string' ? clean(value) : value;
  return out;
}
