import { sql, type Kysely } from 'kysely';
import { canonicalJson, type MetricPoint } from './metric-point.js';

/** A MetricPoint as its row holds it: with its tenant, and its attribute maps as canonical JSON. */
interface PointsTable extends Omit<MetricPoint, 'resource' | 'attributes'> {
  tenant_id: string;
  resource: string;
  attributes: string;
}
interface InfraSchema {
  infra_metric_points: PointsTable;
}

/** One series (entity, metric, attribute set) in one time bucket. */
export interface BucketRow {
  host: string | null;
  container: string | null;
  pod: string | null;
  namespace: string | null;
  name: string;
  attributes: string;
  temporality: number | null;
  bucket: number;
  avg: number;
  min: number;
  max: number;
  sum: number;
  n: number;
  first_ts: number;
  last_ts: number;
}

export interface BucketQuery {
  tenantId: string;
  names: readonly string[];
  /** Epoch ms, half-open [from, to). */
  from: number;
  to: number;
  intervalMs: number;
  /** Which entities: host metrics (host set) or container/pod metrics (container or pod set). */
  entity: 'host' | 'container';
  host?: string | undefined;
}

/** Rows per insert: 14 parameters a row stays under both engines' parameter limits. */
const CHUNK = 1000;
/** Bucket rows a view reads at most. */
export const MAX_BUCKET_ROWS = 200_000;

/** Metric points on Kysely, both dialects (table infra_metric_points). */
export class MetricsRepository {
  private readonly db: Kysely<InfraSchema>;

  constructor(db: Kysely<any>) {
    this.db = db as Kysely<InfraSchema>;
  }

  /** Stores the batch in one transaction; resolves after the commit. */
  async insert(tenantId: string, points: MetricPoint[]): Promise<void> {
    if (points.length === 0) return;
    const rows: PointsTable[] = points.map((point) => ({
      tenant_id: tenantId,
      ts: point.ts,
      name: point.name,
      type: point.type,
      temporality: point.temporality,
      unit: point.unit,
      host: point.host,
      container: point.container,
      pod: point.pod,
      namespace: point.namespace,
      resource: canonicalJson(point.resource),
      attributes: canonicalJson(point.attributes),
      value: point.value,
      count: point.count,
    }));
    await this.db.transaction().execute(async (trx) => {
      for (let i = 0; i < rows.length; i += CHUNK)
        await trx
          .insertInto('infra_metric_points')
          .values(rows.slice(i, i + CHUNK))
          .execute();
    });
  }

  /**
   * Per entity, metric, attribute set and bucket ((ts - from) / interval): avg, min, max, sum,
   * count and first/last time. The views derive utilisations and rates from these.
   */
  async buckets(query: BucketQuery): Promise<BucketRow[]> {
    if (query.names.length === 0) return [];
    const entity =
      query.entity === 'host'
        ? sql`host IS NOT NULL AND container IS NULL AND pod IS NULL`
        : sql`(container IS NOT NULL OR pod IS NOT NULL)`;
    const result = await sql<BucketRow>`SELECT host, container, pod, namespace, name, attributes, temporality,
        (ts - CAST(${query.from} AS bigint)) / CAST(${query.intervalMs} AS bigint) AS bucket,
        avg(value) AS avg, min(value) AS min, max(value) AS max, sum(value) AS sum, count(*) AS n, min(ts) AS first_ts, max(ts) AS last_ts
      FROM infra_metric_points
      WHERE tenant_id = ${query.tenantId} AND name IN (${sql.join([...query.names])}) AND ts >= ${query.from} AND ts < ${query.to}
        AND ${entity} ${query.host !== undefined ? sql`AND host = ${query.host}` : sql``}
      GROUP BY host, container, pod, namespace, name, attributes, temporality, bucket
      LIMIT ${MAX_BUCKET_ROWS}`.execute(this.db);
    return result.rows.map((row) => ({
      ...row,
      temporality: row.temporality === null ? null : Number(row.temporality),
      bucket: Number(row.bucket),
      avg: Number(row.avg),
      min: Number(row.min),
      max: Number(row.max),
      sum: Number(row.sum),
      n: Number(row.n),
      first_ts: Number(row.first_ts),
      last_ts: Number(row.last_ts),
    }));
  }

  /** Retention: removes the tenant's points older than the cutoff (epoch ms). */
  async removeOlderThan(tenantId: string, cutoffMs: number): Promise<number> {
    const result = await this.db
      .deleteFrom('infra_metric_points')
      .where('tenant_id', '=', tenantId)
      .where('ts', '<', cutoffMs)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
