import type { Kysely } from 'kysely';

// API keys for shippers and data sources (docs/logs-api.md "API keys"): the secret only as a hash.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('logs_api_keys')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('tenant_id', 'text', (col) => col.notNull())
    .addColumn('user_id', 'text', (col) => col.notNull())
    .addColumn('name', 'text', (col) => col.notNull())
    // SHA-256 of the secret, hex: the secret has 256 random bits, so no slow hash is needed.
    .addColumn('secret_hash', 'text', (col) => col.notNull())
    // JSON array of permission names.
    .addColumn('permissions', 'text', (col) => col.notNull())
    .addColumn('created_by', 'text', (col) => col.notNull())
    .addColumn('created_at', 'text', (col) => col.notNull())
    .addColumn('expires_at', 'text')
    .addColumn('revoked_at', 'text')
    .addColumn('last_used_at', 'text')
    .execute();
  await db.schema.createIndex('logs_api_keys_user_idx').on('logs_api_keys').columns(['tenant_id', 'user_id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('logs_api_keys').execute();
}
