import { Migrator, type Kysely, type Migration } from 'kysely';

/**
 * Runs in-code migrations. Each service keeps its own history table so that the gateway and the
 * logs service can share one PostgreSQL database. Throws on failure so the caller exits non-zero.
 */
export async function migrateToLatest(db: Kysely<any>, migrations: Record<string, Migration>, table: string): Promise<string[]> {
  try {
    return await migrateOnce(db, migrations, table);
  } catch (error) {
    // Two processes starting on one SQLite file race (Kysely's SQLite migration lock is per
    // connection): the loser fails on the winner's tables. Its second run sees them recorded and
    // applies only what is still missing. PostgreSQL is serialised by an advisory lock already.
    return migrateOnce(db, migrations, table).catch(() => Promise.reject(error));
  }
}

async function migrateOnce(db: Kysely<any>, migrations: Record<string, Migration>, table: string): Promise<string[]> {
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
