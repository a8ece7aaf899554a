import type { Kysely } from 'kysely';

// Passkeys (WebAuthn credentials) of the console's users (docs/console.md "Passkeys").
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('logs_passkeys')
    // The credential id, base64url: unique across users (an authenticator makes a new one per account).
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('user_id', 'text', (col) => col.notNull().references('logs_users.id').onDelete('cascade'))
    .addColumn('name', 'text', (col) => col.notNull())
    // COSE public key, base64url.
    .addColumn('public_key', 'text', (col) => col.notNull())
    .addColumn('counter', 'bigint', (col) => col.notNull())
    // JSON array of the transports the authenticator reported.
    .addColumn('transports', 'text', (col) => col.notNull())
    .addColumn('created_at', 'text', (col) => col.notNull())
    .addColumn('last_used_at', 'text')
    .execute();
  await db.schema.createIndex('logs_passkeys_user_idx').on('logs_passkeys').column('user_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('logs_passkeys').execute();
}
