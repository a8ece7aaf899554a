import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { errorResponses, invalidBody } from '../../http/errors.js';
import type { LogsGuards } from '../auth/authenticate.js';
import { acceptGzip, acceptProtobuf, countFailedBatch, ingestBatch, type Accounting, type Mapping } from './pipeline.js';
import type { OtlpSignal } from './signals.js';

export interface IngestDeps extends Accounting {
  guards: LogsGuards;
  bodyLimit: number;
  /** LOGS_INGEST_MAX_INFLATE_RATIO (inflate.ts). */
  maxInflateRatio?: number;
}

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
          schema: {
            tags: ['ingest'],
            summary: signal.summary,
            security: SECURED,
            response: errorResponses(400, 401, 403, 413, 415, 429, 503),
          },
          // Credentials before the body is inflated or parsed.
          onRequest: deps.guards.requireIngest,
          onError: countFailedBatch(deps.stats, (request) => signal.source(request, [])),
        },
        async (request, reply: FastifyReply) => {
          const protobuf = Buffer.isBuffer(request.body);
          const decodeAndStore = async (prepared?: () => void): Promise<Mapping<unknown>> => {
            let mapping: Mapping<unknown>;
            if (protobuf && signal.decodeAndMap) {
              try {
                mapping = await signal.decodeAndMap(request.body as Buffer, deps.now());
              } catch {
                throw invalidBody(`not an OTLP ${signal.message}`);
              }
            } else {
              let decoded: unknown;
              try {
                decoded = protobuf ? signal.decode(request.body as Buffer) : request.body;
              } catch {
                throw invalidBody(`not an OTLP ${signal.message}`);
              }
              try {
                mapping = signal.map(decoded, deps.now());
              } catch (error) {
                throw invalidBody((error as Error).message);
              }
            }
            await ingestBatch(deps, request, signal.source(request, mapping.items), mapping, (items) =>
              signal.store(request, items, prepared),
            );
            return mapping;
          };
          const mapping = signal.batches ? await signal.batches.run(decodeAndStore) : await decodeAndStore();
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
