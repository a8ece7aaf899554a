import type { Kysely } from 'kysely';

// Saved searches of the console's explorer (docs/logs-api.md "Saved searches"): per tenant, named.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('logs_saved_searches')
    .ifNotExists()
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('tenant_id', 'text', (col) => col.notNull())
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('query', 'text', (col) => col.notNull())
    // JSON: {"relative": "now-1h"} or {"from": ISO, "to": ISO}.
    .addColumn('time_range', 'text', (col) => col.notNull())
    // JSON array of field names.
    .addColumn('columns', 'text', (col) => col.notNull())
    .addColumn('sort_order', 'text', (col) => col.notNull())
    .addColumn('owner_id', 'text', (col) => col.notNull())
    .addColumn('owner_name', 'text', (col) => col.notNull())
    .addColumn('created_at', 'text', (col) => col.notNull())
    .addColumn('updated_at', 'text', (col) => col.notNull())
    .execute();
  await db.schema
    .createIndex('logs_saved_searches_name_idx')
    .ifNotExists()
    .on('logs_saved_searches')
    .columns(['tenant_id', 'name'])
    .unique()
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('logs_saved_searches').execute();
}
