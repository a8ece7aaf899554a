import type { Kysely } from 'kysely';

/** Built-in `ingest` role: `logs:write` only, for shippers such as the gateway. */
export async function up(db: Kysely<any>): Promise<void> {
  const now = new Date().toISOString();
  await db
    .insertInto('logs_roles')
    .values({ id: 'ingest', tenant_id: null, name: 'ingest', permissions: '["logs:write"]', builtin: 1, created_at: now, updated_at: now })
    .execute();
}
