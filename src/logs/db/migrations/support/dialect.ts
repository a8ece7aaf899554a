import { SqliteAdapter, type Kysely } from 'kysely';
import type { ResumableMigration } from '../../../../shared/db/migrator.js';

/** Whether the migration runs on SQLite (else PostgreSQL): one migration serves both dialects. */
export function isSqlite(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof SqliteAdapter;
}

/** A data rewrite with nothing to do on this dialect. */
const NOTHING: ResumableMigration = {
  start: async () => 0,
  chunk: async () => null,
  finish: async () => undefined,
};

/**
 * A data rewrite whose work differs by dialect (docs/operations.md, "Upgrade and rollback": chunks
 * committed one by one, resumed after a stop). No `down`: a rewrite is undone by restoring a backup.
 */
export function byDialect({
  sqlite = NOTHING,
  postgres = NOTHING,
}: {
  sqlite?: ResumableMigration;
  postgres?: ResumableMigration;
}): ResumableMigration {
  const of = (db: Kysely<any>) => (isSqlite(db) ? sqlite : postgres);
  return {
    start: (db) => of(db).start(db),
    chunk: (db, position) => of(db).chunk(db, position),
    finish: (db) => of(db).finish(db),
  };
}
