import { sql, type Kysely } from 'kysely';
import { isSqlite } from './support/dialect.js';
import { createHourlyRollupTables } from './support/rollup-tables.js';

/**
 * The rollups again by hour (`minute` holds the hour's first millisecond): counts and distinct values
 * over days read 24 rows a day per level, service and host instead of 1,440. Made from the minutes.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const dialect = isSqlite(db) ? 'sqlite' : 'postgres';
  await createHourlyRollupTables(db, dialect);
  // A store whose 0011_time_ordered_facets wrote through the current writer already counts by hour: counted again from the minutes.
  await sql`DELETE FROM log_rollups_hourly`.execute(db);
  await sql`DELETE FROM log_host_rollups_hourly`.execute(db);
  const hour = sql`minute - (((minute % 3600000) + 3600000) % 3600000)`;
  await sql`INSERT INTO log_rollups_hourly (tenant_id, minute, level, service, count)
    SELECT tenant_id, ${hour}, level, service, sum(count) FROM log_rollups GROUP BY 1, 2, 3, 4`.execute(db);
  await sql`INSERT INTO log_host_rollups_hourly (tenant_id, minute, host, count)
    SELECT tenant_id, ${hour}, host, sum(count) FROM log_host_rollups GROUP BY 1, 2, 3`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE IF EXISTS log_rollups_hourly`.execute(db);
  await sql`DROP TABLE IF EXISTS log_host_rollups_hourly`.execute(db);
}
