import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from './app-error.js';
import type { ErrorCode } from './catalogue.js';

/** Turns whatever was thrown (ours, Fastify's, a bug) into a catalogue error. */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  const fastifyError = error as Partial<FastifyError> & { validation?: unknown[] };
  if (fastifyError.validation) {
    const detail = `${fastifyError.validationContext ?? 'body'}${fastifyError.message?.replace(/^\w+/, '') ?? ''}`;
    return new AppError('VALIDATION_FAILED', { params: { detail } });
  }
  const status = fastifyError.statusCode;
  const byCode: Record<string, ErrorCode> = {
    FST_ERR_CTP_EMPTY_JSON_BODY: 'INVALID_JSON',
    FST_ERR_CTP_INVALID_JSON_BODY: 'INVALID_JSON',
    FST_ERR_CTP_BODY_TOO_LARGE: 'BODY_TOO_LARGE',
    FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
    FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'INVALID_JSON',
  };
  const code = fastifyError.code ? byCode[fastifyError.code] : undefined;
  if (code) return new AppError(code);
  if (status === 400 && error instanceof SyntaxError) return new AppError('INVALID_JSON');
  if (status === 413) return new AppError('BODY_TOO_LARGE');
  if (status === 415) return new AppError('UNSUPPORTED_MEDIA_TYPE');
  if (status === 404) return new AppError('ROUTE_NOT_FOUND');
  if (status === 405) return new AppError('METHOD_NOT_ALLOWED');
  if (status !== undefined && status >= 400 && status < 500) {
    return new AppError('VALIDATION_FAILED', { params: { detail: fastifyError.message ?? 'bad request' } });
  }
  return new AppError('INTERNAL', { cause: error });
}

export type ErrorRenderer = (error: AppError, request: FastifyRequest, reply: FastifyReply) => unknown;

/**
 * One error path for a service: log 5xx with their cause, render every error through `render`.
 * `toError` is the service's own reading of what was thrown (default toAppError).
 */
export function installErrorHandling(
  app: FastifyInstance,
  render: ErrorRenderer,
  notFound: ErrorCode,
  toError: (error: unknown) => AppError = toAppError,
): void {
  app.setErrorHandler((error, request, reply) => {
    const appError = toError(error);
    if (appError.status >= 500) request.log.error({ err: appError.options.cause ?? error }, 'request failed');
    for (const [name, value] of Object.entries(appError.options.headers ?? {})) reply.header(name, value);
    return reply.status(appError.status).send(render(appError, request, reply));
  });
  app.setNotFoundHandler((request, reply) => {
    const appError = new AppError(notFound);
    return reply.status(appError.status).send(render(appError, request, reply));
  });
}
