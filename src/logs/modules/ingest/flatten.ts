import type { AttributeValue } from '../store/log-store.js';

const MAX_DEPTH = 8;
const MAX_KEYS = 512;

/**
 * Flattens nested objects to dotted names ({"k8s": {"pod": "a"}} -> {"k8s.pod": "a"}). Arrays become
 * JSON text, nulls are dropped. Depth and key count are bounded so a hostile document cannot blow up.
 */
export function flattenInto(target: Record<string, AttributeValue>, value: unknown, prefix: string, depth = 0): void {
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
    if (prefix) target[prefix] = JSON.stringify(value);
    return;
  }
  if (typeof value === 'object') {
    for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
      flattenInto(target, inner, prefix ? `${prefix}.${key}` : key, depth + 1);
    }
  }
}
