import { sql, type Kysely } from 'kysely';
import { isSqlite } from './support/dialect.js';

/**
 * Per tenant, the time before which retention is removing entries (LogStoreCore.purging): reads
 * start there, so a day leaves every answer in one small write, however long its removal takes.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const [time, withoutRowid] = isSqlite(db) ? [sql`INTEGER`, sql` WITHOUT ROWID`] : [sql`bigint`, sql``];
  await sql`CREATE TABLE log_retention_floors (
    tenant_id TEXT PRIMARY KEY,
    hidden_before ${time} NOT NULL
  )${withoutRowid}`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE IF EXISTS log_retention_floors`.execute(db);
}
