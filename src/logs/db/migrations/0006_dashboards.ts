import type { Kysely } from 'kysely';

// Per tenant, minute (epoch ms of its start, ingestion time) and ingestion source, the entries
// received, stored and rejected: the per-source throughput of the dashboards, surviving restarts.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('logs_ingest_source_minutes')
    .addColumn('tenant_id', 'text', (col) => col.notNull())
    .addColumn('minute', 'bigint', (col) => col.notNull())
    .addColumn('source', 'text', (col) => col.notNull())
    .addColumn('received', 'bigint', (col) => col.notNull())
    .addColumn('stored', 'bigint', (col) => col.notNull())
    .addColumn('rejected', 'bigint', (col) => col.notNull())
    .addPrimaryKeyConstraint('logs_ingest_source_minutes_pk', ['tenant_id', 'minute', 'source'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('logs_ingest_source_minutes').ifExists().execute();
}
