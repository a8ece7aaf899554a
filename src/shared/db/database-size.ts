import { sql, type Kysely } from 'kysely';
import { dirname, resolve } from 'node:path';
import { sqliteFileOf, type DialectName } from './database.js';

/** Bytes the database takes: SQLite's pages (without the WAL), PostgreSQL's pg_database_size. */
export async function databaseBytes(db: Kysely<any>, dialect: DialectName): Promise<number> {
  if (dialect === 'sqlite') {
    const { rows } = await sql<{
      bytes: number;
    }>`SELECT page_count * page_size AS bytes FROM pragma_page_count(), pragma_page_size()`.execute(db);
    return Number(rows[0]?.bytes ?? 0);
  }
  const { rows } = await sql<{ bytes: number | string }>`SELECT pg_database_size(current_database()) AS bytes`.execute(db);
  return Number(rows[0]?.bytes ?? 0);
}

/** The directory of a `sqlite:` database file; undefined for PostgreSQL and in-memory databases. */
export function sqliteDirectory(url: string): string | undefined {
  const path = sqliteFileOf(url);
  return path === undefined ? undefined : dirname(resolve(path));
}
