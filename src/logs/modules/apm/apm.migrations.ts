import { SqliteAdapter, sql, type Kysely, type Migration } from 'kysely';

/** Span table (docs/apm.md). Kysely<any> and no app imports, so history never changes with the code. */
function isSqlite(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof SqliteAdapter;
}

const spans: Migration = {
  async up(db: Kysely<any>): Promise<void> {
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
  },
  async down(db: Kysely<any>): Promise<void> {
    await sql`DROP TABLE IF EXISTS apm_spans`.execute(db);
  },
};

/**
 * How many spans a stored span stands for: 1 / the probability it was sampled with, from its trace
 * state's OpenTelemetry threshold (`ot=th`); 1 for a span recorded whatever the sampling.
 */
const adjustedCount: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    const real = isSqlite(db) ? sql`REAL` : sql`double precision`;
    await sql`ALTER TABLE apm_spans ADD COLUMN adjusted_count ${real} NOT NULL DEFAULT 1`.execute(db);
  },
  async down(db: Kysely<any>): Promise<void> {
    await sql`ALTER TABLE apm_spans DROP COLUMN adjusted_count`.execute(db);
  },
};

export const apmMigrations: Record<string, Migration> = { '0300_apm_spans': spans, '0310_apm_span_adjusted_count': adjustedCount };
