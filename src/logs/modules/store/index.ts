import type { Kysely } from 'kysely';
import type { LogStore } from './log-store.js';

// Placeholder until the log store branch is merged: it replaces this file.
export function createLogStore(_db: Kysely<any>, _dialect: 'sqlite' | 'postgres'): LogStore {
  throw new Error('log store not implemented');
}
