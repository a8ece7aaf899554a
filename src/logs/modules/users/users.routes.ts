import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { errorResponses } from '../../http/errors.js';
import { clientOf, type LogsGuards } from '../auth/authenticate.js';
import { IdParams, User, UserCreateBody, UsersResponse, UserUpdateBody } from './users.schemas.js';
import type { LogsUsersService } from './users.service.js';

const SECURED = [{ bearer: [] }];
const tags = ['users'];
const errors = errorResponses(400, 401, 403, 404, 429);

/** Spec 4.5 `/api/users` (users:manage) within the caller's tenant, plus get, update and delete by id. */
export function logsUsersRoutes({ users, guards }: { users: LogsUsersService; guards: LogsGuards }): FastifyPluginAsyncTypebox {
  const preHandler = guards.requirePermission('users:manage');
  return async (app) => {
    app.get(
      '/',
      {
        schema: {
          tags,
          summary: 'Users of the tenant',
          security: SECURED,
          response: { 200: UsersResponse, ...errors },
        },
        preHandler,
      },
      async (request) => ({ users: await users.list(request.tenantId) }),
    );

    app.post(
      '/',
      {
        schema: {
          tags,
          summary: 'Create a user in the tenant',
          security: SECURED,
          body: UserCreateBody,
          response: { 201: User, ...errors },
        },
        preHandler,
      },
      async (request, reply) => {
        reply.status(201);
        return users.create(request.tenantId, request.body, request.logsAuth, clientOf(request));
      },
    );

    app.get(
      '/:id',
      { schema: { tags, summary: 'One user', security: SECURED, params: IdParams, response: { 200: User, ...errors } }, preHandler },
      async (request) => users.get(request.tenantId, request.params.id),
    );

    app.put(
      '/:id',
      {
        schema: {
          tags,
          summary: "Change e-mail, password (ends the user's sessions) or roles",
          security: SECURED,
          params: IdParams,
          body: UserUpdateBody,
          response: { 200: User, ...errors },
        },
        preHandler,
      },
      async (request) => users.update(request.tenantId, request.params.id, request.body, request.logsAuth!, clientOf(request)),
    );

    app.delete(
      '/:id',
      {
        schema: { tags, summary: 'Delete a user', security: SECURED, params: IdParams, response: { 204: Type.Null(), ...errors } },
        preHandler,
      },
      async (request, reply) => {
        await users.delete(request.tenantId, request.params.id, request.logsAuth!, clientOf(request));
        return reply.status(204).send(null);
      },
    );
  };
}
