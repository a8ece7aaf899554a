import type { FastifyRequest } from 'fastify';
import { isPlainObject } from '../../../shared/text/storable-text.js';
import { dict } from '../../../shared/dict.js';
import { ingestBatch, type Accounting } from '../ingest/pipeline.js';
import type { LogStore, StoredLogEntry } from '../store/log-store.js';
import { dslSearch } from '../query/elastic-dsl.js';
import { ENTRY_ID, type Condition } from '../query/condition.js';
import { documentToEntry, generatedId, MAX_ID_LENGTH, storedDocument } from './bulk.js';
import { ElasticError, parsingError, unsupported, withinLimits } from './elastic-errors.js';
import { hitOf, MAX_RESULT_WINDOW, sourceFilterOf, type SearchScope } from './search.js';

/**
 * The single-document APIs: index (`_doc`, `_create`), get, multi-get, count and index existence.
 * Logs are append-only (docs/log-store.md: entries live in hour tables and blocks that retention
 * drops whole), so a document is written once: indexing a known `_id` keeps the first document.
 */

const END_OF_TIME = 8_640_000_000_000_000;
const SHARDS = { total: 1, successful: 1, failed: 0 };
/** Parameters every Elasticsearch route takes; they change nothing here. */
const COMMON_PARAMS = ['pretty', 'human', 'error_trace', 'filter_path', 'format'];
/** `ids` per search of `_mget`: within the query language's bound of 100 terms per search. */
const IDS_PER_SEARCH = 50;

/** Elasticsearch's answer to an unknown URL parameter: a 400 naming it. */
export function knownParams(request: FastifyRequest, known: readonly string[]): Record<string, string> {
  const query = (request.query ?? dict()) as Record<string, unknown>;
  for (const [name, value] of Object.entries(query)) {
    if (!known.includes(name) && !COMMON_PARAMS.includes(name)) {
      throw new ElasticError(
        400,
        'illegal_argument_exception',
        `request [${request.url.split('?')[0]!.slice(0, 200)}] contains unrecognized parameter: [${name.slice(0, 50)}]`,
      );
    }
    if (typeof value !== 'string') throw parsingError(`[${name.slice(0, 50)}] must be given once`);
  }
  return query as Record<string, string>;
}

/** `refresh`: every write is searchable once answered, so each value is accepted and changes nothing. */
export function checkRefresh(value: string | undefined): void {
  if (value !== undefined && !['', 'true', 'false', 'wait_for'].includes(value)) {
    throw parsingError(`[refresh] must be true, false or wait_for, got [${value.slice(0, 20)}]`);
  }
}

/** Elasticsearch's rules for a concrete index name (one to write to or read a document of). */
export function checkIndexName(name: string): void {
  const invalid = (reason: string) =>
    new ElasticError(400, 'invalid_index_name_exception', `Invalid index name [${name.slice(0, 100)}], ${reason}`);
  if (name !== name.toLowerCase()) throw invalid('must be lowercase');
  if (/[\\/*?"<>| ,#:]/.test(name)) throw invalid('must not contain \\, /, *, ?, ", <, >, |, space, comma, # or :');
  if (/^[-_+]/.test(name)) throw invalid('must not start with _, - or +');
  if (name === '.' || name === '..') throw invalid('must not be . or ..');
  if (Buffer.byteLength(name) > 255) throw invalid('index name is too long');
}

export function checkId(id: string): void {
  if (id === '') throw new ElasticError(400, 'action_request_validation_exception', 'Validation Failed: 1: id is missing;');
  if (Buffer.byteLength(id) > MAX_ID_LENGTH) {
    throw new ElasticError(
      400,
      'action_request_validation_exception',
      `Validation Failed: 1: id is too long, must be no longer than 512 bytes;`,
    );
  }
}

export interface DocumentDeps extends Accounting {
  store: LogStore;
}

/**
 * `PUT|POST /<index>/_doc[/<id>]`, `PUT|POST /<index>/_create/<id>`: stores one document and answers
 * as Elasticsearch (201 created). A known `_id` (within the id window): `_create` is a 409 conflict,
 * `_doc` keeps the stored document and answers 200 `noop`.
 */
export async function indexDocument(
  deps: DocumentDeps,
  request: FastifyRequest,
  target: { index: string; id: string | undefined; create: boolean },
  rawBody: unknown,
): Promise<{ status: number; body: object }> {
  const params = knownParams(request, ['refresh', 'op_type', 'timeout', 'routing', 'wait_for_active_shards', 'require_alias', 'pipeline']);
  checkRefresh(params.refresh);
  checkIndexName(target.index);
  if (params.pipeline !== undefined) throw unsupported('ingest pipelines ([pipeline])');
  if (params.op_type !== undefined && params.op_type !== 'index' && params.op_type !== 'create') {
    throw parsingError(`[op_type] must be index or create, got [${params.op_type.slice(0, 20)}]`);
  }
  const create = target.create || params.op_type === 'create';
  if (target.id !== undefined) checkId(target.id);
  if (create && target.id === undefined) {
    throw new ElasticError(
      400,
      'action_request_validation_exception',
      'Validation Failed: 1: an id must be provided if version type or value are set;',
    );
  }
  const entry = documentToEntry(rawBody, deps.now());
  if (typeof entry === 'string') throw new ElasticError(400, 'mapper_parsing_exception', entry);
  const id = target.id ?? generatedId();
  const stored = storedDocument(entry, target.index, target.id, id);
  let duplicate = false;
  await ingestBatch(deps, request, 'bulk', { items: [stored], rejected: 0, errors: [] }, async (entries) => {
    duplicate = (await deps.store.append(request.tenantId, entries)).duplicates.length > 0;
  });
  const head = { _index: target.index, _id: id, _version: 1 };
  if (duplicate && create) {
    throw new ElasticError(
      409,
      'version_conflict_engine_exception',
      `[${id.slice(0, 100)}]: version conflict, document already exists (current version [1])`,
    );
  }
  if (duplicate) return { status: 200, body: { ...head, result: 'noop', _shards: SHARDS, _seq_no: 0, _primary_term: 1 } };
  return { status: 201, body: { ...head, result: 'created', _shards: SHARDS, _seq_no: 0, _primary_term: 1 } };
}

/** The documents of `index` (a name or pattern) with these `_id`s, newest first. */
async function byIds(scope: SearchScope, index: string | undefined, ids: readonly string[]): Promise<StoredLogEntry[]> {
  const found: StoredLogEntry[] = [];
  for (let first = 0; first < ids.length; first += IDS_PER_SEARCH) {
    const values = ids.slice(first, first + IDS_PER_SEARCH);
    const search = dslSearch({ query: { ids: { values } }, index }, scope.now);
    const result = await withinLimits(
      scope.store.search({
        tenantId: scope.tenantId,
        condition: search.condition,
        from: 0,
        to: END_OF_TIME,
        page: 1,
        limit: Math.min(MAX_RESULT_WINDOW, values.length * 4),
        trackTotal: 1,
      }),
    );
    found.push(...result.entries);
  }
  // An entry stored without an `_id` (OTLP, the logs API) shows our id and the index `logs`: found by that id when the index names `logs`.
  const numbered = ids.filter((id) => ENTRY_ID.test(id));
  if (numbered.length > 0 && namesLogs(index)) {
    for (let first = 0; first < numbered.length; first += IDS_PER_SEARCH) {
      const values = numbered.slice(first, first + IDS_PER_SEARCH);
      const idField = { kind: 'attribute', name: '_id' } as const;
      const condition: Condition = {
        kind: 'and',
        children: [
          values.length === 1
            ? { kind: 'entryId', id: values[0]! }
            : { kind: 'or', children: values.map((id) => ({ kind: 'entryId', id })) },
          { kind: 'not', child: { kind: 'exists', field: idField } },
          { kind: 'not', child: { kind: 'exists', field: { kind: 'attribute', name: '_index' } } },
        ],
      };
      const result = await withinLimits(
        scope.store.search({ tenantId: scope.tenantId, condition, from: 0, to: END_OF_TIME, page: 1, limit: values.length, trackTotal: 1 }),
      );
      found.push(...result.entries);
    }
  }
  return found;
}

/** Whether an index name, pattern or comma list selects `logs`, the index of entries stored without one. */
function namesLogs(index: string | undefined): boolean {
  if (index === undefined) return true;
  return index.split(',').some((name) => {
    const trimmed = name.trim();
    if (trimmed === '*' || trimmed === '_all' || trimmed === 'logs') return true;
    return trimmed.endsWith('*') && trimmed.indexOf('*') === trimmed.length - 1 && 'logs'.startsWith(trimmed.slice(0, -1));
  });
}

/** `_source`, `_source_includes` and `_source_excludes` of `GET _doc` and `_mget`. */
function urlSourceFilter(params: Record<string, string>, fromBody?: unknown) {
  if (params._source_excludes !== undefined) throw unsupported('[_source_excludes]');
  if (fromBody !== undefined) return sourceFilterOf(fromBody);
  if (params._source_includes !== undefined) return sourceFilterOf(params._source_includes.split(','));
  if (params._source === undefined || params._source === 'true') return sourceFilterOf(undefined);
  if (params._source === 'false') return sourceFilterOf(false);
  return sourceFilterOf(params._source.split(','));
}

function foundDocument(entry: StoredLogEntry, keep: ReturnType<typeof sourceFilterOf>) {
  const { _score: _ignored, ...hit } = hitOf(entry, keep);
  return {
    _index: hit._index,
    _id: hit._id,
    _version: 1,
    _seq_no: 0,
    _primary_term: 1,
    found: true,
    ...(keep === false ? {} : { _source: hit._source }),
  };
}

const READ_PARAMS = ['refresh', 'realtime', 'routing', 'preference', 'stored_fields', '_source', '_source_includes', '_source_excludes'];

/** `GET /<index>/_doc/<id>` (and HEAD): 200 with the document, or 404 `found: false`. */
export async function getDocument(scope: SearchScope, request: FastifyRequest, index: string, id: string) {
  const params = knownParams(request, READ_PARAMS);
  checkRefresh(params.refresh);
  checkIndexName(index);
  checkId(id);
  const keep = urlSourceFilter(params);
  const entry = (await byIds(scope, index, [id])).find((candidate) => hitOf(candidate, null)._id === id);
  if (!entry) return { status: 404, body: { _index: index, _id: id, found: false } };
  return { status: 200, body: foundDocument(entry, keep) };
}

/** `_mget`: `{"docs": [{"_index", "_id", "_source"}]}` or `{"ids": [...]}` with the index in the path. */
export async function multiGet(scope: SearchScope, request: FastifyRequest, pathIndex: string | undefined, body: unknown) {
  const params = knownParams(request, READ_PARAMS);
  checkRefresh(params.refresh);
  if (!isPlainObject(body)) throw parsingError('the _mget body must be a JSON object with docs or ids');
  for (const key of Object.keys(body))
    if (key !== 'docs' && key !== 'ids') throw parsingError(`unknown key [${key.slice(0, 50)}] in the _mget body`);
  const asked: { index: string | undefined; id: string; source: unknown }[] = [];
  if (body.docs !== undefined) {
    if (!Array.isArray(body.docs)) throw parsingError('[docs] must be a list');
    for (const doc of body.docs) {
      if (!isPlainObject(doc) || typeof doc._id !== 'string') throw parsingError('each of [docs] needs an _id');
      if (doc._index !== undefined && typeof doc._index !== 'string') throw parsingError('[_index] must be a string');
      asked.push({ index: (doc._index as string | undefined) ?? pathIndex, id: doc._id, source: doc._source });
    }
  } else if (body.ids !== undefined) {
    if (!Array.isArray(body.ids) || !body.ids.every((id) => typeof id === 'string')) throw parsingError('[ids] must be a list of strings');
    asked.push(...(body.ids as string[]).map((id) => ({ index: pathIndex, id, source: undefined })));
  } else throw new ElasticError(400, 'action_request_validation_exception', 'Validation Failed: 1: no documents to get;');
  if (asked.length === 0) throw new ElasticError(400, 'action_request_validation_exception', 'Validation Failed: 1: no documents to get;');
  if (asked.length > MAX_RESULT_WINDOW)
    throw new ElasticError(400, 'illegal_argument_exception', `at most ${MAX_RESULT_WINDOW} documents per _mget`);
  for (const doc of asked) {
    if (doc.index === undefined)
      throw new ElasticError(400, 'action_request_validation_exception', 'Validation Failed: 1: index is missing;');
    checkIndexName(doc.index);
    checkId(doc.id);
  }
  const keepDefault = urlSourceFilter(params);
  const byIndex = new Map<string, string[]>();
  for (const doc of asked) byIndex.set(doc.index!, [...(byIndex.get(doc.index!) ?? []), doc.id]);
  const found = new Map<string, StoredLogEntry>();
  for (const [index, ids] of byIndex) {
    for (const entry of await byIds(scope, index, [...new Set(ids)])) {
      const key = JSON.stringify([index, hitOf(entry, null)._id]);
      if (!found.has(key)) found.set(key, entry);
    }
  }
  return {
    docs: asked.map((doc) => {
      const entry = found.get(JSON.stringify([doc.index, doc.id]));
      if (!entry) return { _index: doc.index, _id: doc.id, found: false };
      return foundDocument(entry, doc.source === undefined ? keepDefault : sourceFilterOf(doc.source));
    }),
  };
}

/** `_count`: every match, counted exactly. */
export async function countDocuments(scope: SearchScope, request: FastifyRequest, index: string | undefined, body: unknown) {
  const params = knownParams(request, [
    'q',
    'df',
    'default_operator',
    'analyze_wildcard',
    'lenient',
    'ignore_unavailable',
    'allow_no_indices',
    'expand_wildcards',
    'routing',
    'preference',
  ]);
  if (body !== undefined && !isPlainObject(body)) throw parsingError('the _count body must be a JSON object');
  for (const key of Object.keys(body ?? {})) if (key !== 'query') throw parsingError(`request does not support [${key.slice(0, 50)}]`);
  if (params.df !== undefined && params.df !== 'message' && params.df !== '*') throw unsupported(`[df] ${params.df.slice(0, 50)}`);
  if (params.default_operator !== undefined && params.default_operator.toUpperCase() !== 'AND') throw unsupported('[default_operator] OR');
  const search = dslSearch({ query: (body as { query?: unknown } | undefined)?.query, q: params.q, index }, scope.now);
  const result = await withinLimits(
    scope.store.search({
      tenantId: scope.tenantId,
      condition: search.condition,
      from: search.from ?? 0,
      to: search.to ?? END_OF_TIME,
      page: 1,
      limit: 0,
    }),
  );
  return { count: result.total, _shards: { ...SHARDS, skipped: 0 } };
}

/** Whether any document was written to `index` (a name, pattern or list): `GET /<index>` and `HEAD /<index>`. */
export async function indexHolds(scope: SearchScope, index: string): Promise<boolean> {
  const search = dslSearch({ query: undefined, index }, scope.now);
  const result = await withinLimits(
    scope.store.search({
      tenantId: scope.tenantId,
      condition: search.condition,
      from: 0,
      to: END_OF_TIME,
      page: 1,
      limit: 0,
      trackTotal: 1,
    }),
  );
  return result.total > 0;
}
