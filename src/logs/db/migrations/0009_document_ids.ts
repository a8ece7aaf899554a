import { sql, type Kysely } from 'kysely';
import { isSqlite } from './support/dialect.js';

/** Senders' document ids (Elasticsearch `_id`) remembered until `expires_at`, so a retried document is stored once. */
export async function up(db: Kysely<any>): Promise<void> {
  const time = isSqlite(db) ? sql`INTEGER` : sql`bigint`;
  await sql`CREATE TABLE log_document_ids (
    tenant_id TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    expires_at ${time} NOT NULL,
    PRIMARY KEY (tenant_id, doc_id)
  )`.execute(db);
  await sql`CREATE INDEX log_document_ids_expiry ON log_document_ids (expires_at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE IF EXISTS log_document_ids`.execute(db);
}
