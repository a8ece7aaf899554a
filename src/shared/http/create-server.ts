import { createServer as createHttpServer, STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import Fastify, { type FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { loggerOptions } from './logger.js';
import { genReqId, registerRequestContext, SECURITY_HEADERS } from './request-context.js';
import { containsNul, validatorCompiler } from './validation.js';
import { AppError } from '../errors/app-error.js';
import type { InFlightRequests } from './drain.js';

export interface ServerOptions {
  logLevel: string;
  bodyLimit: number;
  /** Fastify's trustProxy: true, a hop count, or addresses/CIDRs. */
  trustProxy: boolean | number | string;
  logStream?: NodeJS.WritableStream | undefined;
  /** Longest time to receive a whole request (headers and body); default 120 s. */
  requestTimeoutMs?: number | undefined;
  /**
   * Takes requests before Fastify routes them (the gateway's proxy): returns true when it took the
   * request. Called per request, so what it delegates to may be set after the app is built.
   */
  front?: (req: IncomingMessage, res: ServerResponse) => boolean;
  /** The service's error body, for requests Node's parser refuses before any route runs. */
  renderClientError: (error: AppError) => unknown;
  /** Tracks the requests in flight, for the drain at shutdown (drain.ts). */
  inFlight?: InFlightRequests | undefined;
}

const KEEP_ALIVE_TIMEOUT_MS = 72_000;
const MAX_PARAM_LENGTH = 500;

/** A router refusal (bad percent-encoding, over-long path parameter) as a catalogue error. */
export function frameworkError(error: { code?: string }): AppError {
  const detail =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? `a path parameter is longer than ${MAX_PARAM_LENGTH} characters`
      : 'the URL is not validly percent-encoded';
  return new AppError('VALIDATION_FAILED', { params: { detail } });
}

/**
 * Node checks request timeouts only every `connectionsCheckingInterval` (30 s by default): a short
 * timeout would otherwise be enforced up to 30 s late. A quarter of the timeout, within 250 ms-30 s
 * (30 s with no request timeout: then only Node's 60 s headers timeout is checked).
 */
function timeoutChecks(requestTimeoutMs: number): { connectionsCheckingInterval: number } {
  return { connectionsCheckingInterval: requestTimeoutMs > 0 ? Math.min(30_000, Math.max(250, Math.floor(requestTimeoutMs / 4))) : 30_000 };
}

type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

/** Each request goes to `front` first, and to Fastify's handler when `front` did not take it. */
export function frontThenFastify(front: NonNullable<ServerOptions['front']>, fastifyHandler: RequestListener): RequestListener {
  return (req, res) => {
    if (!front(req, res)) fastifyHandler(req, res);
  };
}

/**
 * Node's request timeout stops counting once the headers are in (Node 20): a client that sends the
 * headers and then its body a byte at a time, or never, would hold its socket for ever (a slow-body
 * slowloris). The body gets the same timeout from the moment the headers arrived; past it the
 * connection is closed (a client stalled in the middle of its upload would not read a 408).
 * At the server, so the proxy's streamed uploads and Fastify's routes are bounded alike.
 */
export function armBodyDeadline(req: IncomingMessage, timeoutMs: number): void {
  if (timeoutMs <= 0 || req.complete) return;
  // No body to wait for (neither a length nor chunked framing, or a length of 0): Node's parser
  // completes such a request with its headers, so there is nothing to bound, and most requests
  // (GETs) need no timer.
  const length = req.headers['content-length'];
  if ((length === undefined || length === '0') && req.headers['transfer-encoding'] === undefined) return;
  const socket = req.socket;
  const timer = setTimeout(() => {
    if (!req.complete) socket.destroy();
  }, timeoutMs);
  timer.unref();
  const clear = () => clearTimeout(timer);
  req.once('end', clear);
  req.once('close', clear);
}

/** The raw server: Fastify's timeouts, every request's body bounded in time, `front` first where there is one. */
function rawServer(options: ServerOptions, fastifyHandler: RequestListener) {
  const timeoutMs = options.requestTimeoutMs ?? 120_000;
  const handle = options.front ? frontThenFastify(options.front, fastifyHandler) : fastifyHandler;
  const server = createHttpServer(timeoutChecks(timeoutMs), (req, res) => {
    armBodyDeadline(req, timeoutMs);
    handle(req, res);
  });
  server.requestTimeout = timeoutMs;
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  options.inFlight?.watch(server);
  return server;
}

/** Node's parser errors as the status a client can act on (431, 408, else 400). */
export function clientErrorOf(error: { code?: string }): AppError {
  if (error.code === 'HPE_HEADER_OVERFLOW') return new AppError('HEADERS_TOO_LARGE');
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return new AppError('REQUEST_TIMEOUT');
  return new AppError('MALFORMED_REQUEST');
}

/**
 * Answers a request Node's parser refused (bad framing, smuggling attempts, oversized headers, a
 * timeout) in the service's documented error shape, then closes the connection: after a framing
 * error nothing else on it can be trusted.
 */
function answerClientError(render: ServerOptions['renderClientError'], error: { code?: string }, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
  const appError = clientErrorOf(error);
  const body = JSON.stringify(render(appError));
  const headers = [
    `HTTP/1.1 ${appError.status} ${STATUS_CODES[appError.status]}`,
    'content-type: application/json; charset=utf-8',
    `content-length: ${Buffer.byteLength(body)}`,
    'cache-control: no-store',
    ...Object.entries(SECURITY_HEADERS).map(([name, value]) => `${name}: ${value}`),
    'connection: close',
  ];
  socket.end(`${headers.join('\r\n')}\r\n\r\n${body}`);
}

/** A Fastify instance with the settings both services share: logging, request ids, validation, headers. */
export function createServer(options: ServerOptions): FastifyInstance {
  const app = Fastify({
    logger: loggerOptions(options.logLevel, options.logStream),
    genReqId,
    bodyLimit: options.bodyLimit,
    trustProxy: options.trustProxy as boolean | string,
    // The raw server (rawServer) bounds how long a request may take, headers (408) and body alike,
    // so no client holds a socket for ever (slowloris); keep-alive idles close after 72 s.
    serverFactory: (fastifyHandler: RequestListener) => rawServer(options, fastifyHandler),
    clientErrorHandler: (error, socket) => answerClientError(options.renderClientError, error, socket),
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    // The router's own refusals (they come before any route, hook or error handler) are handed to
    // the service's error handler with the usual headers, so they come in its documented shape like
    // every other error (Fastify's default writes a JSON of its own).
    frameworkErrors: (error, request, reply) => {
      reply.header('x-request-id', request.id).header('cache-control', 'no-store').headers(SECURITY_HEADERS);
      return reply.server.errorHandler(frameworkError(error), request, reply);
    },
    ajv: { customOptions: { strict: false } },
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  registerRequestContext(app);
  // Refused up front so that no database ever sees a NUL byte (PostgreSQL would fail with a 500).
  app.addHook('preValidation', async (request) => {
    if (containsNul(request.body) || containsNul(request.query) || containsNul(request.params)) {
      throw new AppError('VALIDATION_FAILED', { params: { detail: 'text must not contain NUL characters' } });
    }
  });
  return app;
}
