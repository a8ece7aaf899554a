import type { Kysely } from 'kysely';

// What a person sees of their sessions: when each was last used and how it was signed in.
export async function up(db: Kysely<any>): Promise<void> {
  // ISO time; written at most once a minute per session (docs/api.md, "Sessions").
  await db.schema.alterTable('sessions').addColumn('last_used_at', 'text').execute();
  // password, password+totp, recovery_code or sso; null for sessions older than this migration.
  await db.schema.alterTable('sessions').addColumn('auth_method', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('sessions').dropColumn('auth_method').execute();
  await db.schema.alterTable('sessions').dropColumn('last_used_at').execute();
}
