import type { Kysely } from 'kysely';
import type { LogStore } from './log-store.js';
import { PostgresLogStore } from './postgres-store.js';
import { SqliteLogStore } from './sqlite-store.js';

export * from './log-store.js';
export { logStoreMigrations } from './migrations.js';
export { parseQuery } from './query/parser.js';
export type { QueryNode } from './query/ast.js';

/** Reserved for tuning; no option is needed today (see docs/log-store.md). */
export type LogStoreOptions = Record<string, never>;

/**
 * The log store on the logs service's database (opened with openDatabase, migrated with
 * logStoreMigrations). Writes go through the same Kysely connection: measured, json_each/
 * json_to_recordset batches meet the ingest target without reaching for the raw driver.
 */
export function createLogStore(db: Kysely<any>, dialect: 'sqlite' | 'postgres', _options: LogStoreOptions = {}): LogStore {
  return dialect === 'sqlite' ? new SqliteLogStore(db) : new PostgresLogStore(db);
}
