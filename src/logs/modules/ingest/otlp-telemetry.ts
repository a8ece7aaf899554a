import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { invalidBody } from '../../http/errors.js';
import type { PipelineStats } from './pipeline-stats.js';

/**
 * The common path of OTLP trace and metric ingestion, the same as /v1/logs: decode (protobuf or
 * JSON), map (bad items counted, a body that is not a request at all is 400 and stores nothing),
 * store in one committed transaction, count in PipelineStats, then answer with partial success.
 */
export interface TelemetryMapping<T> {
  items: T[];
  rejected: number;
  errors: string[];
}

export async function ingestTelemetry<T>(options: {
  request: FastifyRequest;
  reply: FastifyReply;
  stats: PipelineStats;
  source: string;
  what: string;
  decode: (body: Buffer) => unknown;
  map: (decoded: unknown) => TelemetryMapping<T>;
  store: (tenantId: string, items: T[]) => Promise<void>;
  encode: (rejected: number, errorMessage: string) => Uint8Array;
  jsonResponse: (rejected: number, errorMessage: string) => object;
}): Promise<FastifyReply> {
  const { request, reply, stats, source } = options;
  const protobuf = Buffer.isBuffer(request.body);
  let decoded: unknown;
  try {
    decoded = protobuf ? options.decode(request.body as Buffer) : request.body;
  } catch {
    throw invalidBody(`not an OTLP ${options.what}`);
  }
  let mapping: TelemetryMapping<T>;
  try {
    mapping = options.map(decoded);
  } catch (error) {
    throw invalidBody((error as Error).message);
  }
  const received = mapping.items.length + mapping.rejected;
  try {
    await options.store(request.tenantId, mapping.items);
  } catch (error) {
    stats.record(request.tenantId, source, { received, stored: 0, rejected: received });
    throw error;
  }
  stats.record(request.tenantId, source, { received, stored: mapping.items.length, rejected: mapping.rejected });
  const errorMessage = mapping.errors.join('; ');
  if (protobuf) {
    reply.header('content-type', 'application/x-protobuf');
    return reply.send(Buffer.from(options.encode(mapping.rejected, errorMessage)));
  }
  return reply.send(options.jsonResponse(mapping.rejected, errorMessage));
}

/** Protobuf bodies as buffers, in the plugin that registers the OTLP routes. */
export function acceptProtobuf(app: FastifyInstance, bodyLimit: number): void {
  app.addContentTypeParser(['application/x-protobuf', 'application/protobuf'], { parseAs: 'buffer', bodyLimit }, (_request, body, done) => done(null, body));
}
