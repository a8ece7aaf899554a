import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Transform, pipeline, type Readable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { AppError } from '../../../shared/errors/app-error.js';
import { gatewayErrorOf } from '../../http/storage-errors.js';
import { genReqId, SECURITY_HEADERS } from '../../../shared/http/request-context.js';
import { renderErrorEnvelope } from '../../http/envelope.js';
import type { TokenRequest } from '../auth/authenticate.js';
import { wrapToken } from '../auth/token-wrapping.js';
import type { AuthContext } from '../auth/tokens.js';
import type { GatewayTelemetry, RequestFacts, TelemetrySpan } from '../telemetry/telemetry.js';
import { ClientFacts, trustRule, type TrustRule } from './client-facts.js';
import { clientResponseHeaders, upstreamRequestHeaders, withoutBodyFraming } from './headers.js';
import { pathBelowBase } from './path-guard.js';
import type { AccessLine } from './access-line.js';
import type { ProxyMetrics, ServiceMetrics } from './proxy.metrics.js';
import type { ProxyConfig } from './proxy-config.js';
import { serviceOf, type ServiceDefinition } from './services.js';
import { classifyUpstreamError, UpstreamError, type Upstream } from './upstream.js';
import { dict } from '../../../shared/dict.js';

export interface ProxyDeps {
  config: ProxyConfig;
  upstreams: ReadonlyMap<string, Upstream>;
  /** The gateway's token check (Authorization header, else the SSO cookie): 401/403 as AppError. */
  authenticate: (request: TokenRequest) => Promise<AuthContext>;
  /** The same check when the caches answer at once (undefined: ask `authenticate`). */
  authenticateCached?: ((request: TokenRequest) => AuthContext | undefined) | undefined;
  metrics: ProxyMetrics;
  /** GATEWAY_TRUST_PROXY: whose X-Forwarded-* count. */
  trustProxy: boolean | number | string;
  /** GATEWAY_CORS_ORIGINS: browsers on these origins may read the answers. */
  corsOrigins: readonly string[];
  /** Writes the access line of each proxied request (undefined: not logged). */
  accessLog: AccessLine | undefined;
  /** Where failures (5xx) are logged with their cause. */
  log: FastifyBaseLogger;
  /** Traces the request and the upstream call (`traceparent` goes upstream) and ships the access line. */
  telemetry: GatewayTelemetry;
  /** True once the gateway is shutting down. */
  closing: () => boolean;
}

/** Takes a request when it is for a proxied service (true), or leaves it to Fastify (false). */
export type ProxyHandler = (req: IncomingMessage, res: ServerResponse) => boolean;

/** OPTIONS is left to Fastify's CORS preflight handling, which must not need a token. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']);

/** `?a=1&b=2` -> `a,b`: the access log shows which parameters came, never their values. */
function queryKeys(search: string): string | undefined {
  if (search.length <= 1) return undefined;
  return search
    .slice(1)
    .split('&')
    .map((pair) => pair.split('=', 1)[0])
    .filter(Boolean)
    .join(',');
}

/** Errors a streamed upload once it passes the service's limit (a chunked body has no length up front). */
class BodyLimit extends Transform {
  private seen = 0;
  exceeded = false;

  constructor(private readonly limit: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null, data?: Buffer) => void): void {
    this.seen += chunk.length;
    if (this.seen > this.limit) {
      this.exceeded = true;
      callback(new AppError('BODY_TOO_LARGE'));
    } else callback(null, chunk);
  }
}

/** The request body as a stream, or undefined when there is none; 413 when the length is over the limit. */
function requestBody(req: IncomingMessage, limit: number): Readable | undefined {
  const length = req.headers['content-length'];
  if (length !== undefined) {
    if (length === '0') return undefined;
    // Node's parser has checked the value and will deliver exactly that many bytes.
    if (Number(length) > limit) throw new AppError('BODY_TOO_LARGE');
    return req;
  }
  if (req.headers['transfer-encoding'] === undefined) return undefined;
  const limited = new BodyLimit(limit);
  // The upstream request errors (and is aborted) if the client's upload breaks off.
  pipeline(req, limited, () => {});
  return limited;
}

/**
 * A request body that came whole with its headers (a small JSON body usually does), as one buffer;
 * else the request itself, streamed as it arrives. Node's parser delivers the rest of the bytes it
 * read with the headers only after the request's handler returns, so this waits one microtask to
 * see them. Nothing waits for bytes still to come: a body that is not all here is streamed exactly
 * as before. A buffer goes upstream with its headers in one write, without undici's stream
 * machinery (listeners, pauses, a write per chunk).
 */
async function wholeIfArrived(req: IncomingMessage): Promise<Readable | Buffer> {
  await Promise.resolve();
  const length = req.readableLength;
  if (!req.complete || length === 0 || length !== Number(req.headers['content-length'])) return req;
  return (req.read(length) as Buffer | null) ?? req;
}

/** One proxied request from arrival to the access log line; it is also what the token check reads. */
class Exchange extends ClientFacts {
  readonly start = performance.now();
  readonly requestId: string;
  auth: AuthContext | undefined = undefined;
  span: TelemetrySpan | undefined = undefined;
  upstreamMs: number | undefined = undefined;
  /** Why the response did not complete normally, for the access log. */
  failure: string | undefined = undefined;
  /**
   * Emits 'abort' when the client went away before the response was complete (undici's signal
   * shape). An emitter rather than a callback field on the exchange: with the field, V8 promoted
   * per-request objects to the old generation (docs/performance-notes.md, "Gateway").
   */
  readonly cancel = Object.assign(new EventEmitter(), { aborted: false });

  constructor(
    readonly service: ServiceDefinition,
    req: IncomingMessage,
    readonly res: ServerResponse,
    trust: TrustRule,
  ) {
    super(req, trust);
    this.requestId = genReqId(req);
  }

  private requestFacts: RequestFacts | undefined = undefined;

  /** For telemetry (made once: its span starts and ends with it). */
  get facts(): RequestFacts {
    return (this.requestFacts ??= { method: this.method, url: this.raw.url!, route: routeOf(this.service), headers: this.headers });
  }
}

/** A service's route pattern, as telemetry records it (one string per service, not one per request). */
const routes = new Map<ServiceDefinition, string>();
const routeOf = (service: ServiceDefinition): string => {
  let route = routes.get(service);
  if (route === undefined) routes.set(service, (route = `${service.basePath}/*`));
  return route;
};

/**
 * The reverse proxy of the eight services (spec 4.4). It takes its requests before Fastify routes
 * them: relaying is the gateway's hot path, and Fastify's per-request lifecycle (hooks, reply
 * object, child logger) is too heavy for it (docs/performance-notes.md, "Gateway"). Everything
 * a proxied request goes through is in this file, in order: request id, token, service
 * configured, path guard, body limit, relay, access log, metrics and trace. Answers the gateway
 * makes itself (401, 413, 502, ...) are the same envelopes with the same headers as Fastify's.
 */
export function createProxyHandler(deps: ProxyDeps): ProxyHandler {
  const trust = trustRule(deps.trustProxy);
  const trustForwarding = deps.trustProxy !== false && deps.trustProxy !== 0;
  const corsOrigins = new Set(deps.corsOrigins);
  const accessLine = deps.accessLog;
  const authenticateCached = deps.authenticateCached ?? (() => undefined);
  /** Each service's metrics, bound once. */
  const serviceMetrics = new Map<ServiceDefinition, ServiceMetrics>();
  const metricsOf = (service: ServiceDefinition): ServiceMetrics => {
    let bound = serviceMetrics.get(service);
    if (bound === undefined) serviceMetrics.set(service, (bound = deps.metrics.forService(service.key)));
    return bound;
  };

  /** CORS fields (lower-case names) for a browser on an allowed origin, as @fastify/cors sends them on Fastify's routes. */
  const corsHeaders = (req: IncomingMessage): string[] => {
    const origin = req.headers.origin;
    if (corsOrigins.size === 0) return [];
    if (origin === undefined || !corsOrigins.has(origin)) return ['vary', 'Origin'];
    return ['access-control-allow-origin', origin, 'access-control-allow-credentials', 'true', 'vary', 'Origin'];
  };

  /**
   * Called just before an answer goes out. Shutting down: answer, then close the connection, so
   * keep-alive clients go elsewhere instead of holding the shutdown open (as nginx does; Fastify's
   * own routes answer 503).
   */
  const beforeAnswer = (res: ServerResponse) => {
    if (deps.closing()) res.shouldKeepAlive = false;
  };

  const finish = (exchange: Exchange) => {
    const { raw: req, res, service } = exchange;
    const end = performance.now();
    const totalMs = end - exchange.start;
    // A response that never completed was cut short: by the client (499), or after a broken upstream body.
    const status = res.writableFinished || res.headersSent ? res.statusCode : 499;
    const failure = res.writableFinished ? undefined : (exchange.failure ?? 'client went away');
    metricsOf(service).observe(
      req.method!,
      status,
      totalMs / 1000,
      exchange.upstreamMs === undefined ? undefined : exchange.upstreamMs / 1000,
    );
    if (accessLine !== undefined) {
      const url = req.url!;
      const q = url.indexOf('?');
      accessLine({
        reqId: exchange.requestId,
        service: service.key,
        method: req.method!,
        path: q === -1 ? url : url.slice(0, q),
        query: q === -1 ? undefined : queryKeys(url.slice(q)),
        status,
        upstreamMs: exchange.upstreamMs === undefined ? undefined : Math.round(exchange.upstreamMs * 10) / 10,
        totalMs: Math.round(totalMs * 10) / 10,
        failure,
      });
    }
    if (deps.telemetry.enabled) {
      deps.telemetry.endRequest(exchange.span, exchange.facts, {
        status,
        durationMs: totalMs,
        requestId: exchange.requestId,
        clientAddress: exchange.ip,
        userId: exchange.auth?.userId,
        service: service.key,
        endAt: end,
      });
    }
  };

  /** The gateway's own answer, in the envelope, with the headers Fastify's error handler gives it. */
  const sendError = (exchange: Exchange, error: AppError) => {
    const { res } = exchange;
    if (error.status >= 500) deps.log.error({ reqId: exchange.requestId, err: error.options.cause ?? error }, 'request failed');
    if (res.headersSent || res.destroyed) return void res.destroy();
    const body = JSON.stringify(renderErrorEnvelope(error, exchange));
    beforeAnswer(res);
    res.writeHead(error.status, [
      'content-type',
      'application/json; charset=utf-8',
      'content-length',
      String(Buffer.byteLength(body)),
      'x-request-id',
      exchange.requestId,
      'cache-control',
      'no-store',
      ...Object.entries(SECURITY_HEADERS).flat(),
      ...Object.entries(error.options.headers ?? {}).flat(),
      ...corsHeaders(exchange.raw),
    ]);
    res.end(body);
  };

  /** The upstream call failed before its answer was complete: tell the client, or close its connection. */
  const failed = (exchange: Exchange, error: unknown, body: Readable | Buffer | undefined) => {
    const { res, service } = exchange;
    if (exchange.cancel.aborted) {
      // The client left: nobody to tell, and not the upstream's fault.
      res.destroy();
      return;
    }
    if (res.headersSent) {
      // The upstream's body broke off after its headers went out.
      if (classifyUpstreamError(error) !== 'other') deps.metrics.upstreamError(service.key, 'aborted_body');
      exchange.failure = 'upstream body broke off';
      res.destroy();
      return;
    }
    // undici reports a failed request body as its own error; the limit is what broke it.
    if (body instanceof BodyLimit && body.exceeded) return sendError(exchange, new AppError('BODY_TOO_LARGE'));
    if (error instanceof UpstreamError) {
      deps.metrics.upstreamError(service.key, error.kind);
      const code = error.kind === 'timeout' ? 'UPSTREAM_TIMEOUT' : 'UPSTREAM_UNREACHABLE';
      return sendError(exchange, new AppError(code, { params: { service: service.name }, cause: error }));
    }
    sendError(exchange, gatewayErrorOf(error));
  };

  const proxy = async (exchange: Exchange) => {
    const { raw: req, res, service } = exchange;
    let auth: AuthContext;
    let upstream: Upstream | undefined;
    let rest: string | undefined;
    let body: Readable | Buffer | undefined;
    const url = req.url!;
    const q = url.indexOf('?');
    try {
      // Answered from the caches when they can (no wait); else the full check.
      auth = exchange.auth = authenticateCached(exchange) ?? (await deps.authenticate(exchange));
      upstream = deps.upstreams.get(service.key);
      if (!upstream) throw new AppError('SERVICE_NOT_CONFIGURED', { params: { service: service.name } });
      rest = pathBelowBase(q === -1 ? url : url.slice(0, q), service.basePath);
      if (rest === undefined) throw new AppError('PATH_INVALID');
      body = requestBody(req, upstream.config.bodyLimit);
    } catch (error) {
      return sendError(exchange, gatewayErrorOf(error));
    }
    if (body === req) body = await wholeIfArrived(req);
    const trace = dict<string>();
    const span = deps.telemetry.enabled ? deps.telemetry.startUpstreamCall(exchange.span, req.method!, service.key, trace) : undefined;
    const xff = req.headers['x-forwarded-for'];
    const peer = exchange.peerAddress;
    try {
      await upstream.relay(
        {
          method: req.method!,
          path: (rest === '' && upstream.config.pathPrefix === '' ? '/' : rest) + (q === -1 ? '' : url.slice(q)),
          headers: upstreamRequestHeaders(req.headers, {
            trace,
            // A token that came in a cookie (SSO) is wrapped afresh.
            authorization:
              deps.config.authorization === 'wrapped' ? (req.headers.authorization ?? wrapToken(auth.jwt)) : `Bearer ${auth.jwt}`,
            requestId: exchange.requestId,
            userId: auth.userId,
            forwardedFor: trustForwarding && xff ? `${Array.isArray(xff) ? xff.join(', ') : xff}, ${peer}` : peer,
            forwardedProto: exchange.protocol,
            forwardedHost: exchange.host,
            trustForwarding,
          }),
          body,
          signal: exchange.cancel,
        },
        // From here the upstream's answer is relayed as is: headers go out at once, and a body that
        // breaks off closes the client's connection (there is no way left to tell the client in-band).
        (status, upstreamHeaders) => {
          const now = performance.now();
          exchange.upstreamMs = now - exchange.start;
          span?.end(status, undefined, now);
          beforeAnswer(res);
          // The request id and CORS fields, unless the upstream set its own.
          const headers = clientResponseHeaders(
            upstreamHeaders,
            corsOrigins.size === 0 ? ['x-request-id', exchange.requestId] : ['x-request-id', exchange.requestId, ...corsHeaders(req)],
          );
          res.writeHead(status, status === 204 ? withoutBodyFraming(headers) : headers);
          return res;
        },
      );
    } catch (error) {
      if (span && exchange.upstreamMs === undefined) span.end(0, error instanceof UpstreamError ? error.kind : 'error');
      failed(exchange, error, body);
    }
  };

  return (req, res) => {
    const service = serviceOf(req.url ?? '');
    if (service === undefined || !METHODS.has(req.method ?? '')) return false;
    const exchange = new Exchange(service, req, res, trust);
    // 'close' comes once, after the response is complete or when the connection went first.
    res.on('close', () => {
      if (!res.writableFinished && exchange.failure === undefined) {
        exchange.cancel.aborted = true;
        exchange.cancel.emit('abort');
      }
      finish(exchange);
    });
    if (deps.telemetry.enabled) exchange.span = deps.telemetry.startRequest(exchange.facts, exchange.start);
    proxy(exchange).catch((error: unknown) => {
      // A bug, not a request's fault: logged, and the client's connection closed rather than left hanging.
      deps.log.error({ reqId: exchange.requestId, err: error }, 'proxy failed');
      res.destroy();
    });
    return true;
  };
}
