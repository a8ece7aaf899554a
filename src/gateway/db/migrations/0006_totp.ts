import type { Kysely } from 'kysely';

// One TOTP authenticator per user: pending until a first code confirms it.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('user_totp')
    .addColumn('user_id', 'text', (col) => col.primaryKey().references('users.id').onDelete('cascade'))
    // Base32 shared secret (docs/api.md, "Second factor": why it is not encrypted).
    .addColumn('secret', 'text', (col) => col.notNull())
    .addColumn('created_at', 'text', (col) => col.notNull())
    // Null while pending.
    .addColumn('confirmed_at', 'text')
    // The last accepted time step: a code of that step or an older one is refused (replay).
    .addColumn('last_used_step', 'bigint')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('user_totp').execute();
}
