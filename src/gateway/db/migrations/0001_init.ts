import type { Kysely } from 'kysely';

// Migrations take Kysely<any> and never import app code beyond schema helpers: they must keep
// working as the app changes.
export async function up(db: Kysely<any>): Promise<void> {
  const now = new Date().toISOString();
  await db.schema
    .createTable('hak_akses')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('nama', 'text', (col) => col.notNull().unique())
    .addColumn('is_admin', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (col) => col.notNull())
    .addColumn('updated_at', 'text', (col) => col.notNull())
    .execute();
  await db
    .insertInto('hak_akses')
    .values([
      { id: 'admin', nama: 'Administrator', is_admin: 1, created_at: now, updated_at: now },
      { id: 'pegawai', nama: 'Pegawai', is_admin: 0, created_at: now, updated_at: now },
    ])
    .execute();

  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('no_pegawai', 'text', (col) => col.notNull().unique())
    .addColumn('nama', 'text', (col) => col.notNull())
    .addColumn('email', 'text', (col) => col.notNull().unique())
    .addColumn('tipe_pegawai', 'text', (col) => col.notNull())
    .addColumn('hak_akses_id', 'text', (col) => col.notNull().references('hak_akses.id'))
    .addColumn('password_hash', 'text')
    .addColumn('password_changed_at', 'text')
    .addColumn('created_at', 'text', (col) => col.notNull())
    .addColumn('updated_at', 'text', (col) => col.notNull())
    .execute();
  await db.schema.createIndex('users_created_at_idx').on('users').columns(['created_at', 'id']).execute();
  await db.schema.createIndex('users_nama_idx').on('users').column('nama').execute();

  await db.schema
    .createTable('sessions')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('user_id', 'text', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (col) => col.notNull())
    .addColumn('expires_at', 'text', (col) => col.notNull())
    .addColumn('revoked_at', 'text')
    .addColumn('ip', 'text')
    .addColumn('user_agent', 'text')
    .execute();
  await db.schema.createIndex('sessions_user_idx').on('sessions').column('user_id').execute();

  await db.schema
    .createTable('audit_log')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('at', 'text', (col) => col.notNull())
    .addColumn('actor_id', 'text')
    .addColumn('actor', 'text')
    .addColumn('action', 'text', (col) => col.notNull())
    .addColumn('target_type', 'text')
    .addColumn('target_id', 'text')
    .addColumn('outcome', 'text', (col) => col.notNull())
    .addColumn('ip', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('request_id', 'text')
    .addColumn('details', 'text')
    .execute();
  await db.schema.createIndex('audit_log_at_idx').on('audit_log').column('at').execute();

  // The services' token signing keys (shared/auth/signing-keys.ts).
  await db.schema
    .createTable('gateway_signing_keys')
    .addColumn('kid', 'text', (col) => col.primaryKey())
    .addColumn('algorithm', 'text', (col) => col.notNull())
    .addColumn('private_jwk', 'text', (col) => col.notNull())
    .addColumn('created_at', 'text', (col) => col.notNull())
    .execute();
}
