import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses } from '../../http/errors.js';
import { clientOf, type LogsGuards } from '../auth/authenticate.js';
import {
  SessionEndedResponse,
  SessionIdParams,
  SessionsEndedResponse,
  SessionsResponse,
  UserSessionParams,
  UserSessionsParams,
} from './sessions.schemas.js';
import type { SessionsService } from './sessions.service.js';

const SECURED = [{ bearer: [] }];
const tags = ['sessions'];
const errors = errorResponses(400, 401, 403, 404, 429);

/** `/api/sessions` (the caller's) and `/api/users/:id/sessions` (users:manage) (docs/logs-api.md "Sessions"). */
export function sessionsRoutes({ sessions, guards }: { sessions: SessionsService; guards: LogsGuards }): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/sessions',
      {
        schema: {
          tags,
          summary: 'Your sessions: where and how each began, when last used',
          security: SECURED,
          response: { 200: SessionsResponse, ...errors },
        },
        preHandler: guards.requireAuth,
      },
      async (request) => ({ sessions: await sessions.listOwn(request.logsAuth!) }),
    );

    app.delete(
      '/sessions',
      {
        schema: {
          tags,
          summary: 'End all your sessions but this one',
          security: SECURED,
          response: { 200: SessionsEndedResponse, ...errors },
        },
        preHandler: guards.requireAuth,
      },
      async (request) => ({ ended: await sessions.endOtherOwn(request.logsAuth!, clientOf(request)) }),
    );

    app.delete(
      '/sessions/:id',
      {
        schema: {
          tags,
          summary: 'End one of your sessions: its tokens stop working at once',
          security: SECURED,
          params: SessionIdParams,
          response: { 200: SessionEndedResponse, ...errors },
        },
        preHandler: guards.requireAuth,
      },
      async (request) => {
        await sessions.endOwn(request.logsAuth!, request.params.id, clientOf(request));
        return { status: 'ok' as const };
      },
    );

    app.get(
      '/users/:id/sessions',
      {
        schema: {
          tags,
          summary: "A user's sessions (users:manage, a user of the tenant no more powerful than you)",
          security: SECURED,
          params: UserSessionsParams,
          response: { 200: SessionsResponse, ...errors },
        },
        preHandler: guards.requirePermission('users:manage'),
      },
      async (request) => ({ sessions: await sessions.listFor(request.tenantId, request.params.id, request.logsAuth!) }),
    );

    app.delete(
      '/users/:id/sessions',
      {
        schema: {
          tags,
          summary: 'End every session of a user (users:manage)',
          security: SECURED,
          params: UserSessionsParams,
          response: { 200: SessionsEndedResponse, ...errors },
        },
        preHandler: guards.requirePermission('users:manage'),
      },
      async (request) => ({ ended: await sessions.endAllFor(request.tenantId, request.params.id, request.logsAuth!, clientOf(request)) }),
    );

    app.delete(
      '/users/:id/sessions/:session',
      {
        schema: {
          tags,
          summary: 'End one session of a user (users:manage)',
          security: SECURED,
          params: UserSessionParams,
          response: { 200: SessionEndedResponse, ...errors },
        },
        preHandler: guards.requirePermission('users:manage'),
      },
      async (request) => {
        await sessions.endFor(request.tenantId, request.params.id, request.params.session, request.logsAuth!, clientOf(request));
        return { status: 'ok' as const };
      },
    );
  };
}
