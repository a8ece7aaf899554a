import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AppError } from '../../../shared/errors/app-error.js';
import { Envelope, ErrorEnvelope, success } from '../../http/envelope.js';
import { MESSAGES } from '../../messages.js';
import type { UsersRepository } from '../users/users.repository.js';
import { IdParams } from '../users/users.schemas.js';
import { SECURED } from './auth.schemas.js';
import { clientOf, type authGuards } from './authenticate.js';
import { EndedCount, SessionItem, SessionParams, UserSessionParams } from './sessions.schemas.js';
import type { SessionsService } from './sessions.service.js';

export interface SessionsRoutesDeps {
  sessions: SessionsService;
  users: UsersRepository;
  guards: ReturnType<typeof authGuards>;
}

const errors = { 400: ErrorEnvelope, 401: ErrorEnvelope, 404: ErrorEnvelope };

/** Under /api/v1/auth/sessions: the caller's own sessions. */
export function ownSessionsRoutes({ sessions, guards }: SessionsRoutesDeps): FastifyPluginAsyncTypebox {
  const tags = ['auth'];
  return async (app) => {
    app.get(
      '/',
      {
        schema: {
          tags,
          summary: 'My live sessions: created, last used, address, user agent, how signed in',
          security: SECURED,
          response: { 200: Envelope(Type.Array(SessionItem)), ...errors },
        },
        preHandler: guards.requireAuth,
      },
      async (request, reply) => {
        const auth = request.auth!;
        return success(request, reply, 200, MESSAGES.SESSIONS_LISTED, await sessions.list(auth.userId, auth.sessionId));
      },
    );

    app.delete(
      '/',
      {
        schema: {
          tags,
          summary: 'End all my other sessions (this one stays)',
          security: SECURED,
          response: { 200: Envelope(EndedCount), ...errors },
        },
        preHandler: guards.requireAuth,
      },
      async (request, reply) => {
        const auth = request.auth!;
        const ended = await sessions.endAll(auth.userId, auth.sessionId, auth, 'self', clientOf(request));
        return success(request, reply, 200, MESSAGES.SESSIONS_ENDED, { ended });
      },
    );

    app.delete(
      '/:sessionId',
      {
        schema: {
          tags,
          summary: 'End one of my sessions (this one too: then it is a logout)',
          security: SECURED,
          params: SessionParams,
          response: { 200: Envelope(), ...errors },
        },
        preHandler: guards.requireAuth,
      },
      async (request, reply) => {
        const auth = request.auth!;
        await sessions.end(auth.userId, request.params.sessionId, auth, 'self', clientOf(request));
        return success(request, reply, 200, MESSAGES.SESSION_ENDED);
      },
    );
  };
}

/** Under /api/v1/pengguna: an administrator lists and ends a user's sessions. */
export function userSessionsRoutes({ sessions, users, guards }: SessionsRoutesDeps): FastifyPluginAsyncTypebox {
  const tags = ['pengguna'];
  const adminErrors = { ...errors, 403: ErrorEnvelope };
  const assertUser = async (id: string) => {
    if (!(await users.findById(id))) throw new AppError('USER_NOT_FOUND');
  };
  return async (app) => {
    app.get(
      '/:id/sessions',
      {
        schema: {
          tags,
          summary: "A user's live sessions (administrators)",
          security: SECURED,
          params: IdParams,
          response: { 200: Envelope(Type.Array(SessionItem)), ...adminErrors },
        },
        preHandler: guards.requireAdmin,
      },
      async (request, reply) => {
        await assertUser(request.params.id);
        return success(request, reply, 200, MESSAGES.SESSIONS_LISTED, await sessions.list(request.params.id, request.auth!.sessionId));
      },
    );

    app.delete(
      '/:id/sessions',
      {
        schema: {
          tags,
          summary: "End all of a user's sessions (administrators; audited)",
          security: SECURED,
          params: IdParams,
          response: { 200: Envelope(EndedCount), ...adminErrors },
        },
        preHandler: guards.requireAdmin,
      },
      async (request, reply) => {
        await assertUser(request.params.id);
        const ended = await sessions.endAll(request.params.id, undefined, request.auth!, 'administrator', clientOf(request));
        return success(request, reply, 200, MESSAGES.SESSIONS_ENDED, { ended });
      },
    );

    app.delete(
      '/:id/sessions/:sessionId',
      {
        schema: {
          tags,
          summary: "End one of a user's sessions (administrators; audited)",
          security: SECURED,
          params: UserSessionParams,
          response: { 200: Envelope(), ...adminErrors },
        },
        preHandler: guards.requireAdmin,
      },
      async (request, reply) => {
        await assertUser(request.params.id);
        await sessions.end(request.params.id, request.params.sessionId, request.auth!, 'administrator', clientOf(request));
        return success(request, reply, 200, MESSAGES.SESSION_ENDED);
      },
    );
  };
}
