import type { StoredLogEntry } from '../store/log-store.js';

/** The API form of an entry: `@timestamp` as ISO 8601. */
export function entryView(entry: StoredLogEntry) {
  const { timestamp, ...rest } = entry;
  return { ...rest, '@timestamp': new Date(timestamp).toISOString() };
}
