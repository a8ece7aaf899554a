import type { Kysely } from 'kysely';

// What a person sees of their sessions (docs/logs-api.md "Sessions"): where and how each began and
// when it was last used (written at most once a minute per session).
export async function up(db: Kysely<any>): Promise<void> {
  for (const column of ['last_used_at', 'ip', 'user_agent', 'method']) {
    await db.schema.alterTable('logs_sessions').addColumn(column, 'text').execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const column of ['method', 'user_agent', 'ip', 'last_used_at']) {
    await db.schema.alterTable('logs_sessions').dropColumn(column).execute();
  }
}
