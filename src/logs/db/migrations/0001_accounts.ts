import type { Kysely } from 'kysely';

// The seeded values (default tenant, built-in roles) are written out here so later code changes
// cannot alter history.
export async function up(db: Kysely<any>): Promise<void> {
  const now = new Date().toISOString();
  await db.schema
    .createTable('logs_tenants')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('name', 'text', (col) => col.notNull().unique())
    .addColumn('retention_days', 'integer')
    .addColumn('created_at', 'text', (col) => col.notNull())
    .addColumn('updated_at', 'text', (col) => col.notNull())
    .execute();
  await db
    .insertInto('logs_tenants')
    .values({ id: 'default', name: 'default', retention_days: null, created_at: now, updated_at: now })
    .execute();

  await db.schema
    .createTable('logs_roles')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('tenant_id', 'text', (col) => col.references('logs_tenants.id').onDelete('cascade'))
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('permissions', 'text', (col) => col.notNull())
    .addColumn('builtin', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (col) => col.notNull())
    .addColumn('updated_at', 'text', (col) => col.notNull())
    .execute();
  await db.schema.createIndex('logs_roles_tenant_name_idx').on('logs_roles').columns(['tenant_id', 'name']).unique().execute();
  await db
    .insertInto('logs_roles')
    .values([
      { id: 'admin', tenant_id: null, name: 'admin', permissions: '["*"]', builtin: 1, created_at: now, updated_at: now },
      {
        id: 'viewer',
        tenant_id: null,
        name: 'viewer',
        permissions: '["logs:read","alerts:read","dashboard:read"]',
        builtin: 1,
        created_at: now,
        updated_at: now,
      },
    ])
    .execute();

  await db.schema
    .createTable('logs_users')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('tenant_id', 'text', (col) => col.notNull().references('logs_tenants.id'))
    .addColumn('username', 'text', (col) => col.notNull().unique())
    .addColumn('email', 'text', (col) => col.notNull())
    .addColumn('password_hash', 'text', (col) => col.notNull())
    .addColumn('created_at', 'text', (col) => col.notNull())
    .addColumn('updated_at', 'text', (col) => col.notNull())
    .execute();
  await db.schema.createIndex('logs_users_tenant_idx').on('logs_users').columns(['tenant_id', 'username']).execute();

  await db.schema
    .createTable('logs_user_roles')
    .addColumn('user_id', 'text', (col) => col.notNull().references('logs_users.id').onDelete('cascade'))
    .addColumn('role_id', 'text', (col) => col.notNull().references('logs_roles.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('logs_user_roles_pk', ['user_id', 'role_id'])
    .execute();
  await db.schema.createIndex('logs_user_roles_role_idx').on('logs_user_roles').column('role_id').execute();

  await db.schema
    .createTable('logs_sessions')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('user_id', 'text', (col) => col.notNull().references('logs_users.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (col) => col.notNull())
    .addColumn('expires_at', 'text', (col) => col.notNull())
    .addColumn('revoked_at', 'text')
    .execute();
  await db.schema.createIndex('logs_sessions_user_idx').on('logs_sessions').column('user_id').execute();

  await db.schema
    .createTable('logs_refresh_tokens')
    .addColumn('token_hash', 'text', (col) => col.primaryKey())
    .addColumn('session_id', 'text', (col) => col.notNull().references('logs_sessions.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (col) => col.notNull())
    .addColumn('expires_at', 'text', (col) => col.notNull())
    .addColumn('used_at', 'text')
    .execute();
  await db.schema.createIndex('logs_refresh_tokens_session_idx').on('logs_refresh_tokens').column('session_id').execute();

  // No foreign keys: the audit trail outlives the users and tenants it names.
  await db.schema
    .createTable('logs_audit')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('tenant_id', 'text', (col) => col.notNull())
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
  await db.schema.createIndex('logs_audit_tenant_at_idx').on('logs_audit').columns(['tenant_id', 'at', 'id']).execute();

  // The services' token signing keys (shared/auth/signing-keys.ts).
  await db.schema
    .createTable('logs_signing_keys')
    .addColumn('kid', 'text', (col) => col.primaryKey())
    .addColumn('algorithm', 'text', (col) => col.notNull())
    .addColumn('private_jwk', 'text', (col) => col.notNull())
    .addColumn('created_at', 'text', (col) => col.notNull())
    .execute();
}
