import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { errorResponses, invalidBody } from '../../http/errors.js';
import type { LogsGuards } from '../auth/authenticate.js';
import type { LogStore } from '../store/log-store.js';
import { bulkResponse, parseBulk } from './elastic-bulk.js';
import { acceptGzip, acceptProtobuf, ingestBatch, type Accounting, type Mapping } from './pipeline.js';
import type { OtlpSignal } from './signals.js';

export interface IngestDeps extends Accounting {
  guards: LogsGuards;
  bodyLimit: number;
  /** LOGS_INGEST_MAX_INFLATE_RATIO (inflate.ts). */
  maxInflateRatio?: number;
}

const BulkResponse = Type.Object({
  took: Type.Integer(),
  errors: Type.Boolean(),
  items: Type.Array(Type.Record(Type.String(), Type.Unknown())),
});

const SECURED: Record<string, string[]>[] = [{ bearer: [] }, { basic: [] }];

/** OTLP/HTTP, one route per signal (`/v1/logs`, `/v1/traces`, `/v1/metrics`), as the OpenTelemetry SDKs and Collector send. */
export function otlpRoutes(deps: IngestDeps, signals: readonly OtlpSignal<any>[]): FastifyPluginAsyncTypebox {
  return async (app) => {
    acceptGzip(app, deps.maxInflateRatio);
    acceptProtobuf(app, deps.bodyLimit);
    for (const signal of signals) {
      app.post(
        signal.path,
        {
          bodyLimit: deps.bodyLimit,
          schema: { tags: ['ingest'], summary: signal.summary, security: SECURED, response: errorResponses(400, 401, 403, 413, 415, 429) },
          // Credentials before the body is inflated or parsed.
          onRequest: deps.guards.requireIngest,
        },
        async (request, reply: FastifyReply) => {
          const protobuf = Buffer.isBuffer(request.body);
          let decoded: unknown;
          try {
            decoded = protobuf ? signal.decode(request.body as Buffer) : request.body;
          } catch {
            throw invalidBody(`not an OTLP ${signal.message}`);
          }
          let mapping: Mapping<unknown>;
          try {
            mapping = signal.map(decoded, deps.now());
          } catch (error) {
            throw invalidBody((error as Error).message);
          }
          await ingestBatch(deps, request, signal.source(request, mapping.items), mapping, (items) => signal.store(request, items));
          const errorMessage = mapping.errors.join('; ');
          if (protobuf) {
            reply.header('content-type', 'application/x-protobuf');
            return reply.send(Buffer.from(signal.encodeResponse(mapping.rejected, errorMessage)));
          }
          return reply.send(
            mapping.rejected > 0 ? { partialSuccess: { [signal.rejectedField]: mapping.rejected, errorMessage } } : { partialSuccess: {} },
          );
        },
      );
    }
  };
}

/** The Elasticsearch bulk API at `/api/v1/_elastic/_bulk`, for Fluent Bit, Vector, Filebeat and Logstash. */
export function elasticRoutes(deps: IngestDeps & { store: LogStore }): FastifyPluginAsyncTypebox {
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
      const mapping = { items: entries, rejected: items.length - entries.length, errors: [] };
      await ingestBatch(deps, request, 'bulk', mapping, (stored) => deps.store.append(request.tenantId, stored));
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
    app.post(
      '/:index/_bulk',
      { ...options, schema: { ...options.schema, params: Type.Object({ index: Type.String({ maxLength: 255 }) }) } },
      bulk,
    );

    // Shippers probe the cluster root for its version before sending.
    app.get(
      '/',
      {
        schema: {
          tags: ['ingest'],
          summary: 'Elasticsearch-compatible cluster info, for shippers that check the version',
          security: SECURED,
        },
        onRequest: deps.guards.requireIngest,
      },
      async () => ({
        name: 'gerbang-logs',
        cluster_name: 'gerbang',
        version: { number: '8.11.0', build_flavor: 'default', lucene_version: '9.8.0' },
        tagline: 'You Know, for Search',
      }),
    );
  };
}
