import type { Kysely } from 'kysely';

// A second factor (docs/logs-api.md "Second factor"): each user's TOTP secret with the last step a
// code was accepted for (replay refusal), the digests of their recovery codes, and the short-lived
// single-use challenges of a login in two steps, an enrolment and a passkey ceremony.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('logs_mfa_totp')
    .addColumn('user_id', 'text', (col) => col.primaryKey().references('logs_users.id').onDelete('cascade'))
    // Base32; the HMAC needs it as it is, so it cannot be hashed (as in Keycloak and Grafana).
    .addColumn('secret', 'text', (col) => col.notNull())
    .addColumn('created_at', 'text', (col) => col.notNull())
    // null until the first code confirms the enrolment: an unconfirmed secret is no second factor.
    .addColumn('confirmed_at', 'text')
    .addColumn('last_used_step', 'bigint')
    .execute();

  await db.schema
    .createTable('logs_mfa_recovery_codes')
    .addColumn('user_id', 'text', (col) => col.notNull().references('logs_users.id').onDelete('cascade'))
    // SHA-256 hex of the normalised code.
    .addColumn('digest', 'text', (col) => col.notNull())
    .addColumn('created_at', 'text', (col) => col.notNull())
    .addPrimaryKeyConstraint('logs_mfa_recovery_codes_pk', ['user_id', 'digest'])
    .execute();

  await db.schema
    .createTable('logs_mfa_challenges')
    // SHA-256 hex of the token handed out: the token itself is never stored.
    .addColumn('token_hash', 'text', (col) => col.primaryKey())
    // login (password verified, code awaited), enrolment (an enrolment-only credential),
    // passkey_register, passkey_login.
    .addColumn('purpose', 'text', (col) => col.notNull())
    .addColumn('user_id', 'text')
    // The WebAuthn challenge a ceremony must sign, when there is one.
    .addColumn('data', 'text')
    .addColumn('created_at', 'text', (col) => col.notNull())
    .addColumn('expires_at', 'text', (col) => col.notNull())
    .addColumn('used_at', 'text')
    .addColumn('failures', 'integer', (col) => col.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('logs_mfa_challenges_expiry_idx').on('logs_mfa_challenges').column('expires_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('logs_mfa_challenges').execute();
  await db.schema.dropTable('logs_mfa_recovery_codes').execute();
  await db.schema.dropTable('logs_mfa_totp').execute();
}
