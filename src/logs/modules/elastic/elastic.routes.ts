import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { LogsGuards } from '../auth/authenticate.js';
import { bulkResponse, parseBulk } from './bulk.js';
import { acceptGzip, countFailedBatch, ingestBatch, type Accounting } from '../ingest/pipeline.js';
import type { LogStore } from '../store/log-store.js';
import { elasticAnswers, errorBody, parsingError, toElasticError } from './elastic-errors.js';
import { fieldCapsOf, mappingOf } from './mapping.js';
import { runSearch, type SearchParams } from './search.js';
import { indexQuery } from '../query/elastic-dsl.js';

export interface ElasticDeps extends Accounting {
  guards: LogsGuards;
  store: LogStore;
  bodyLimit: number;
  /** LOGS_INGEST_MAX_INFLATE_RATIO (inflate.ts). */
  maxInflateRatio?: number;
}

/** The version the official clients and shippers see: an 8.x they all accept. */
export const COMPATIBLE_VERSION = '8.11.0';

const SECURED: Record<string, string[]>[] = [{ basic: [] }, { bearer: [] }];
const tags = ['elasticsearch'];
const IndexParams = Type.Object({ index: Type.String({ minLength: 1, maxLength: 1024 }) });
/** Elasticsearch's answers are documented by Elasticsearch; here only their outline. */
const Answer = Type.Record(Type.String(), Type.Unknown());

function jsonBody(request: FastifyRequest): unknown {
  const text = typeof request.body === 'string' ? request.body.trim() : '';
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw parsingError('the request body is not JSON');
  }
}

/** NDJSON lines of `_msearch`: a header, then a search body, per search. */
function msearchLines(request: FastifyRequest): unknown[] {
  if (typeof request.body !== 'string' || request.body.trim() === '') throw parsingError('the msearch body is empty');
  return request.body
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line, index) => {
      try {
        return JSON.parse(line) as unknown;
      } catch {
        throw parsingError(`line ${index + 1} of the msearch body is not JSON`);
      }
    });
}

/**
 * The Elasticsearch-compatible API under `/api/v1/_elastic` (docs/elasticsearch.md): what shippers
 * (Fluent Bit, Vector, Filebeat, Logstash, rsyslog) write with and what the official clients and
 * Grafana's data source read with. Writing needs logs:write, reading logs:read.
 */
export function elasticRoutes(deps: ElasticDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    elasticAnswers(app);
    acceptGzip(app, deps.maxInflateRatio);
    // NDJSON and JSON arrive as application/x-ndjson, application/json or Elasticsearch's vendor
    // types: read every body as text and parse per route.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: deps.bodyLimit }, (_request, body, done) => done(null, body));

    const writer = deps.guards.requireIngest;
    const reader = deps.guards.requireReader(['logs:read']);
    const anyone = deps.guards.requireReader(['logs:read', 'logs:write']);
    const scope = (request: FastifyRequest) => ({ store: deps.store, tenantId: request.tenantId, now: deps.now() });

    // Cluster facts that shippers and clients probe before they start.
    const probe = (path: string, summary: string, handler: (request: FastifyRequest, reply: FastifyReply) => unknown) =>
      app.get(path, { schema: { tags, summary, security: SECURED }, onRequest: anyone }, handler);
    probe('/', 'Cluster info (version), as Elasticsearch answers it', () => ({
      name: 'gerbang-logs',
      cluster_name: 'gerbang',
      cluster_uuid: 'gerbang',
      version: {
        number: COMPATIBLE_VERSION,
        build_flavor: 'default',
        build_type: 'tar',
        lucene_version: '9.8.0',
        minimum_wire_compatibility_version: '7.17.0',
        minimum_index_compatibility_version: '7.0.0',
      },
      tagline: 'You Know, for Search',
    }));
    probe('/_cluster/health', 'Cluster health (always green: one node)', () => ({
      cluster_name: 'gerbang',
      status: 'green',
      timed_out: false,
      number_of_nodes: 1,
      number_of_data_nodes: 1,
    }));
    probe('/_cat/health', 'Cluster health as _cat text, or JSON with ?format=json', (request, reply) => {
      if ((request.query as { format?: string }).format === 'json') return [{ cluster: 'gerbang', status: 'green', 'node.total': '1' }];
      return reply.type('text/plain; charset=UTF-8').send(`${Math.floor(deps.now() / 1000)} gerbang green 1 1\n`);
    });
    const nodes = (request: FastifyRequest) => ({
      _nodes: { total: 1, successful: 1, failed: 0 },
      cluster_name: 'gerbang',
      nodes: {
        gerbang: {
          name: 'gerbang-logs',
          version: COMPATIBLE_VERSION,
          roles: ['data', 'ingest', 'master'],
          http: { publish_address: request.host },
        },
      },
    });
    probe('/_nodes', 'The one node (for shippers that sniff)', nodes);
    probe('/_nodes/http', 'The one node (for shippers that sniff)', nodes);
    probe('/_license', 'A basic licence (Logstash and Beats ask)', () => ({
      license: { status: 'active', type: 'basic', uid: 'gerbang' },
    }));
    // Index templates are accepted and ignored: fields are typed as they arrive (docs/elasticsearch.md).
    for (const kind of ['_index_template', '_template']) {
      app.put(`/${kind}/:name`, { schema: { tags, summary: 'Accepted and ignored', security: SECURED }, onRequest: writer }, async () => ({
        acknowledged: true,
      }));
      app.get(`/${kind}/:name`, { schema: { tags, summary: 'Accepted and ignored', security: SECURED }, onRequest: anyone }, async () => ({
        [kind === '_index_template' ? 'index_templates' : 'templates']: [],
      }));
    }

    // Writing.
    const bulk = async (request: FastifyRequest) => {
      const started = deps.now();
      if (typeof request.body !== 'string') throw parsingError('the bulk body must be NDJSON');
      const { items, entries } = parseBulk(request.body, (request.params as { index?: string }).index ?? 'logs', started);
      if (items.length === 0) throw parsingError('the bulk request holds no actions');
      const mapping = { items: entries, rejected: items.length - entries.length, errors: [] };
      let duplicates: readonly number[] = [];
      await ingestBatch(deps, request, 'bulk', mapping, async (stored) => {
        ({ duplicates } = await deps.store.append(request.tenantId, stored));
      });
      return bulkResponse(items, new Set(duplicates), Math.max(0, deps.now() - started));
    };
    const bulkOptions = {
      bodyLimit: deps.bodyLimit,
      schema: { tags, summary: 'Bulk API (index and create; _id de-duplicates); needs logs:write', security: SECURED },
      onRequest: writer,
      onError: countFailedBatch(deps.stats, () => 'bulk'),
    };
    app.post('/_bulk', bulkOptions, bulk);
    app.put('/_bulk', bulkOptions, bulk);
    app.post('/:index/_bulk', { ...bulkOptions, schema: { ...bulkOptions.schema, params: IndexParams } }, bulk);
    app.put('/:index/_bulk', { ...bulkOptions, schema: { ...bulkOptions.schema, params: IndexParams } }, bulk);

    // Reading.
    const search = (request: FastifyRequest) =>
      runSearch(scope(request), (request.params as { index?: string }).index, jsonBody(request), request.query as SearchParams);
    const searchOptions = {
      schema: { tags, summary: 'Search (query DSL subset, aggregations); needs logs:read', security: SECURED, response: { 200: Answer } },
      onRequest: reader,
    };
    const indexed = { ...searchOptions, schema: { ...searchOptions.schema, params: IndexParams } };
    app.get('/_search', searchOptions, search);
    app.post('/_search', searchOptions, search);
    app.get('/:index/_search', indexed, search);
    app.post('/:index/_search', indexed, search);

    const msearch = async (request: FastifyRequest) => {
      const started = deps.now();
      const lines = msearchLines(request);
      if (lines.length % 2 !== 0) throw parsingError('an msearch body is pairs of lines: a header, then a search');
      const pathIndex = (request.params as { index?: string }).index;
      const responses = [];
      // One after another: a dashboard's searches share the tenant's read budget.
      for (let i = 0; i < lines.length; i += 2) {
        const header = lines[i] as { index?: string | string[] } | null;
        try {
          const answer = await runSearch(scope(request), header?.index ?? pathIndex, lines[i + 1]);
          responses.push({ ...answer, status: 200 });
        } catch (error) {
          const elastic = toElasticError(error);
          if (elastic.status >= 500 || elastic.status === 401 || elastic.status === 403) throw error;
          responses.push(errorBody(elastic.status, elastic.type, elastic.message));
        }
      }
      return { took: deps.now() - started, responses };
    };
    app.get('/_msearch', searchOptions, msearch);
    app.post('/_msearch', searchOptions, msearch);
    app.get('/:index/_msearch', indexed, msearch);
    app.post('/:index/_msearch', indexed, msearch);

    const fields = async (request: FastifyRequest) =>
      (await deps.store.fields(request.tenantId)).filter((field) => field.name !== '_id' && field.name !== '_index');
    const mapping = async (request: FastifyRequest) => {
      const index = (request.params as { index?: string }).index ?? 'logs';
      indexQuery(index); // the same index rules as searches
      return { [index]: { mappings: mappingOf(await fields(request)) } };
    };
    app.get(
      '/_mapping',
      { ...searchOptions, schema: { ...searchOptions.schema, summary: 'Field types, from the fields seen so far' } },
      mapping,
    );
    app.get(
      '/:index/_mapping',
      { ...indexed, schema: { ...indexed.schema, summary: 'Field types, from the fields seen so far' } },
      mapping,
    );
    const fieldCaps = async (request: FastifyRequest) => {
      const index = (request.params as { index?: string }).index ?? 'logs';
      const asked =
        (request.query as { fields?: string }).fields ?? (jsonBody(request) as { fields?: string[] } | undefined)?.fields ?? '*';
      const patterns = Array.isArray(asked) ? asked.map(String) : String(asked).split(',');
      return { indices: [index], fields: fieldCapsOf(await fields(request), patterns) };
    };
    for (const path of ['/_field_caps', '/:index/_field_caps']) {
      const options = path.includes(':index') ? indexed : searchOptions;
      app.get(path, { ...options, schema: { ...options.schema, summary: 'Field capabilities' } }, fieldCaps);
      app.post(path, { ...options, schema: { ...options.schema, summary: 'Field capabilities' } }, fieldCaps);
    }
  };
}
