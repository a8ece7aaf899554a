import { SECURED } from '../auth/auth.schemas.js';
import type { ServiceDefinition, ServiceOperation } from '../proxy/services.js';
import { dict, type Dict } from '../../../shared/dict.js';

/** A loose OpenAPI 3 document: we only touch paths, components, tags and $refs. */
export type OpenApiDocument = Record<string, unknown> & {
  paths?: Dict<Dict<unknown>>;
  components?: Dict<Dict<unknown>>;
  tags?: { name: string; description?: string }[];
};

export interface UnavailableService {
  service: string;
  name: string;
  reason: 'not configured' | 'unreachable' | 'no description' | 'invalid description';
}

/** What one service contributes to the merged document. */
/** Paths and component names come from the services' own documents: dictionaries, never plain objects. */
export interface ServicePart {
  paths: Dict<Dict<unknown>>;
  components: Dict<Dict<unknown>>;
}

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

/** `Master Data` -> `MasterData`: the prefix of the service's component names. */
export function schemaPrefix(service: ServiceDefinition): string {
  return service.name.replace(/[^A-Za-z0-9]/g, '');
}

/** Rewrites every local `#/components/<type>/<name>` reference to the namespaced name, in place. */
function rewriteRefs(node: unknown, prefix: string): void {
  if (Array.isArray(node)) {
    for (const item of node) rewriteRefs(item, prefix);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const record = node as Record<string, unknown>;
  for (const [key, value] of Object.entries(record)) {
    if (key === '$ref' && typeof value === 'string') {
      const match = /^#\/components\/([^/]+)\/(.+)$/.exec(value);
      if (match) record[key] = `#/components/${match[1]}/${prefix}_${match[2]}`;
    } else {
      rewriteRefs(value, prefix);
    }
  }
}

/** The path of the upstream document's first server, less the upstream address's own prefix. */
function serverPathBelowPrefix(document: OpenApiDocument, pathPrefix: string): string {
  const servers = document.servers as { url?: unknown }[] | undefined;
  const url = servers?.[0]?.url;
  if (typeof url !== 'string') return '';
  let path: string;
  try {
    path = new URL(url.replace(/\{[^}]*\}/g, 'x'), 'http://upstream.invalid').pathname;
  } catch {
    return '';
  }
  path = path.replace(/\/+$/, '');
  return path.startsWith(pathPrefix) ? path.slice(pathPrefix.length) : path;
}

/**
 * A service's own OpenAPI 3 description, moved under its gateway base path: component names get
 * the service prefix (`MasterData_Provinsi`) and every $ref follows; operations get the service
 * tag when untagged, a prefixed operationId, and the gateway token as their security (the gateway,
 * not the client, authenticates to the service).
 */
export function namespaceDocument(document: OpenApiDocument, service: ServiceDefinition, upstreamPrefix: string): ServicePart {
  const copy = structuredClone(document);
  const prefix = schemaPrefix(service);
  rewriteRefs(copy.paths, prefix);
  rewriteRefs(copy.components, prefix);
  const below = serverPathBelowPrefix(copy, upstreamPrefix);
  const paths: ServicePart['paths'] = dict();
  for (const [path, item] of Object.entries(copy.paths ?? {})) {
    if (!item || typeof item !== 'object') continue;
    delete item.servers;
    for (const [method, operation] of Object.entries(item)) {
      if (!HTTP_METHODS.has(method) || !operation || typeof operation !== 'object') continue;
      const op = operation as Record<string, unknown>;
      if (!Array.isArray(op.tags) || op.tags.length === 0) op.tags = [service.name];
      if (typeof op.operationId === 'string') op.operationId = `${prefix}_${op.operationId}`;
      op.security = SECURED;
      delete op.servers;
    }
    paths[`${service.basePath}${below}${path.startsWith('/') ? path : `/${path}`}`] = dict(item);
  }
  const components: ServicePart['components'] = dict();
  for (const [type, entries] of Object.entries(copy.components ?? {})) {
    // The service's own auth schemes do not apply through the gateway.
    if (type === 'securitySchemes' || !entries || typeof entries !== 'object') continue;
    components[type] = dict(Object.entries(entries).map(([name, value]): [string, unknown] => [`${prefix}_${name}`, value]));
  }
  return { paths, components };
}

function fallbackOperation(service: ServiceDefinition, operation: ServiceOperation): Record<string, unknown> {
  const pathParams = [...operation.path.matchAll(/:(\w+)/g)].map((match) => ({
    name: match[1],
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
  const queryParams = Object.entries(operation.query ?? {}).map(([name, type]) => ({
    name,
    in: 'query',
    required: false,
    schema: { type },
  }));
  const result: Record<string, unknown> = {
    tags: [service.name],
    summary: operation.summary,
    operationId: `${schemaPrefix(service)}_${operation.method.toLowerCase()}${operation.path.replace(/[^A-Za-z0-9]+/g, '_').replace(/_$/, '')}`,
    description: "Listed from the gateway's table (spec 4.4): the service published no description. Payloads are the service's own.",
    security: SECURED,
    responses: { default: { description: "The service's response, relayed unchanged" } },
  };
  const parameters = [...pathParams, ...queryParams];
  if (parameters.length > 0) result.parameters = parameters;
  if (operation.body) {
    const properties = dict(
      Object.entries(operation.body.fields).map(([name, type]): [string, object] => [
        name,
        type === 'binary'
          ? { type: 'string', format: 'binary' }
          : type === 'date'
            ? { type: 'string', format: 'date' }
            : { type: 'string' },
      ]),
    );
    const mediaType = operation.body.type === 'multipart' ? 'multipart/form-data' : 'application/json';
    result.requestBody = { required: true, content: { [mediaType]: { schema: { type: 'object', properties } } } };
  }
  return result;
}

/** The spec 4.4 operations of a service, for when its own description cannot be had. */
export function fallbackPart(service: ServiceDefinition): ServicePart {
  const paths: ServicePart['paths'] = dict();
  for (const operation of service.operations) {
    const path = `${service.basePath}${operation.path.replace(/:(\w+)/g, '{$1}')}`;
    (paths[path] ??= dict())[operation.method.toLowerCase()] = fallbackOperation(service, operation);
  }
  return { paths, components: dict() };
}

/** The gateway's own document plus every service part; the list of unavailable services as `x-unavailable-services`. */
export function mergeDocuments(
  own: OpenApiDocument,
  parts: { service: ServiceDefinition; part: ServicePart; available: boolean }[],
  unavailable: UnavailableService[],
): OpenApiDocument {
  const merged = structuredClone(own);
  merged.paths = dict(merged.paths ?? []);
  merged.components = dict(merged.components ?? []);
  merged.tags = [...(merged.tags ?? [])];
  for (const { service, part, available } of parts) {
    for (const [path, item] of Object.entries(part.paths)) merged.paths[path] = Object.assign(dict(), merged.paths[path], item);
    for (const [type, entries] of Object.entries(part.components))
      merged.components[type] = Object.assign(dict(), merged.components[type], entries);
    merged.tags.push({
      name: service.name,
      description: `Proxied to the ${service.name} service under ${service.basePath}/${available ? '' : " (operations from the gateway's table: the service's own description is unavailable)"}`,
    });
  }
  merged['x-unavailable-services'] = unavailable;
  return merged;
}
