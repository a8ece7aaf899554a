import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AppError } from '../../../shared/errors/app-error.js';
import { errorResponses, invalidBody } from '../../http/errors.js';
import type { LogsGuards } from '../auth/authenticate.js';
import type { AttributeValue, LogEntry, LogStore } from '../store/log-store.js';
import { bulkResponse, parseBulk } from './elastic-bulk.js';
import { boundedGunzip, DEFAULT_MAX_INFLATE_RATIO } from './inflate.js';
import { mapOtlpLogs } from './otlp-logs.js';
import { decodeLogsRequest, encodeLogsResponse } from './otlp-proto.js';
import { otlpSourceOf, type IngestSource, type PipelineStats } from './pipeline-stats.js';

export interface IngestDeps {
  store: LogStore;
  stats: PipelineStats;
  guards: LogsGuards;
  bodyLimit: number;
  now: () => number;
  /** Runs on each stored batch before it is acknowledged (the gateway's audit events join the audit trail). */
  onStored?: (request: FastifyRequest, entries: readonly LogEntry[]) => Promise<void>;
  /** The gateway's ingest account (LOGS_GATEWAY_SHIPPER): its OTLP batches count as source `gateway`. */
  gatewayUsername?: string;
  /** LOGS_INGEST_MAX_INFLATE_RATIO (inflate.ts). */
  maxInflateRatio?: number;
}

/**
 * Accepts `Content-Encoding: gzip`. The body limit applies to the decompressed bytes (Fastify counts
 * what this stream yields), and inflation stops with 413 past `maxInflateRatio` (inflate.ts).
 * Only for routes that authenticate in `onRequest`: a body is never inflated for an unknown
 * client (a request that reaches this hook unauthenticated is refused, fail closed).
 */
export function acceptGzip(app: FastifyInstance, maxInflateRatio: number = DEFAULT_MAX_INFLATE_RATIO): void {
  app.addHook('preParsing', async (request, reply, payload) => {
    const encoding = request.headers['content-encoding']?.trim().toLowerCase();
    if (!encoding || encoding === 'identity') return payload;
    if (!request.logsAuth) throw new AppError('LOGS_MISSING_TOKEN');
    if (encoding !== 'gzip' && encoding !== 'x-gzip') throw new AppError('LOGS_UNSUPPORTED_MEDIA_TYPE');
    const inflated = boundedGunzip(payload, maxInflateRatio);
    // Once the answer is out (a 413 at the body limit, a parse error) nothing more is inflated.
    reply.raw.once('finish', inflated.stop);
    reply.raw.once('close', inflated.stop);
    return inflated as unknown as typeof payload;
  });
}

const NUL = /\u0000/g;
const clean = <T extends string | undefined>(text: T): T => (text === undefined ? text : (text.replace(NUL, '\uFFFD') as T));

/** PostgreSQL text cannot hold NUL: shippers' NULs (escaped in JSON, raw in protobuf) become U+FFFD. */
function withoutNul(entry: LogEntry): LogEntry {
  const attributes: Record<string, AttributeValue> = {};
  for (const [key, value] of Object.entries(entry.attributes ?? {})) attributes[clean(key)] = typeof value === 'string' ? clean(value) : value;
  return {
    timestamp: entry.timestamp,
    message: clean(entry.message),
    level: clean(entry.level),
    service: clean(entry.service),
    host: clean(entry.host),
    trace_id: clean(entry.trace_id),
    span_id: clean(entry.span_id),
    attributes,
  };
}

/** Stores a batch, then counts it; the caller answers 2xx only after this resolves (durable). */
async function store(deps: IngestDeps, request: FastifyRequest, source: IngestSource, entries: LogEntry[], rejected: number): Promise<void> {
  const received = entries.length + rejected;
  const started = deps.now();
  // In flight (received, not yet stored) while the write runs: the pipeline dashboard's backlog.
  deps.stats.enter(request.tenantId, source, entries.length);
  try {
    if (entries.length > 0) {
      const cleaned = entries.map(withoutNul);
      await deps.store.append(request.tenantId, cleaned);
      await deps.onStored?.(request, cleaned);
    }
  } catch (error) {
    deps.stats.leave(request.tenantId, source, entries.length);
    deps.stats.record(request.tenantId, source, { received, stored: 0, rejected: received }, { failed: true, latencyMs: deps.now() - started });
    throw error;
  }
  deps.stats.leave(request.tenantId, source, entries.length);
  deps.stats.record(request.tenantId, source, { received, stored: entries.length, rejected }, { latencyMs: deps.now() - started });
}

const BulkResponse = Type.Object({ took: Type.Integer(), errors: Type.Boolean(), items: Type.Array(Type.Record(Type.String(), Type.Unknown())) });

export const SECURED: Record<string, string[]>[] = [{ bearer: [] }, { basic: [] }];

/** OTLP/HTTP logs at `/v1/logs`: JSON or protobuf, optionally gzip, as the OpenTelemetry SDKs and Collector send. */
export function otlpRoutes(deps: IngestDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    acceptGzip(app, deps.maxInflateRatio);
    app.addContentTypeParser(['application/x-protobuf', 'application/protobuf'], { parseAs: 'buffer', bodyLimit: deps.bodyLimit }, (_request, body, done) => done(null, body));

    app.post('/v1/logs', {
      bodyLimit: deps.bodyLimit,
      schema: {
        tags: ['ingest'],
        summary: 'OTLP/HTTP logs (application/json or application/x-protobuf, gzip accepted); needs logs:write',
        security: SECURED,
        response: errorResponses(400, 401, 403, 413, 415, 429),
      },
      onRequest: deps.guards.requireIngest,
    }, async (request, reply: FastifyReply) => {
      const protobuf = Buffer.isBuffer(request.body);
      let decoded: unknown;
      try {
        decoded = protobuf ? decodeLogsRequest(request.body as Buffer) : request.body;
      } catch {
        throw invalidBody('not an OTLP ExportLogsServiceRequest');
      }
      let mapping;
      try {
        mapping = mapOtlpLogs(decoded, deps.now());
      } catch (error) {
        throw invalidBody((error as Error).message);
      }
      await store(deps, request, otlpSourceOf(mapping.entries, deps.gatewayUsername !== undefined && request.logsAuth?.username === deps.gatewayUsername), mapping.entries, mapping.rejected);
      const errorMessage = mapping.errors.join('; ');
      if (protobuf) {
        reply.header('content-type', 'application/x-protobuf');
        return reply.send(Buffer.from(encodeLogsResponse(mapping.rejected, errorMessage)));
      }
      return reply.send(mapping.rejected > 0 ? { partialSuccess: { rejectedLogRecords: mapping.rejected, errorMessage } } : { partialSuccess: {} });
    });
  };
}

/** The Elasticsearch bulk API at `/api/v1/_elastic/_bulk`, for Fluent Bit, Vector, Filebeat and Logstash. */
export function elasticRoutes(deps: IngestDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    acceptGzip(app, deps.maxInflateRatio);
    // NDJSON arrives as application/x-ndjson or application/json depending on the shipper: read every body as text.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: deps.bodyLimit }, (_request, body, done) => done(null, body));

    const bulk = async (request: FastifyRequest) => {
      const started = deps.now();
      if (typeof request.body !== 'string') throw invalidBody('the bulk body must be NDJSON');
      const { items, entries } = parseBulk(request.body, (request.params as { index?: string }).index ?? 'logs', started);
      if (items.length === 0) throw invalidBody('the bulk request holds no actions');
      await store(deps, request, 'bulk', entries, items.length - entries.length);
      return bulkResponse(items, Math.max(0, deps.now() - started));
    };
    const options = {
      bodyLimit: deps.bodyLimit,
      schema: {
        tags: ['ingest'],
        summary: 'Elasticsearch bulk API (index and create actions); needs logs:write',
        security: SECURED,
        response: { 200: BulkResponse, ...errorResponses(400, 401, 403, 413, 415, 429) },
      },
      onRequest: deps.guards.requireIngest,
    };
    app.post('/_bulk', options, bulk);
    app.put('/_bulk', options, bulk);
    app.post('/:index/_bulk', { ...options, schema: { ...options.schema, params: Type.Object({ index: Type.String({ maxLength: 255 }) }) } }, bulk);

    // Shippers probe the cluster root for its version before sending.
    app.get('/', { schema: { tags: ['ingest'], summary: 'Elasticsearch-compatible cluster info, for shippers that check the version', security: SECURED }, onRequest: deps.guards.requireIngest },
      async () => ({ name: 'gerbang-logs', cluster_name: 'gerbang', version: { number: '8.11.0', build_flavor: 'default', lucene_version: '9.8.0' }, tagline: 'You Know, for Search' }));
  };
}
