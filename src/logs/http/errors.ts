import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../../shared/errors/app-error.js';
import { ERRORS, type ErrorCode } from '../../shared/errors/catalogue.js';
import { QuerySyntaxError, TimeRangeError } from '../modules/query/errors.js';

/**
 * Spec 7.2: errors are `{"error": "<message>"}` with the exact messages. A 400 may add `detail`
 * (which field, which rule) and a query syntax error `position`: clients that only read `error`
 * see the spec's message.
 */
export const LogsErrorBody = Type.Object({
  error: Type.String(),
  detail: Type.Optional(Type.String()),
  position: Type.Optional(Type.Integer()),
  mfa: Type.Optional(
    Type.Object(
      {
        challenge: Type.Optional(Type.String({ description: 'Send it with a code to POST /api/login/mfa' })),
        methods: Type.Optional(Type.Array(Type.String())),
        enrolment_token: Type.Optional(Type.String({ description: 'Bearer credential for /api/mfa/totp/start and /confirm only' })),
        expires_in: Type.Integer({ description: 'Seconds' }),
      },
      { description: 'A login that needs a second factor (or its enrolment) says what to send next' },
    ),
  ),
});

/** What shared (gateway-named) codes from toAppError become in the logs service. */
const FROM_SHARED: Partial<Record<ErrorCode, ErrorCode>> = {
  INVALID_JSON: 'LOGS_INVALID_BODY',
  VALIDATION_FAILED: 'LOGS_INVALID_BODY',
  BODY_TOO_LARGE: 'LOGS_BODY_TOO_LARGE',
  UNSUPPORTED_MEDIA_TYPE: 'LOGS_UNSUPPORTED_MEDIA_TYPE',
  ROUTE_NOT_FOUND: 'LOGS_NOT_FOUND',
  METHOD_NOT_ALLOWED: 'LOGS_NOT_FOUND',
  MALFORMED_REQUEST: 'LOGS_MALFORMED_REQUEST',
  HEADERS_TOO_LARGE: 'LOGS_HEADERS_TOO_LARGE',
  REQUEST_TIMEOUT: 'LOGS_REQUEST_TIMEOUT',
  METRICS_TOKEN_INVALID: 'LOGS_INVALID_TOKEN',
};

export function renderLogsError(error: AppError, _request: FastifyRequest, reply: FastifyReply) {
  const body = logsErrorBody(error);
  if (body.error === ERRORS.LOGS_INTERNAL.en) reply.status(500);
  return body;
}

/** The spec 7.2 body of an error (a shared code without a LOGS_ counterpart is an internal error). */
export function logsErrorBody(error: AppError): { error: string; detail?: string; position?: number; mfa?: object } {
  const code: ErrorCode = error.code.startsWith('LOGS_') ? error.code : (FROM_SHARED[error.code] ?? 'LOGS_INTERNAL');
  const body: { error: string; detail?: string; position?: number; mfa?: object } = { error: ERRORS[code].en };
  const detail = error.options.data?.detail ?? (error.code === 'VALIDATION_FAILED' ? error.options.params?.detail : undefined);
  if (typeof detail === 'string') body.detail = detail.slice(0, 500);
  const position = error.options.data?.position;
  if (typeof position === 'number') body.position = position;
  const mfa = error.options.data?.mfa;
  if (typeof mfa === 'object' && mfa !== null && code.startsWith('LOGS_MFA_')) body.mfa = mfa;
  return body;
}

/** A 400 `invalid json body` that says what is wrong. */
export function invalidBody(detail: string, position?: number): AppError {
  return new AppError('LOGS_INVALID_BODY', { data: position === undefined ? { detail } : { detail, position } });
}

/**
 * The query module's errors as every route of our API answers them (the one translation, in the
 * service's error handler): a 400 `invalid json body` saying what is wrong, with where in the query.
 */
export function queryErrorOf(error: unknown): AppError | undefined {
  if (error instanceof QuerySyntaxError) return invalidBody(`query: ${error.message} at position ${error.position}`, error.position);
  if (error instanceof TimeRangeError) return invalidBody(error.message);
  return undefined;
}

// Route schemas, named by status codes: Fastify reads them as plain objects.
// eslint-disable-next-line gerbang/client-keys
export const errorResponses = (...statuses: number[]) => Object.fromEntries(statuses.map((status) => [status, LogsErrorBody]));
