import type { AttributeValue } from '../store/log-store.js';
import { type Dict } from '../../../shared/dict.js';

const MAX_DEPTH = 8;
const MAX_KEYS = 512;
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

/**
 * Flattens nested objects to dotted names ({"k8s": {"pod": "a"}} -> {"k8s.pod": "a"}). Arrays become
 * JSON text, nulls are dropped. Depth and key count are bounded so a hostile document cannot blow up.
 */
export function flattenInto(target: Dict<AttributeValue>, value: unknown, prefix: string, depth = 0): void {
  if (value === null || value === undefined) return;
  if (Object.keys(target).length >= MAX_KEYS) return;
  if (typeof value === 'string' || typeof value === 'boolean') {
    if (prefix) target[prefix] = value;
    return;
  }
  if (typeof value === 'number') {
    if (prefix && Number.isFinite(value)) target[prefix] = value;
    return;
  }
  if (Array.isArray(value) || depth >= MAX_DEPTH) {
    // The rest becomes JSON text, unless it nests too deep to write out (callers refuse such documents first).
    if (prefix && !nestedDeeperThan(value, MAX_DOCUMENT_DEPTH)) target[prefix] = JSON.stringify(value);
    return;
  }
  if (typeof value === 'object') {
    for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
      flattenInto(target, inner, prefix ? `${prefix}.${key}` : key, depth + 1);
    }
  }
}
