import { Migrator, type Kysely, type Migration } from 'kysely';

/** How often the loser of a SQLite start-up race tries again while the winner finishes. */
const RACE_RETRIES = 8;

/**
 * Runs in-code migrations. Each service keeps its own history table so that the gateway and the
 * logs service can share one PostgreSQL database. Throws on failure so the caller exits non-zero.
 */

export async function migrateToLatest(db: Kysely<any>, migrations: Record<string, Migration>, table: string): Promise<string[]> {
  let firstError: unknown;
  for (let attempt = 1; ; attempt++) {
    try {
      return await migrateOnce(db, migrations, table);
    } catch (error) {
      // Two processes starting on one SQLite file race (Kysely's SQLite migration lock is per
      // connection): the loser fails on the winner's tables. A later run sees them recorded and
      // applies only what is still missing; with several migrations the winner may still be
      // working, so the loser backs off a little between tries. PostgreSQL is serialised by an
      // advisory lock already. A migration that really fails reports its first error.
      firstError ??= error;
      if (attempt > RACE_RETRIES) throw firstError;
      await new Promise((resolve) => setTimeout(resolve, 25 * attempt));
    }
  }
}

async function migrateOnce(db: Kysely<any>, migrations: Record<string, Migration>, table: string): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: `${table}_migrations`,
    migrationLockTableName: `${table}_migrations_lock`,
    // Modules own name ranges (logs: alerts 0200_, APM 0300_, dashboards 0400_) and may land after a
    // higher-numbered migration already ran: run such a pending one instead of refusing to start.
    allowUnorderedMigrations: true,
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((result) => result.status === 'Error');
  if (error || failed) {
    const cause = error instanceof Error ? error.message : typeof error === 'string' ? error : 'unknown error';
    throw new Error(`migration ${failed?.migrationName ?? ''} failed: ${cause}`);
  }
  return (results ?? []).map((result) => result.migrationName);
}
