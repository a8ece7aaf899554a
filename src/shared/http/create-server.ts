import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import Fastify, { type FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { loggerOptions } from './logger.js';
import { genReqId, registerRequestContext, SECURITY_HEADERS } from './request-context.js';
import { containsNul, validatorCompiler } from './validation.js';
import { AppError } from '../errors/app-error.js';

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
}

const KEEP_ALIVE_TIMEOUT_MS = 72_000;
const MAX_PARAM_LENGTH = 500;

/** A router refusal (bad percent-encoding, over-long path parameter) as a catalogue error. */
export function frameworkError(error: { code?: string }): AppError {
  const detail = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? `a path parameter is longer than ${MAX_PARAM_LENGTH} characters` : 'the URL is not validly percent-encoded';
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

/** An HTTP server that offers each request to `front` first, with the timeouts Fastify would set. */
function frontedServer(options: ServerOptions, fastifyHandler: RequestListener) {
  const server = createHttpServer(timeoutChecks(options.requestTimeoutMs ?? 120_000), frontThenFastify(options.front!, fastifyHandler));
  server.requestTimeout = options.requestTimeoutMs ?? 120_000;
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  return server;
}

/** A Fastify instance with the settings both services share: logging, request ids, validation, headers. */
export function createServer(options: ServerOptions): FastifyInstance {
  const app = Fastify({
    logger: loggerOptions(options.logLevel, options.logStream),
    genReqId,
    bodyLimit: options.bodyLimit,
    trustProxy: options.trustProxy as boolean | string,
    // Clients get 408 rather than holding a socket forever (slowloris); it also bounds how long one
    // upload may take. Keep-alive idles close after 72 s.
    requestTimeout: options.requestTimeoutMs ?? 120_000,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    http: timeoutChecks(options.requestTimeoutMs ?? 120_000),
    ...(options.front ? { serverFactory: (fastifyHandler: RequestListener) => frontedServer(options, fastifyHandler) } : {}),
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
  registerRequestContext(app as unknown as FastifyInstance);
  // Refused up front so that no database ever sees a NUL byte (PostgreSQL would fail with a 500).
  app.addHook('preValidation', async (request) => {
    if (containsNul(request.body) || containsNul(request.query) || containsNul(request.params)) {
      throw new AppError('VALIDATION_FAILED', { params: { detail: 'text must not contain NUL characters' } });
    }
  });
  return app as unknown as FastifyInstance;
}
