import { sql, type Kysely } from 'kysely';
import { isSqlite } from './support/dialect.js';

/** Metric point table (docs/infra.md). */
export async function up(db: Kysely<any>): Promise<void> {
  const sqlite = isSqlite(db);
  const big = sqlite ? sql`INTEGER` : sql`bigint`;
  const int = sqlite ? sql`INTEGER` : sql`smallint`;
  const real = sqlite ? sql`REAL` : sql`double precision`;
  // One row per data point. The resource's identity (host, container, pod, namespace) has columns
  // for the views' grouping; other resource attributes and the point attributes are JSON text
  // (text, not jsonb: the views group by the exact attribute set of a series).
  await sql`CREATE TABLE infra_metric_points (
      tenant_id text NOT NULL,
      ts ${big} NOT NULL,
      name text NOT NULL,
      type text NOT NULL,
      temporality ${int},
      unit text,
      host text,
      container text,
      pod text,
      namespace text,
      resource text NOT NULL,
      attributes text NOT NULL,
      value ${real} NOT NULL,
      count ${big}
    )`.execute(db);
  await sql`CREATE INDEX infra_metric_points_name_ts ON infra_metric_points (tenant_id, name, ts)`.execute(db);
  await sql`CREATE INDEX infra_metric_points_tenant_ts ON infra_metric_points (tenant_id, ts)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE IF EXISTS infra_metric_points`.execute(db);
}
