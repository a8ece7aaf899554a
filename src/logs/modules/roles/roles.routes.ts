import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { errorResponses } from '../../http/errors.js';
import { clientOf, type LogsGuards } from '../auth/authenticate.js';
import { IdParams, Role, RoleCreateBody, RolesResponse, RoleUpdateBody } from './roles.schemas.js';
import type { RolesService } from './roles.service.js';

const SECURED = [{ bearer: [] }];
const tags = ['roles'];
const errors = errorResponses(400, 401, 403, 404, 429);

/** Spec 4.5 `/api/roles` (roles:manage), plus get, update and delete by id. */
export function rolesRoutes({ roles, guards }: { roles: RolesService; guards: LogsGuards }): FastifyPluginAsyncTypebox {
  const preHandler = guards.requirePermission('roles:manage');
  return async (app) => {
    app.get(
      '/',
      {
        schema: {
          tags,
          summary: 'Roles of the tenant and the built-in ones',
          security: SECURED,
          response: { 200: RolesResponse, ...errors },
        },
        preHandler,
      },
      async (request) => ({ roles: await roles.list(request.tenantId) }),
    );

    app.post(
      '/',
      {
        schema: {
          tags,
          summary: 'Create a role',
          security: SECURED,
          body: RoleCreateBody,
          response: { 201: Role, ...errors },
        },
        preHandler,
      },
      async (request, reply) => {
        reply.status(201);
        return roles.create(request.tenantId, request.body, request.logsAuth!, clientOf(request));
      },
    );

    app.get(
      '/:id',
      { schema: { tags, summary: 'One role', security: SECURED, params: IdParams, response: { 200: Role, ...errors } }, preHandler },
      async (request) => roles.get(request.tenantId, request.params.id),
    );

    app.put(
      '/:id',
      {
        schema: {
          tags,
          summary: 'Rename a role or replace its permissions',
          security: SECURED,
          params: IdParams,
          body: RoleUpdateBody,
          response: { 200: Role, ...errors },
        },
        preHandler,
      },
      async (request) => roles.update(request.tenantId, request.params.id, request.body, request.logsAuth!, clientOf(request)),
    );

    app.delete(
      '/:id',
      {
        schema: {
          tags,
          summary: 'Delete a role (users holding it lose it)',
          security: SECURED,
          params: IdParams,
          response: { 204: Type.Null(), ...errors },
        },
        preHandler,
      },
      async (request, reply) => {
        await roles.delete(request.tenantId, request.params.id, request.logsAuth!, clientOf(request));
        return reply.status(204).send(null);
      },
    );
  };
}
