import type { Kysely } from 'kysely';

// Single-use recovery codes, as SHA-256 digests; a used code's row is deleted.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('user_recovery_codes')
    .addColumn('user_id', 'text', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('digest', 'text', (col) => col.notNull())
    .addColumn('created_at', 'text', (col) => col.notNull())
    .addPrimaryKeyConstraint('user_recovery_codes_pk', ['user_id', 'digest'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('user_recovery_codes').execute();
}
