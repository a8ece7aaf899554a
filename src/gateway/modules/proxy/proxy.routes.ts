import { SpanStatusCode } from '@opentelemetry/api';
import type { GatewayTelemetry } from '../telemetry/telemetry.js';
import { EventEmitter } from 'node:events';
import { Transform, pipeline, type Readable } from 'node:stream';
import type { Logger } from 'pino';
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { AppError } from '../../../shared/errors/app-error.js';
import { wrapToken } from '../auth/token-wrapping.js';
import { clientResponseHeaders, upstreamRequestHeaders } from './headers.js';
import { pathBelowBase } from './path-guard.js';
import type { ProxyMetrics } from './proxy.metrics.js';
import { SERVICES, type ProxyConfig, type ServiceDefinition } from './services.js';
import { classifyUpstreamError, UpstreamError, type Upstream } from './upstream.js';

/** Timing of one proxied request, for the access log and the metrics. */
interface ProxyTiming {
  service: string;
  start: number;
  upstreamMs: number | undefined;
  /** Logged already (a response that broke off can be reported twice). */
  done?: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    proxyTiming: ProxyTiming | null;
  }
}

export interface ProxyDeps {
  config: ProxyConfig;
  upstreams: ReadonlyMap<string, Upstream>;
  requireAuth: preHandlerAsyncHookHandler;
  metrics: ProxyMetrics;
  /** GATEWAY_TRUST_PROXY is set: the client's X-Forwarded-* come from our own proxy. */
  trustForwarding: boolean;
  /** Where the access line of each proxied request goes (undefined: not logged). */
  accessLog: Logger | undefined;
  /** Traces the upstream call (a client span with `peer.service`; `traceparent` goes upstream). */
  telemetry: Pick<GatewayTelemetry, 'startUpstreamCall'>;
}

/** OPTIONS is left to CORS preflight handling, which must not need a token. */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

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
function requestBody(request: FastifyRequest, limit: number): Readable | undefined {
  const length = request.headers['content-length'];
  if (length !== undefined) {
    if (length === '0') return undefined;
    // Node's parser has checked the value and will deliver exactly that many bytes.
    if (Number(length) > limit) throw new AppError('BODY_TOO_LARGE');
    return request.raw;
  }
  if (request.headers['transfer-encoding'] === undefined) return undefined;
  const limited = new BodyLimit(limit);
  // The upstream request errors (and is aborted) if the client's upload breaks off.
  pipeline(request.raw, limited, () => {});
  return limited;
}

function authorizationFor(request: FastifyRequest, format: ProxyConfig['authorization']): string {
  const auth = request.auth!;
  // A token that came in a cookie (SSO) is wrapped afresh.
  if (format === 'wrapped') return request.headers.authorization ?? wrapToken(auth.jwt);
  return `Bearer ${auth.jwt}`;
}

/** The eight services of spec 4.4 behind their base paths: token first, then stream both ways. */
export function proxyRoutes(deps: ProxyDeps) {
  return async function (app: FastifyInstance) {
    // Bodies are not parsed here: they stay in request.raw and stream upstream byte for byte.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', (_request, _payload, done) => done(null));
    app.decorateRequest('proxyTiming', null);

    app.addHook('onResponse', async (request, reply) => {
      const timing = request.proxyTiming;
      if (timing) finish(request, reply.statusCode, timing);
    });

    const finish = (request: FastifyRequest, status: number, timing: ProxyTiming, failure?: string) => {
      if (timing.done) return;
      timing.done = true;
      const totalMs = performance.now() - timing.start;
      deps.metrics.observe(timing.service, request.method, status, totalMs / 1000, timing.upstreamMs === undefined ? undefined : timing.upstreamMs / 1000);
      const url = request.raw.url ?? '';
      const q = url.indexOf('?');
      deps.accessLog?.info(
        {
          reqId: request.id,
          service: timing.service,
          method: request.method,
          path: q === -1 ? url : url.slice(0, q),
          query: q === -1 ? undefined : queryKeys(url.slice(q)),
          status,
          upstreamMs: timing.upstreamMs === undefined ? undefined : Math.round(timing.upstreamMs * 10) / 10,
          totalMs: Math.round(totalMs * 10) / 10,
          ...(failure ? { failure } : {}),
        },
        'proxied',
      );
    };

    for (const service of SERVICES) {
      const handler = proxyHandler(service, deps, finish);
      // Timing starts before the token check, so the total includes it.
      const onRequest = async (request: FastifyRequest) => {
        request.proxyTiming = { service: service.key, start: performance.now(), upstreamMs: undefined };
      };
      const route = {
        method: METHODS,
        handler,
        onRequest,
        preHandler: deps.requireAuth,
        exposeHeadRoute: false,
        // No passThroughHeaders: relayed answers bypass onSend (hijacked), so the security headers
        // land only on the gateway's own envelopes (401, 413, 502, 503, 504).
        schema: { hide: true },
      };
      app.route({ ...route, url: service.basePath });
      app.route({ ...route, url: `${service.basePath}/*` });
    }
  };
}

function proxyHandler(
  service: ServiceDefinition,
  deps: ProxyDeps,
  finish: (request: FastifyRequest, status: number, timing: ProxyTiming, failure?: string) => void,
) {
  const upstream = deps.upstreams.get(service.key);
  const params = { service: service.name };
  return async function (request: FastifyRequest, reply: FastifyReply) {
    if (!upstream) throw new AppError('SERVICE_NOT_CONFIGURED', { params });
    const timing = request.proxyTiming!;
    const url = request.raw.url ?? '/';
    const q = url.indexOf('?');
    const rest = pathBelowBase(q === -1 ? url : url.slice(0, q), service.basePath);
    if (rest === undefined) throw new AppError('PATH_INVALID');
    const search = q === -1 ? '' : url.slice(q);
    const body = requestBody(request, upstream.config.bodyLimit);
    request.proxiedService = service.key;
    const trace: Record<string, string> = {};
    const span = deps.telemetry.startUpstreamCall(request, service.key, trace);

    // A client that goes away ends the upstream call too. (undici takes an emitter of 'abort' as a
    // signal; an AbortController per request cost measurably more on the hot path.)
    const cancel = new EventEmitter() as EventEmitter & { aborted: boolean };
    cancel.aborted = false;
    const res = reply.raw;
    res.once('close', () => {
      if (res.writableFinished) return;
      cancel.aborted = true;
      cancel.emit('abort');
    });

    let answered = false;
    try {
      await upstream.relay(
        {
          method: request.method,
          path: (rest === '' && upstream.config.pathPrefix === '' ? '/' : rest) + search,
          headers: upstreamRequestHeaders(request.headers, {
            trace,
            authorization: authorizationFor(request, deps.config.authorization),
            requestId: request.id,
            userId: request.auth!.userId,
            forwardedFor: deps.trustForwarding && request.headers['x-forwarded-for'] ? `${request.headers['x-forwarded-for']}, ${request.socket.remoteAddress}` : (request.socket.remoteAddress ?? ''),
            forwardedProto: request.protocol,
            forwardedHost: request.host,
            trustForwarding: deps.trustForwarding,
          }),
          body,
          signal: cancel,
        },
        // From here the upstream's answer is relayed as is, outside Fastify's reply pipeline:
        // headers go out at once, and a body that breaks off closes the client's connection
        // (there is no way left to tell the client in-band).
        (status, upstreamHeaders) => {
          answered = true;
          timing.upstreamMs = performance.now() - timing.start;
          span?.setAttribute('http.response.status_code', status);
          if (status >= 500) span?.setStatus({ code: SpanStatusCode.ERROR });
          span?.end();
          reply.hijack();
          const headers = clientResponseHeaders(upstreamHeaders);
          if (!headers.some((name, i) => i % 2 === 0 && name.length === 12 && name.toLowerCase() === 'x-request-id')) headers.push('x-request-id', request.id);
          res.writeHead(status, headers);
          return res;
        },
      );
    } catch (error) {
      if (!answered) {
        span?.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof UpstreamError ? error.kind : 'error' });
        span?.end();
      }
      if (answered) {
        const upstreamFault = !cancel.aborted && classifyUpstreamError(error) !== 'other';
        if (upstreamFault) deps.metrics.upstreamError(service.key, 'aborted_body');
        res.destroy();
        finish(request, res.statusCode, timing, upstreamFault ? 'upstream body broke off' : 'client went away');
        return;
      }
      if (cancel.aborted) {
        // The client left before the answer: nobody to tell, and not the upstream's fault.
        reply.hijack();
        res.destroy();
        finish(request, 499, timing, 'client went away');
        return;
      }
      if (error instanceof AppError) throw error;
      // undici reports a failed request body as its own error; the limit is what broke it.
      if (body instanceof BodyLimit && body.exceeded) throw new AppError('BODY_TOO_LARGE');
      const kind = error instanceof UpstreamError ? error.kind : 'other';
      deps.metrics.upstreamError(service.key, kind);
      throw new AppError(kind === 'timeout' ? 'UPSTREAM_TIMEOUT' : 'UPSTREAM_UNREACHABLE', { params, cause: error });
    }
  };
}
