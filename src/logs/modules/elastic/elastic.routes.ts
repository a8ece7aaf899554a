import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { LogsGuards } from '../auth/authenticate.js';
import { bulkResponse, bulkResponseText, parseBulkInTurns } from './bulk.js';
import { acceptGzip, countFailedBatch, ingestBatch, type Accounting, type LogBatches } from '../ingest/pipeline.js';
import type { LogStore } from '../store/log-store.js';
import { elasticAnswers, errorBody, parsingError, toElasticError, unsupported } from './elastic-errors.js';
import { fieldCapsOf, mappingOf } from './mapping.js';
import { nextScrollPage, runSearch, type SearchParams } from './search.js';
import {
  checkIndexName,
  checkRefresh,
  countDocuments,
  getDocument,
  indexDocument,
  indexHolds,
  knownParams,
  multiGet,
} from './documents.js';
import { decodePit, decodeScroll, encodeCursor, keepAliveMs } from './cursors.js';
import { startupRoutes } from './startup.js';
import { applyFilterPath, parseFilterPath, type FilterPath } from './filter-path.js';
import { ElasticError } from './elastic-errors.js';
import { indexQuery } from '../query/elastic-dsl.js';

export interface ElasticDeps extends Accounting {
  guards: LogsGuards;
  store: LogStore;
  bodyLimit: number;
  /** LOGS_INGEST_MAX_INFLATE_RATIO (inflate.ts). */
  maxInflateRatio?: number;
  /** The log batches from decoding to commit (pipeline.ts), shared with OTLP logs. */
  batches: LogBatches;
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
    // filter_path (filter-path.ts): read before the handler, so that a bad one is a 400; applied to every JSON answer that succeeded.
    const filters = new WeakMap<FastifyRequest, FilterPath>();
    app.addHook('preHandler', async (request) => {
      const filter = parseFilterPath((request.query as Record<string, unknown> | undefined)?.filter_path);
      if (filter) filters.set(request, filter);
    });
    app.addHook('preSerialization', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
      const filter = filters.get(request);
      return filter && reply.statusCode < 300 ? applyFilterPath(payload, filter) : payload;
    });
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
      license: {
        status: 'active',
        type: 'basic',
        uid: 'gerbang',
        issue_date_in_millis: 0,
        max_nodes: 1000,
        issued_to: 'gerbang',
        issuer: 'gerbang',
      },
    }));
    // Writing.
    const bulk = async (request: FastifyRequest, reply: FastifyReply) => {
      const started = deps.now();
      const body = request.body;
      if (typeof body !== 'string') throw parsingError('the bulk body must be NDJSON');
      const { items, duplicates } = await deps.batches.run(async (prepared) => {
        const { items, entries } = await parseBulkInTurns(body, (request.params as { index?: string }).index ?? 'logs', started);
        if (items.length === 0) throw parsingError('the bulk request holds no actions');
        const mapping = { items: entries, rejected: items.length - entries.length, errors: [] };
        let duplicates: readonly number[] = [];
        await ingestBatch(deps, request, 'bulk', mapping, async (stored) => {
          ({ duplicates } = await deps.store.append(request.tenantId, stored, { prepared }));
        });
        return { items, duplicates };
      });
      const took = Math.max(0, deps.now() - started);
      // A `filter_path` (Elasticsearch's common parameter) selects from the answer's object: the text only without one.
      if ((request.query as Record<string, unknown> | undefined)?.filter_path !== undefined) {
        return bulkResponse(items, new Set(duplicates), took);
      }
      return reply.type('application/json; charset=utf-8').send(bulkResponseText(items, new Set(duplicates), took));
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

    startupRoutes(app, { writer, anyone, tags, security: SECURED, store: deps.store, jsonBody });

    // One document at a time (documents.ts).
    const DocParams = Type.Object({
      index: Type.String({ minLength: 1, maxLength: 1024 }),
      id: Type.String({ minLength: 1, maxLength: 1024 }),
    });
    const writeOne = (create: boolean) => async (request: FastifyRequest, reply: FastifyReply) => {
      const { index, id } = request.params as { index: string; id?: string };
      const answer = await indexDocument(deps, request, { index, id, create }, jsonBody(request));
      return reply.status(answer.status).send(answer.body);
    };
    const writeDoc = (summary: string, params: typeof DocParams | typeof IndexParams) => ({
      bodyLimit: deps.bodyLimit,
      schema: { tags, summary, security: SECURED, params },
      onRequest: writer,
      onError: countFailedBatch(deps.stats, () => 'bulk'),
    });
    app.put(
      '/:index/_doc/:id',
      writeDoc('Index one document under an _id (a known _id keeps the first: noop)', DocParams),
      writeOne(false),
    );
    app.post(
      '/:index/_doc/:id',
      writeDoc('Index one document under an _id (a known _id keeps the first: noop)', DocParams),
      writeOne(false),
    );
    app.post('/:index/_doc', writeDoc('Index one document; its _id is generated', IndexParams), writeOne(false));
    app.put('/:index/_create/:id', writeDoc('Create one document (409 on a known _id)', DocParams), writeOne(true));
    app.post('/:index/_create/:id', writeDoc('Create one document (409 on a known _id)', DocParams), writeOne(true));
    app.get(
      '/:index/_doc/:id',
      {
        schema: { tags, summary: 'Get one document by _id (HEAD: whether it exists)', security: SECURED, params: DocParams },
        onRequest: reader,
      },
      async (request, reply) => {
        const { index, id } = request.params as { index: string; id: string };
        const answer = await getDocument(scope(request), request, index, id);
        return reply.status(answer.status).send(answer.body);
      },
    );
    const appendOnly = (what: string) => () => {
      throw new ElasticError(
        405,
        'illegal_argument_exception',
        `logs are append-only: ${what} cannot be deleted or updated; retention removes whole days (docs/log-store.md, docs/elasticsearch.md)`,
      );
    };
    for (const [path, what, params] of [
      ['/:index/_doc/:id', 'a document', DocParams],
      ['/:index/_update/:id', 'a document', DocParams],
      ['/:index', 'an index', IndexParams],
    ] as const) {
      const options = { schema: { tags, summary: 'Refused: logs are append-only (405)', security: SECURED, params }, onRequest: writer };
      if (path !== '/:index/_update/:id') app.delete(path, options, appendOnly(what));
      else app.post(path, options, appendOnly(what));
    }
    app.post(
      '/_delete_by_query',
      { schema: { tags, summary: 'Refused: logs are append-only (405)', security: SECURED }, onRequest: writer },
      appendOnly('documents'),
    );
    app.post(
      '/:index/_delete_by_query',
      { schema: { tags, summary: 'Refused: logs are append-only (405)', security: SECURED, params: IndexParams }, onRequest: writer },
      appendOnly('documents'),
    );
    const mget = (request: FastifyRequest) =>
      multiGet(scope(request), request, (request.params as { index?: string }).index, jsonBody(request));
    const count = (request: FastifyRequest) =>
      countDocuments(scope(request), request, (request.params as { index?: string }).index, jsonBody(request));
    for (const method of ['get', 'post'] as const) {
      app[method](
        '/_mget',
        { schema: { tags, summary: 'Get several documents by _index and _id', security: SECURED }, onRequest: reader },
        mget,
      );
      app[method](
        '/:index/_mget',
        { schema: { tags, summary: 'Get several documents by _id', security: SECURED, params: IndexParams }, onRequest: reader },
        mget,
      );
      app[method]('/_count', { schema: { tags, summary: 'Count matches (query DSL or q)', security: SECURED }, onRequest: reader }, count);
      app[method](
        '/:index/_count',
        { schema: { tags, summary: 'Count matches (query DSL or q)', security: SECURED, params: IndexParams }, onRequest: reader },
        count,
      );
    }
    // An index exists once a document was written to it; creating one is acknowledged (its settings and mappings ignored).
    app.get(
      '/:index',
      {
        schema: { tags, summary: 'An index (HEAD: whether any document was written to it)', security: SECURED, params: IndexParams },
        onRequest: reader,
      },
      async (request, reply) => {
        const { index } = request.params as { index: string };
        if (index.startsWith('_')) throw unsupported(`GET /${index.slice(0, 100)}`);
        knownParams(request, [
          'ignore_unavailable',
          'allow_no_indices',
          'expand_wildcards',
          'flat_settings',
          'include_defaults',
          'local',
          'master_timeout',
          'features',
        ]);
        if (!(await indexHolds(scope(request), index))) {
          return reply.status(404).send(errorBody(404, 'index_not_found_exception', `no such index [${index.slice(0, 100)}]`));
        }
        const mappings = mappingOf(await fields(request));
        return {
          [index]: { aliases: {}, mappings, settings: { index: { number_of_shards: '1', number_of_replicas: '0', provided_name: index } } },
        };
      },
    );
    app.put(
      '/:index',
      {
        bodyLimit: deps.bodyLimit,
        schema: { tags, summary: 'Create an index: acknowledged (settings and mappings ignored)', security: SECURED, params: IndexParams },
        onRequest: writer,
      },
      async (request, reply) => {
        const { index } = request.params as { index: string };
        knownParams(request, ['wait_for_active_shards', 'timeout', 'master_timeout', 'include_type_name']);
        checkIndexName(index);
        const body = jsonBody(request);
        if (body !== undefined && !(typeof body === 'object' && body !== null && !Array.isArray(body)))
          throw parsingError('the index body must be a JSON object');
        reply.header('warning', '299 Elasticsearch-8.11.0 "index settings and mappings are ignored: fields are typed as they arrive"');
        return { acknowledged: true, shards_acknowledged: true, index };
      },
    );
    const refresh = (request: FastifyRequest) => {
      const { index } = request.params as { index?: string };
      if (index !== undefined) indexQuery(index);
      checkRefresh(undefined);
      return { _shards: { total: 1, successful: 1, failed: 0 } };
    };
    for (const method of ['get', 'post'] as const) {
      app[method](
        '/_refresh',
        { schema: { tags, summary: 'Accepted: every write is searchable once answered', security: SECURED }, onRequest: anyone },
        refresh,
      );
      app[method](
        '/:index/_refresh',
        {
          schema: { tags, summary: 'Accepted: every write is searchable once answered', security: SECURED, params: IndexParams },
          onRequest: anyone,
        },
        refresh,
      );
    }

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
    // Scrolls and points in time: stateless cursors (cursors.ts), so any instance answers any page.
    const scroll = async (request: FastifyRequest) => {
      const body = jsonBody(request);
      if (body !== undefined && (typeof body !== 'object' || body === null || Array.isArray(body)))
        throw parsingError('the scroll body must be a JSON object');
      const fromBody = (body ?? {}) as { scroll_id?: unknown; scroll?: unknown };
      const query = knownParams(request, ['scroll', 'scroll_id', 'rest_total_hits_as_int']);
      const id = (request.params as { scroll_id?: string }).scroll_id ?? fromBody.scroll_id ?? query.scroll_id;
      if (id === undefined)
        throw new ElasticError(400, 'action_request_validation_exception', 'Validation Failed: 1: scrollId is missing;');
      return nextScrollPage(scope(request), id, fromBody.scroll ?? query.scroll);
    };
    const ScrollParams = Type.Object({ scroll_id: Type.String({ minLength: 1, maxLength: 65536 }) });
    for (const method of ['get', 'post'] as const) {
      app[method](
        '/_search/scroll',
        { ...searchOptions, schema: { ...searchOptions.schema, summary: 'The next page of a scroll' } },
        scroll,
      );
      app[method](
        '/_search/scroll/:scroll_id',
        { ...searchOptions, schema: { ...searchOptions.schema, summary: 'The next page of a scroll', params: ScrollParams } },
        scroll,
      );
    }
    const clearScroll = async (request: FastifyRequest) => {
      knownParams(request, ['scroll_id']);
      const fromPath = (request.params as { scroll_id?: string }).scroll_id;
      const body = jsonBody(request) as { scroll_id?: unknown } | undefined;
      let ids: unknown[] = fromPath === undefined ? [] : fromPath.split(',');
      if (body !== undefined) {
        if (typeof body !== 'object' || body === null || Array.isArray(body)) throw parsingError('the body must be a JSON object');
        ids = ids.concat(Array.isArray(body.scroll_id) ? body.scroll_id : body.scroll_id === undefined ? [] : [body.scroll_id]);
      }
      if (ids.length === 0)
        throw new ElasticError(400, 'action_request_validation_exception', 'Validation Failed: 1: no scroll ids specified;');
      if (fromPath === '_all') return { succeeded: true, num_freed: 0 };
      // Nothing is held: each id is checked, and counted as freed when still alive.
      let freed = 0;
      for (const id of ids) {
        try {
          decodeScroll(id, deps.now());
          freed += 1;
        } catch (error) {
          if (!(error instanceof ElasticError) || error.status !== 404) throw error;
        }
      }
      return { succeeded: true, num_freed: freed };
    };
    app.delete(
      '/_search/scroll',
      { ...searchOptions, schema: { ...searchOptions.schema, summary: 'Clear scrolls (nothing is held: stateless)' } },
      clearScroll,
    );
    app.delete(
      '/_search/scroll/:scroll_id',
      {
        ...searchOptions,
        schema: { ...searchOptions.schema, summary: 'Clear scrolls (nothing is held: stateless)', params: ScrollParams },
      },
      clearScroll,
    );
    app.post(
      '/:index/_pit',
      { ...indexed, schema: { ...indexed.schema, summary: 'Open a point in time (a stateless id)' } },
      async (request) => {
        const { index } = request.params as { index: string };
        const query = knownParams(request, [
          'keep_alive',
          'ignore_unavailable',
          'expand_wildcards',
          'preference',
          'routing',
          'allow_partial_search_results',
        ]);
        if (query.keep_alive === undefined)
          throw new ElasticError(400, 'action_request_validation_exception', 'Validation Failed: 1: [keep_alive] is not specified;');
        const expires = deps.now() + keepAliveMs(query.keep_alive, 'keep_alive');
        indexQuery(index);
        return { id: encodeCursor({ kind: 'pit', index, expires }) };
      },
    );
    app.delete(
      '/_pit',
      { ...searchOptions, schema: { ...searchOptions.schema, summary: 'Close a point in time (nothing is held: stateless)' } },
      async (request) => {
        knownParams(request, []);
        const body = jsonBody(request) as { id?: unknown } | undefined;
        if (body === undefined || typeof body !== 'object' || body === null || body.id === undefined) {
          throw new ElasticError(400, 'action_request_validation_exception', 'Validation Failed: 1: point in time id is missing;');
        }
        try {
          decodePit(body.id, deps.now());
        } catch (error) {
          if (error instanceof ElasticError && error.status === 404) return { succeeded: true, num_freed: 0 };
          throw error;
        }
        return { succeeded: true, num_freed: 1 };
      },
    );

    // OpenSearch's own point-in-time API: the same stateless ids under OpenSearch's paths and answers.
    app.post(
      '/:index/_search/point_in_time',
      { ...indexed, schema: { ...indexed.schema, summary: "Open a point in time (OpenSearch's API; a stateless id)" } },
      async (request) => {
        const { index } = request.params as { index: string };
        const query = knownParams(request, ['keep_alive', 'preference', 'routing', 'expand_wildcards', 'allow_partial_pit_creation']);
        if (query.keep_alive === undefined)
          throw new ElasticError(400, 'action_request_validation_exception', 'Validation Failed: 1: [keep_alive] is not specified;');
        const now = deps.now();
        const expires = now + keepAliveMs(query.keep_alive, 'keep_alive');
        indexQuery(index);
        return {
          pit_id: encodeCursor({ kind: 'pit', index, expires }),
          _shards: { total: 1, successful: 1, skipped: 0, failed: 0 },
          creation_time: now,
        };
      },
    );
    app.delete(
      '/_search/point_in_time',
      {
        ...searchOptions,
        schema: { ...searchOptions.schema, summary: "Close points in time (OpenSearch's API; nothing is held: stateless)" },
      },
      async (request) => {
        knownParams(request, []);
        const body = jsonBody(request) as { pit_id?: unknown } | undefined;
        if (body === undefined || typeof body !== 'object' || body === null || Array.isArray(body) || body.pit_id === undefined) {
          throw new ElasticError(400, 'action_request_validation_exception', 'Validation Failed: 1: no pit ids specified;');
        }
        const ids = Array.isArray(body.pit_id) ? body.pit_id : [body.pit_id];
        if (ids.length === 0)
          throw new ElasticError(400, 'action_request_validation_exception', 'Validation Failed: 1: no pit ids specified;');
        // Each id is checked; one past its keep_alive is reported as not freed, as OpenSearch reports an unknown one.
        const pits = ids.map((id) => {
          try {
            decodePit(id, deps.now());
            return { successful: true, pit_id: id as string };
          } catch (error) {
            if (error instanceof ElasticError && error.status === 404) return { successful: false, pit_id: id as string };
            throw error;
          }
        });
        return { pits };
      },
    );
    app.get(
      '/_search/point_in_time/_all',
      {
        ...searchOptions,
        schema: { ...searchOptions.schema, summary: "Points in time held (OpenSearch's API): none, ids are stateless" },
      },
      async (request) => {
        knownParams(request, []);
        return { pits: [] };
      },
    );
    app.delete(
      '/_search/point_in_time/_all',
      {
        ...searchOptions,
        schema: { ...searchOptions.schema, summary: "Close every point in time (OpenSearch's API): none is held" },
      },
      async (request) => {
        knownParams(request, []);
        return { pits: [] };
      },
    );

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
