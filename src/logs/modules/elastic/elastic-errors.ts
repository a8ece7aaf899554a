import type { FastifyInstance } from 'fastify';
import { toAppError } from '../../../shared/errors/handler.js';
import { DslError, QuerySyntaxError } from '../query/errors.js';
import { QueryTimeoutError } from '../store/read-budget.js';
import { dict } from '../../../shared/dict.js';
import { storageErrorOf } from '../store/storage-watch.js';

/**
 * Errors of the Elasticsearch-compatible API in Elasticsearch's own shape, which its clients and
 * shippers parse: `{"error": {"root_cause": [{type, reason}], type, reason}, "status": n}`.
 */
export class ElasticError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    reason: string,
  ) {
    super(reason);
  }
}

/** A request outside the supported subset: a 400 that names what is not supported. */
export function unsupported(what: string): ElasticError {
  return new ElasticError(
    400,
    'illegal_argument_exception',
    `${what} is not supported by Gerbang's Elasticsearch-compatible API (docs/elasticsearch.md)`,
  );
}

export function parsingError(reason: string): ElasticError {
  return new ElasticError(400, 'parsing_exception', reason);
}

/** The store's RangeErrors (too many groups or values, a bad interval) as a 400 naming the limit. */
export async function withinLimits<T>(read: Promise<T>): Promise<T> {
  try {
    return await read;
  } catch (error) {
    if (error instanceof RangeError) throw new ElasticError(400, 'too_many_buckets_exception', error.message);
    throw error;
  }
}

export function errorBody(status: number, type: string, reason: string) {
  return { error: { root_cause: [{ type, reason }], type, reason }, status };
}

/** Whatever a handler threw, as Elasticsearch would answer it. */
export function toElasticError(error: unknown): ElasticError {
  if (error instanceof ElasticError) return error;
  if (error instanceof QuerySyntaxError) {
    return new ElasticError(400, 'query_shard_exception', `Failed to parse query: ${error.message} at position ${error.position}`);
  }
  if (error instanceof DslError) return error.kind === 'parsing' ? parsingError(error.message) : unsupported(error.message);
  if (error instanceof QueryTimeoutError) return new ElasticError(503, 'search_timeout_exception', 'the search ran out of its time budget');
  const appError = storageErrorOf(error) ?? toAppError(error);
  // A store that cannot take writes now: 503, as Elasticsearch answers while its disk is blocked or a shard is away; shippers retry.
  if (appError.code === 'LOGS_STORAGE_FULL' || appError.code === 'LOGS_STORAGE_READ_ONLY') {
    return new ElasticError(503, 'cluster_block_exception', appError.message);
  }
  if (appError.code === 'LOGS_DATABASE_UNAVAILABLE') return new ElasticError(503, 'unavailable_shards_exception', appError.message);
  // One answer for every refused credential: it tells no one which part was wrong.
  if (appError.status === 401) return new ElasticError(401, 'security_exception', 'unable to authenticate the request');
  if (appError.status === 403) return new ElasticError(403, 'security_exception', 'action is unauthorized for this user');
  if (appError.status === 429) return new ElasticError(429, 'es_rejected_execution_exception', 'rate limit exceeded; retry later');
  if (appError.status === 413) return new ElasticError(413, 'content_too_long_exception', 'the request body is too large');
  if (appError.status === 415) return new ElasticError(415, 'media_type_header_exception', 'unsupported content encoding or type');
  if (appError.status === 404) return new ElasticError(404, 'resource_not_found_exception', 'not found');
  if (appError.status < 500) return new ElasticError(appError.status, 'illegal_argument_exception', appError.message);
  return new ElasticError(500, 'exception', 'internal error');
}

/**
 * Elasticsearch's answers for the routes registered in `app` (one prefix): the product header on every
 * answer (the official clients refuse a 2xx without it), errors and unknown routes in its shape.
 */
export function elasticAnswers(app: FastifyInstance): void {
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('x-elastic-product', 'Elasticsearch');
  });
  app.setErrorHandler((error, request, reply) => {
    const elastic = toElasticError(error);
    if (elastic.status >= 500) request.log.error({ err: error }, 'elasticsearch-compatible request failed');
    const appHeaders = [401, 429, 503].includes(elastic.status)
      ? ((storageErrorOf(error) ?? toAppError(error)).options.headers ?? dict())
      : dict();
    for (const [name, value] of Object.entries(appHeaders)) reply.header(name, value);
    return reply.status(elastic.status).send(errorBody(elastic.status, elastic.type, elastic.message));
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!.replace(/^\/api\/v1\/_elastic/, '') || '/';
    const error = unsupported(`${request.method} ${path.slice(0, 200)}`);
    return reply.status(400).send(errorBody(400, error.type, error.message));
  });
}
