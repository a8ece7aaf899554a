import { sql } from 'kysely';
import { openDatabase, type Database } from '../../../src/shared/db/database.js';
import { migrateToLatest } from '../../../src/shared/db/migrator.js';
import { createLogStore, sqliteThreadDialect, type LogStore } from '../../../src/logs/modules/store/index.js';
import { logsMigrations } from '../../../src/logs/db/migrations/index.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/databases.js';
import type { DialectName } from '../../../src/shared/db/database.js';

export interface TestStore {
  store: LogStore;
  database: Database<any>;
  /** The database's URL (a second store may open it: openTestStoreAt). */
  url: string;
  close(): Promise<void>;
}

/** A migrated log store on a fresh database of the dialect, opened as the logs service opens it (SQLite writes on their thread). */
export async function openTestStore(dialect: DialectName): Promise<TestStore> {
  const testDb: TestDatabase = await createTestDatabase(dialect);
  const database = await openDatabase<any>(testDb.url, { sqliteThread: sqliteThreadDialect });
  await migrateToLatest(database.db, logsMigrations, 'logs');
  return {
    store: createLogStore(database.db, database.dialect),
    database,
    url: testDb.url,
    close: async () => {
      await database.close();
      await testDb.drop();
    },
  };
}

/** A migrated log store on an existing database (closing leaves the database in place). */
export async function openTestStoreAt(url: string): Promise<TestStore> {
  const database = await openDatabase<any>(url, { sqliteThread: sqliteThreadDialect });
  await migrateToLatest(database.db, logsMigrations, 'logs');
  return { store: createLogStore(database.db, database.dialect), database, url, close: () => database.close() };
}

export const MINUTE = 60_000;
export const HOUR = 3_600_000;
export const DAY = 86_400_000;
/** 2026-11-20T00:00:00Z */
export const T0 = Date.UTC(2026, 10, 20);

/**
 * A tenant's rows as stored (PostgreSQL's unnested from their blocks), read without the store's code: the attributes (JSONB on SQLite, jsonb) with
 * names by number (attribute-codes.ts), turned back into names here from log_attribute_codes.
 */
export async function storedRows(
  database: Database<any>,
  tenantId: string,
): Promise<{ id: number | string; ts: number | string; attributes: Record<string, unknown>; [column: string]: unknown }[]> {
  const { rows: codes } = await sql<{ name: string; code: number }>`SELECT name, code FROM log_attribute_codes
    WHERE tenant_id = ${tenantId}`.execute(database.db);
  const names = new Map(codes.map((row) => [Number(row.code).toString(36), row.name]));
  const named = (attributes: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(attributes).map(([key, value]) => [key.startsWith('~') ? key.slice(1) : names.get(key)!, value]));
  if (database.dialect === 'postgres') {
    const { rows } =
      await sql<any>`SELECT b.tenant_id, b.first_id + e.n - 1 AS id, e.ts, e.level, e.service, e.host, e.trace_id, e.span_id, e.message, e.attributes, e.words
      FROM log_blocks b
      CROSS JOIN LATERAL unnest(b.ts, b.level, b.service, b.host, b.trace_id, b.span_id, b.message, b.attributes, b.words) WITH ORDINALITY
        AS e(ts, level, service, host, trace_id, span_id, message, attributes, words, n)
      WHERE b.tenant_id = ${tenantId}`.execute(database.db);
    return rows.map((row) => ({ ...row, attributes: named(row.attributes as Record<string, unknown>) }));
  }
  const { rows } = await sql<any>`SELECT id, ts, level, service, host, trace_id, span_id, message, json(attributes) AS attributes
    FROM log_entries WHERE tenant_id = ${tenantId}`.execute(database.db);
  return rows.map((row) => ({ ...row, attributes: named(JSON.parse(row.attributes as string) as Record<string, unknown>) }));
}
