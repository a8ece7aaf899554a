import { convertObj } from 'swagger2openapi';
import { SERVICES, type ServiceDefinition } from '../proxy/services.js';
import type { Upstream } from '../proxy/upstream.js';
import {
  fallbackPart,
  mergeDocuments,
  namespaceDocument,
  type OpenApiDocument,
  type ServicePart,
  type UnavailableService,
} from './docs-merger.js';

type Fetched = { ok: true; part: ServicePart } | { ok: false; reason: UnavailableService['reason'] };

/** Longest wait for one service's description: the docs page must not hang on a slow service. */
const FETCH_TIMEOUT_MS = 5_000;
/** A failed fetch is tried again sooner than the refresh interval, so a service that comes back shows up. */
const RETRY_FAILED_MS = 30_000;

/** Turns what a service published into an OpenAPI 3 document, or says why it cannot. */
export async function toOpenApi3(json: unknown): Promise<OpenApiDocument | undefined> {
  if (!json || typeof json !== 'object' || Array.isArray(json)) return undefined;
  const document = json as Record<string, unknown>;
  if (document.swagger === '2.0') {
    const { openapi } = await convertObj(document, { patch: true, warnOnly: true, resolve: false });
    return openapi;
  }
  if (typeof document.openapi === 'string' && document.openapi.startsWith('3.')) return document;
  return undefined;
}

/**
 * The merged description of /api/v1/docs.json: the gateway's own operations plus each service's,
 * fetched from the service (GATEWAY_DOCS_UPSTREAM_PATH or SERVER_SERVICE_*_DOCS_PATH) and cached
 * for GATEWAY_DOCS_REFRESH; a service without a usable description falls back to spec 4.4's list.
 */
export class DocsService {
  private readonly cache = new Map<string, { at: number; ttl: number; result: Promise<Fetched> }>();
  /** The latest merged document, for callers that cannot wait (the Swagger UI plugin's own /json). */
  last: OpenApiDocument | undefined;

  constructor(
    private readonly upstreams: ReadonlyMap<string, Upstream>,
    private readonly refreshMs: number,
    private readonly now: () => number,
  ) {}

  async merged(own: OpenApiDocument): Promise<OpenApiDocument> {
    const unavailable: UnavailableService[] = [];
    const parts = await Promise.all(
      SERVICES.map(async (service) => {
        const fetched = this.upstreams.has(service.key) ? await this.fetched(service) : ({ ok: false, reason: 'not configured' } as const);
        if (fetched.ok) return { service, part: fetched.part, available: true };
        unavailable.push({ service: service.key, name: service.name, reason: fetched.reason });
        return { service, part: fallbackPart(service), available: false };
      }),
    );
    unavailable.sort((a, b) => SERVICES.findIndex((s) => s.key === a.service) - SERVICES.findIndex((s) => s.key === b.service));
    this.last = mergeDocuments(own, parts, unavailable);
    return this.last;
  }

  private fetched(service: ServiceDefinition): Promise<Fetched> {
    const now = this.now();
    const cached = this.cache.get(service.key);
    if (cached && now - cached.at < cached.ttl) return cached.result;
    const entry = { at: now, ttl: this.refreshMs, result: this.fetch(service) };
    void entry.result.then((fetched) => {
      if (!fetched.ok) entry.ttl = Math.min(this.refreshMs, RETRY_FAILED_MS);
    });
    this.cache.set(service.key, entry);
    return entry.result;
  }

  private async fetch(service: ServiceDefinition): Promise<Fetched> {
    const upstream = this.upstreams.get(service.key)!;
    let json: unknown;
    try {
      const response = await upstream.fetchJson(upstream.config.docsPath, Math.min(upstream.config.timeoutMs, FETCH_TIMEOUT_MS));
      if (response.status === 413) return { ok: false, reason: 'invalid description' };
      if (response.status !== 200) return { ok: false, reason: 'no description' };
      json = response.json;
    } catch (error) {
      return { ok: false, reason: error instanceof SyntaxError ? 'invalid description' : 'unreachable' };
    }
    try {
      const document = await toOpenApi3(json);
      if (!document) return { ok: false, reason: 'invalid description' };
      return { ok: true, part: namespaceDocument(document, service, upstream.config.pathPrefix) };
    } catch {
      return { ok: false, reason: 'invalid description' };
    }
  }
}
