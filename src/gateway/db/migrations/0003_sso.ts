import type { Kysely } from 'kysely';

// SSO: which provider identity belongs to which user, and which ID tokens were already used.
export async function up(db: Kysely<any>): Promise<void> {
  // (issuer, subject) is the stable identity of an OIDC user; e-mail can change at the provider.
  await db.schema
    .createTable('sso_identities')
    .addColumn('issuer', 'text', (col) => col.notNull())
    .addColumn('subject', 'text', (col) => col.notNull())
    .addColumn('user_id', 'text', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (col) => col.notNull())
    .addColumn('last_login_at', 'text', (col) => col.notNull())
    .addPrimaryKeyConstraint('sso_identities_pk', ['issuer', 'subject'])
    .execute();
  await db.schema.createIndex('sso_identities_user_idx').on('sso_identities').column('user_id').execute();

  // One row per accepted ID token (a hash, never the token), kept until the token expires. The
  // primary key makes acceptance atomic across gateway instances sharing the database.
  await db.schema
    .createTable('sso_used_tokens')
    .addColumn('token_hash', 'text', (col) => col.primaryKey())
    .addColumn('expires_at', 'text', (col) => col.notNull())
    .execute();
  await db.schema.createIndex('sso_used_tokens_expires_idx').on('sso_used_tokens').column('expires_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('sso_used_tokens').execute();
  await db.schema.dropTable('sso_identities').execute();
}
