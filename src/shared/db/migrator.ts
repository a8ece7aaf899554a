import { Migrator, type Kysely, type Migration } from 'kysely';

/**
 * Runs in-code migrations. Each service keeps its own history table so that the gateway and the
 * logs service can share one PostgreSQL database. Throws on failure so the caller exits non-zero.
 */
export async function migrateToLatest(db: Kysely<any>, migrations: Record<string, Migration>, table: string): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: `${table}_migrations`,
    migrationLockTableName: `${table}_migrations_lock`,
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((result) => result.status === 'Error');
  if (error || failed) {
    const cause = error instanceof Error ? error.message : String(error ?? 'unknown error');
    throw new Error(`migration ${failed?.migrationName ?? ''} failed: ${cause}`);
  }
  return (results ?? []).map((result) => result.migrationName);
}
