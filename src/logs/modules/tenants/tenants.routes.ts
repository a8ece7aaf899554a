import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { errorResponses } from '../../http/errors.js';
import { clientOf, type LogsGuards } from '../auth/authenticate.js';
import { IdParams, Tenant, TenantCreateBody, TenantsResponse, TenantUpdateBody } from './tenants.schemas.js';
import type { TenantsService } from './tenants.service.js';

const SECURED = [{ bearer: [] }];
const tags = ['tenants'];
const errors = errorResponses(400, 401, 403, 404, 429);

/** Spec 4.5 `/api/tenants` (tenants:manage), plus get, update and delete by id. */
export function tenantsRoutes({ tenants, guards }: { tenants: TenantsService; guards: LogsGuards }): FastifyPluginAsyncTypebox {
  const preHandler = guards.requirePermission('tenants:manage');
  return async (app) => {
    app.get(
      '/',
      {
        schema: {
          tags,
          summary: 'Every tenant',
          security: SECURED,
          response: { 200: TenantsResponse, ...errors },
        },
        preHandler,
      },
      async () => ({ tenants: await tenants.list() }),
    );

    app.post(
      '/',
      {
        schema: {
          tags,
          summary: 'Create a tenant',
          security: SECURED,
          body: TenantCreateBody,
          response: { 201: Tenant, ...errors },
        },
        preHandler,
      },
      async (request, reply) => {
        reply.status(201);
        return tenants.create(request.body, request.logsAuth!, clientOf(request));
      },
    );

    app.get(
      '/:id',
      { schema: { tags, summary: 'One tenant', security: SECURED, params: IdParams, response: { 200: Tenant, ...errors } }, preHandler },
      async (request) => tenants.get(request.params.id),
    );

    app.put(
      '/:id',
      {
        schema: {
          tags,
          summary: 'Rename a tenant or set its retention (null = the default)',
          security: SECURED,
          params: IdParams,
          body: TenantUpdateBody,
          response: { 200: Tenant, ...errors },
        },
        preHandler,
      },
      async (request) => tenants.update(request.params.id, request.body, request.logsAuth!, clientOf(request)),
    );

    app.delete(
      '/:id',
      {
        schema: {
          tags,
          summary: 'Delete an empty tenant and its logs',
          security: SECURED,
          params: IdParams,
          response: { 204: Type.Null(), ...errors },
        },
        preHandler,
      },
      async (request, reply) => {
        await tenants.delete(request.params.id, request.logsAuth!, clientOf(request));
        return reply.status(204).send(null);
      },
    );
  };
}
