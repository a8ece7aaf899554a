import type { Kysely } from 'kysely';

// Short-lived tokens between a right password and a session: the second-factor challenge and the
// enrolment-only token. Stored as SHA-256 digests; deleting the row is what makes one single-use
// on every instance.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('mfa_challenges')
    .addColumn('digest', 'text', (col) => col.primaryKey())
    .addColumn('user_id', 'text', (col) => col.notNull().references('users.id').onDelete('cascade'))
    // login | enrolment
    .addColumn('purpose', 'text', (col) => col.notNull())
    .addColumn('created_at', 'text', (col) => col.notNull())
    .addColumn('expires_at', 'text', (col) => col.notNull())
    .addColumn('failures', 'integer', (col) => col.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('mfa_challenges_expires_idx').on('mfa_challenges').column('expires_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('mfa_challenges').execute();
}
