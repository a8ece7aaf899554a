import { sql, type Kysely } from 'kysely';
import { isSqlite } from './support/dialect.js';

/**
 * How many spans a stored span stands for: 1 / the probability it was sampled with, from its trace
 * state's OpenTelemetry threshold (`ot=th`); 1 for a span recorded whatever the sampling.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const real = isSqlite(db) ? sql`REAL` : sql`double precision`;
  await sql`ALTER TABLE apm_spans ADD COLUMN adjusted_count ${real} NOT NULL DEFAULT 1`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE apm_spans DROP COLUMN adjusted_count`.execute(db);
}
