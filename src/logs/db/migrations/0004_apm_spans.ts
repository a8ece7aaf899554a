import { sql, type Kysely } from 'kysely';
import { isSqlite } from './support/dialect.js';

/** Span table (docs/apm.md). */
export async function up(db: Kysely<any>): Promise<void> {
  const big = isSqlite(db) ? sql`INTEGER` : sql`bigint`;
  const int = isSqlite(db) ? sql`INTEGER` : sql`integer`;
  // Times in microseconds since the epoch (fits 2^53 until year 2255): spans are often sub-millisecond.
  await sql`CREATE TABLE apm_spans (
    tenant_id text NOT NULL,
    trace_id text NOT NULL,
    span_id text NOT NULL,
    parent_span_id text,
    service text NOT NULL,
    name text NOT NULL,
    kind ${int} NOT NULL,
    start_us ${big} NOT NULL,
    end_us ${big} NOT NULL,
    duration_us ${big} NOT NULL,
    status_code ${int} NOT NULL,
    status_message text,
    peer_service text,
    attributes text NOT NULL,
    events text,
    PRIMARY KEY (tenant_id, trace_id, span_id)
  )`.execute(db);
  // Trace lookup uses the primary key; lists and the service map scan a time range, optionally of one service.
  await sql`CREATE INDEX apm_spans_tenant_start ON apm_spans (tenant_id, start_us)`.execute(db);
  await sql`CREATE INDEX apm_spans_tenant_service_start ON apm_spans (tenant_id, service, start_us)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE IF EXISTS apm_spans`.execute(db);
}
