import { sql, type Kysely } from 'kysely';
import type { SpanRecord } from './span-record.js';

interface SpansTable {
  tenant_id: string;
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  service: string;
  name: string;
  kind: number;
  start_us: number;
  end_us: number;
  duration_us: number;
  status_code: number;
  status_message: string | null;
  peer_service: string | null;
  attributes: string;
  events: string | null;
  adjusted_count: number;
}
interface ApmSchema {
  apm_spans: SpansTable;
}

export interface TraceFilter {
  tenantId: string;
  /** Epoch µs, half-open [fromUs, toUs): a trace matches when one of its spans starts in it. */
  fromUs: number;
  toUs: number;
  service?: string | undefined;
  operation?: string | undefined;
  minDurationUs?: number | undefined;
  errorsOnly?: boolean | undefined;
  limit: number;
  offset: number;
}

export interface TraceSummaryRow {
  trace_id: string;
  start_us: number;
  end_us: number;
  span_count: number;
  error_count: number;
}

/** A span as read back: the same record that was stored. */
export type StoredSpan = SpanRecord;

/** A span that matters to the service map: it enters a service, or calls out to a named peer. */
export interface MapSpanRow {
  service: string;
  kind: number;
  duration_us: number;
  status_code: number;
  peer_service: string | null;
  parent_service: string | null;
  /** The spans this one stands for (1 / its sampling probability). */
  adjusted_count: number;
}

/** Rows per insert statement: 16 parameters a row stays under both engines' parameter limits. */
const CHUNK = 1000;
/** Spans of one trace returned at most (a runaway trace must not exhaust memory). */
export const MAX_TRACE_SPANS = 10_000;

/** Spans on Kysely, both dialects (table apm_spans). */
export class SpansRepository {
  private readonly db: Kysely<ApmSchema>;

  constructor(db: Kysely<any>) {
    this.db = db as Kysely<ApmSchema>;
  }

  /**
   * Stores the batch in one transaction; resolves only after the commit (the ingest route answers
   * 2xx after it). A span sent again (exporter retry) is ignored by its (tenant, trace, span) key.
   */
  async insert(tenantId: string, spans: SpanRecord[]): Promise<void> {
    if (spans.length === 0) return;
    const rows: SpansTable[] = spans.map((span) => ({
      tenant_id: tenantId,
      trace_id: span.traceId,
      span_id: span.spanId,
      parent_span_id: span.parentSpanId,
      service: span.service,
      name: span.name,
      kind: span.kind,
      start_us: span.startUs,
      end_us: span.endUs,
      duration_us: span.durationUs,
      status_code: span.statusCode,
      status_message: span.statusMessage,
      peer_service: span.peerService,
      attributes: JSON.stringify(span.attributes),
      events: span.events.length > 0 ? JSON.stringify(span.events) : null,
      adjusted_count: span.adjustedCount,
    }));
    await this.db.transaction().execute(async (trx) => {
      for (let i = 0; i < rows.length; i += CHUNK) {
        await trx
          .insertInto('apm_spans')
          .values(rows.slice(i, i + CHUNK))
          .onConflict((oc) => oc.columns(['tenant_id', 'trace_id', 'span_id']).doNothing())
          .execute();
      }
    });
  }

  private matchingTraces(filter: TraceFilter) {
    // A trace matches when any of its spans in the range has the service / operation; duration and
    // errors are the whole trace's (HAVING below).
    const { tenantId, fromUs, toUs, service, operation } = filter;
    return sql`SELECT DISTINCT trace_id FROM apm_spans WHERE tenant_id = ${tenantId} AND start_us >= ${fromUs} AND start_us < ${toUs}
      ${service !== undefined ? sql`AND service = ${service}` : sql``}
      ${operation !== undefined ? sql`AND name = ${operation}` : sql``}`;
  }

  private traceGroups(filter: TraceFilter) {
    const having = [sql`1 = 1`];
    if (filter.minDurationUs !== undefined) having.push(sql`max(s.end_us) - min(s.start_us) >= ${filter.minDurationUs}`);
    if (filter.errorsOnly) having.push(sql`sum(CASE WHEN s.status_code = 2 THEN 1 ELSE 0 END) > 0`);
    return sql`SELECT s.trace_id AS trace_id, min(s.start_us) AS start_us, max(s.end_us) AS end_us, count(*) AS span_count,
        sum(CASE WHEN s.status_code = 2 THEN 1 ELSE 0 END) AS error_count
      FROM apm_spans s JOIN (${this.matchingTraces(filter)}) m ON m.trace_id = s.trace_id
      WHERE s.tenant_id = ${filter.tenantId}
      GROUP BY s.trace_id
      HAVING ${sql.join(having, sql` AND `)}`;
  }

  /** One page of traces, newest first, and the total. */
  async listTraces(filter: TraceFilter): Promise<{ rows: TraceSummaryRow[]; total: number }> {
    const groups = this.traceGroups(filter);
    const page =
      await sql<TraceSummaryRow>`SELECT * FROM (${groups}) g ORDER BY g.start_us DESC, g.trace_id LIMIT ${filter.limit} OFFSET ${filter.offset}`.execute(
        this.db,
      );
    const total = await sql<{ total: number }>`SELECT count(*) AS total FROM (${groups}) g`.execute(this.db);
    return {
      rows: page.rows.map((row) => ({
        ...row,
        start_us: Number(row.start_us),
        end_us: Number(row.end_us),
        span_count: Number(row.span_count),
        error_count: Number(row.error_count),
      })),
      total: Number(total.rows[0]?.total ?? 0),
    };
  }

  /** Per trace: its root (the earliest span whose parent is not in the trace) and its services with span counts. */
  async describeTraces(
    tenantId: string,
    traceIds: string[],
  ): Promise<Map<string, { root: StoredSpan | null; services: { service: string; spans: number }[] }>> {
    const result = new Map<string, { root: StoredSpan | null; services: { service: string; spans: number }[] }>();
    if (traceIds.length === 0) return result;
    for (const id of traceIds) result.set(id, { root: null, services: [] });
    const services = await this.db
      .selectFrom('apm_spans')
      .select(['trace_id', 'service', (eb) => eb.fn.countAll<number>().as('spans')])
      .where('tenant_id', '=', tenantId)
      .where('trace_id', 'in', traceIds)
      .groupBy(['trace_id', 'service'])
      .orderBy('trace_id')
      .orderBy('service')
      .execute();
    for (const row of services) result.get(row.trace_id)!.services.push({ service: row.service, spans: Number(row.spans) });
    const roots = await sql<SpansTable>`SELECT s.* FROM apm_spans s
      LEFT JOIN apm_spans p ON p.tenant_id = s.tenant_id AND p.trace_id = s.trace_id AND p.span_id = s.parent_span_id
      WHERE s.tenant_id = ${tenantId} AND s.trace_id IN (${sql.join(traceIds)}) AND p.span_id IS NULL
      ORDER BY s.start_us, s.span_id`.execute(this.db);
    for (const row of roots.rows) {
      const entry = result.get(row.trace_id)!;
      entry.root ??= spanOf(row);
    }
    return result;
  }

  /** Every span of a trace (at most MAX_TRACE_SPANS), by start time. */
  async trace(tenantId: string, traceId: string): Promise<StoredSpan[]> {
    const rows = await this.db
      .selectFrom('apm_spans')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('trace_id', '=', traceId)
      .orderBy('start_us')
      .orderBy('span_id')
      .limit(MAX_TRACE_SPANS)
      .execute();
    return rows.map(spanOf);
  }

  /** Services that sent at least one span starting in [fromUs, toUs). */
  async services(tenantId: string, fromUs: number, toUs: number): Promise<string[]> {
    const rows = await this.db
      .selectFrom('apm_spans')
      .select('service')
      .distinct()
      .where('tenant_id', '=', tenantId)
      .where('start_us', '>=', fromUs)
      .where('start_us', '<', toUs)
      .execute();
    return rows.map((row) => row.service);
  }

  /**
   * The spans the service map needs, starting in [fromUs, toUs): those entering a service (no
   * parent in the data, or a parent of another service) and client spans naming a peer.service.
   * At most `limit` rows.
   */
  async mapSpans(tenantId: string, fromUs: number, toUs: number, limit: number): Promise<MapSpanRow[]> {
    const result =
      await sql<MapSpanRow>`SELECT c.service AS service, c.kind AS kind, c.duration_us AS duration_us, c.status_code AS status_code,
        c.peer_service AS peer_service, p.service AS parent_service, c.adjusted_count AS adjusted_count
      FROM apm_spans c
      LEFT JOIN apm_spans p ON p.tenant_id = c.tenant_id AND p.trace_id = c.trace_id AND p.span_id = c.parent_span_id
      WHERE c.tenant_id = ${tenantId} AND c.start_us >= ${fromUs} AND c.start_us < ${toUs}
        AND (p.span_id IS NULL OR p.service <> c.service OR (c.kind = 3 AND c.peer_service IS NOT NULL))
      LIMIT ${limit}`.execute(this.db);
    return result.rows.map((row) => ({
      ...row,
      kind: Number(row.kind),
      duration_us: Number(row.duration_us),
      status_code: Number(row.status_code),
      adjusted_count: Number(row.adjusted_count),
    }));
  }

  /** Retention: removes the tenant's spans that started before the cutoff (epoch ms). */
  async removeOlderThan(tenantId: string, cutoffMs: number): Promise<number> {
    const result = await this.db
      .deleteFrom('apm_spans')
      .where('tenant_id', '=', tenantId)
      .where('start_us', '<', cutoffMs * 1000)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

function parse<T>(text: string | null, fallback: T): T {
  if (text === null) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

function spanOf(row: SpansTable): StoredSpan {
  return {
    traceId: row.trace_id,
    spanId: row.span_id,
    parentSpanId: row.parent_span_id,
    service: row.service,
    name: row.name,
    kind: Number(row.kind),
    startUs: Number(row.start_us),
    endUs: Number(row.end_us),
    durationUs: Number(row.duration_us),
    statusCode: Number(row.status_code),
    statusMessage: row.status_message,
    peerService: row.peer_service,
    attributes: parse(row.attributes, {}),
    events: parse(row.events, []),
    adjustedCount: Number(row.adjusted_count),
  };
}
