import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { dict } from '../../../shared/dict.js';
import { Type } from 'typebox';
import type { LogStore } from '../store/log-store.js';
import { indexQuery } from '../query/elastic-dsl.js';
import { parsingError } from './elastic-errors.js';

/**
 * What shippers call when they start (Filebeat, Logstash, the OpenSearch client): index templates,
 * lifecycle policies and ingest pipelines are accepted and ignored, with a `Warning` header saying
 * so (fields are typed as they arrive; documents are stored as sent); `_xpack` and `_cat/indices`
 * answer so that they start without turning features off. docs/elasticsearch.md, "Start-up calls".
 */

export interface StartupDeps {
  writer: onRequestAsyncHookHandler;
  anyone: onRequestAsyncHookHandler;
  tags: string[];
  security: Record<string, string[]>[];
  store: LogStore;
  /** The body as JSON (undefined when empty); a parsing_exception when it is not JSON. */
  jsonBody: (request: FastifyRequest) => unknown;
}

/** Elasticsearch's deprecation-warning form, which the clients surface (`meta.warnings`, Python's warnings). */
export function ignoredWarning(what: string): string {
  return `299 Elasticsearch-8.11.0 "${what} accepted and ignored by Gerbang (docs/elasticsearch.md)"`;
}

const NameParams = Type.Object({ name: Type.String({ minLength: 1, maxLength: 512 }) });
/** Indices `_cat/indices` lists at most. */
const MAX_INDICES = 10_000;

export function startupRoutes(app: FastifyInstance, deps: StartupDeps): void {
  const { tags, security } = deps;
  const objectBody = (request: FastifyRequest) => {
    const body = deps.jsonBody(request);
    if (body !== undefined && (typeof body !== 'object' || body === null || Array.isArray(body)))
      throw parsingError('the body must be a JSON object');
  };
  const ignored = (what: string, answer: (name: string) => unknown) => async (request: FastifyRequest, reply: FastifyReply) => {
    objectBody(request);
    reply.header('warning', ignoredWarning(what));
    return answer((request.params as { name: string }).name);
  };
  const kinds = [
    {
      path: '/_index_template/:name',
      what: 'index templates',
      list: (name: string) => ({ index_templates: [{ name, index_template: { index_patterns: [] } }] }),
    },
    { path: '/_template/:name', what: 'legacy index templates', list: () => ({}) },
    {
      path: '/_component_template/:name',
      what: 'component templates',
      list: (name: string) => ({ component_templates: [{ name, component_template: { template: {} } }] }),
    },
    {
      path: '/_ilm/policy/:name',
      what: 'lifecycle policies',
      list: (name: string) => ({ [name]: { version: 1, policy: { phases: {} } } }),
    },
    {
      path: '/_ingest/pipeline/:name',
      what: 'ingest pipelines',
      list: (name: string) => ({ [name]: { description: 'accepted and ignored', processors: [] } }),
    },
  ];
  for (const { path, what, list } of kinds) {
    const write = {
      bodyLimit: 1024 * 1024,
      schema: { tags, summary: `Accepted and ignored (${what}), with a Warning header`, security, params: NameParams },
      onRequest: deps.writer,
    };
    app.put(
      path,
      write,
      ignored(what, () => ({ acknowledged: true })),
    );
    app.post(
      path,
      write,
      ignored(what, () => ({ acknowledged: true })),
    );
    // Answered as present, so a shipper that checks before installing does not install again at each start.
    app.get(
      path,
      {
        schema: { tags, summary: `Accepted and ignored (${what}): answered as present`, security, params: NameParams },
        onRequest: deps.anyone,
      },
      async (request, reply) => {
        reply.header('warning', ignoredWarning(what));
        return list((request.params as { name: string }).name);
      },
    );
  }

  app.get(
    '/_xpack',
    { schema: { tags, summary: 'Features and licence (Filebeat and Logstash ask before using ILM)', security }, onRequest: deps.anyone },
    () => ({
      build: { hash: 'gerbang', date: '2026-01-01T00:00:00.000Z' },
      license: { uid: 'gerbang', type: 'basic', mode: 'basic', status: 'active' },
      features: dict(
        ['ilm', 'security', 'monitoring', 'watcher', 'ml', 'graph', 'sql', 'rollup', 'slm', 'transform'].map((name): [string, unknown] => [
          name,
          { available: name === 'ilm' || name === 'security', enabled: name === 'ilm' || name === 'security' },
        ]),
      ),
      tagline: 'You know, for X',
    }),
  );

  const catIndices = async (request: FastifyRequest, reply: FastifyReply) => {
    const { index } = request.params as { index?: string };
    const { format } = request.query as { format?: string };
    const pattern = index === undefined ? null : indexQuery(index);
    const values = await deps.store.distinct({ tenantId: request.tenantId, field: '_index', limit: MAX_INDICES });
    const prefixes = pattern === null ? null : (index ?? '').split(',').map((name) => name.trim());
    const rows = values
      .filter(
        ({ value }) =>
          prefixes === null || prefixes.some((name) => (name.endsWith('*') ? value.startsWith(name.slice(0, -1)) : value === name)),
      )
      .sort((a, b) => (a.value < b.value ? -1 : a.value > b.value ? 1 : 0))
      .map(({ value, count }) => ({
        health: 'green',
        status: 'open',
        index: value,
        uuid: value,
        pri: '1',
        rep: '0',
        'docs.count': String(count),
        'docs.deleted': '0',
      }));
    if (format === 'json') return rows;
    const text = rows.map((row) => `${row.health} ${row.status} ${row.index} ${row.uuid} 1 0 ${row['docs.count']} 0\n`).join('');
    return reply.type('text/plain; charset=UTF-8').send(text);
  };
  app.get(
    '/_cat/indices',
    { schema: { tags, summary: 'The indices written to (distinct _index values) with their counts', security }, onRequest: deps.anyone },
    catIndices,
  );
  app.get(
    '/_cat/indices/:index',
    {
      schema: {
        tags,
        summary: 'The indices written to (distinct _index values) with their counts',
        security,
        params: Type.Object({ index: Type.String({ minLength: 1, maxLength: 1024 }) }),
      },
      onRequest: deps.anyone,
    },
    catIndices,
  );
}
