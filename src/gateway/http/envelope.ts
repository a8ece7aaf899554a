import type { IncomingHttpHeaders } from 'node:http';
import { Type, type TSchema } from 'typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ERRORS } from '../../shared/errors/catalogue.js';
import type { AppError } from '../../shared/errors/app-error.js';
import { localize, pickLanguage, type Language, type Localized } from '../../shared/i18n/language.js';

/** Spec 2.1 pagination info. */
export const PaginationInfo = Type.Object({
  total: Type.Integer(),
  per_page: Type.Integer(),
  page: Type.Integer(),
  pages: Type.Integer(),
  count: Type.Integer(),
});

/** Response schema of the spec 2.1 envelope, with or without data. */
export function Envelope<T extends TSchema>(data?: T, withInfo = false): TSchema {
  return Type.Object({
    code: Type.Integer(),
    status: Type.Boolean(),
    message: Type.String(),
    ...(data ? { data } : {}),
    ...(withInfo ? { info: PaginationInfo } : {}),
  });
}

export const ErrorEnvelope = Type.Object({
  code: Type.Integer(),
  status: Type.Literal(false),
  message: Type.String(),
  data: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});

/** Anything with the request's headers: a FastifyRequest, or the proxy's raw request. */
type WithHeaders = { readonly headers: IncomingHttpHeaders };

export function languageOf(request: WithHeaders): Language {
  return pickLanguage(request.headers['accept-language']);
}

/**
 * A success body; `code` mirrors the status the reply is sent with. Typed loosely: the route's
 * response schema is what shapes (and filters) the body on the wire.
 */

export function success<D, I>(request: FastifyRequest, reply: FastifyReply, status: number, message: Localized, data?: D, info?: I): any {
  reply.status(status);
  return {
    code: status,
    status: true as const,
    message: localize(message, languageOf(request)),
    ...(data === undefined ? {} : { data }),
    ...(info === undefined ? {} : { info }),
  };
}

export function renderErrorEnvelope(error: AppError, request: WithHeaders) {
  return {
    code: error.status,
    status: false,
    message: localize(ERRORS[error.code], languageOf(request), error.options.params),
    ...(error.options.data ? { data: error.options.data } : {}),
  };
}
