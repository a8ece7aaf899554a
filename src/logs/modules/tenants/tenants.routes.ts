import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { errorResponses } from '../../http/errors.js';
import { clientOf, type LogsGuards } from '../auth/authenticate.js';
import type { TenantsService } from './tenants.service.js';

const Name = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$' });
const RetentionDays = Type.Integer({ minimum: 1, maximum: 36_500, description: 'Days of logs kept' });
const Tenant = Type.Object({
  id: Type.String(),
  name: Type.String(),
  retention_days: Type.Integer(),
  created_at: Type.String(),
  updated_at: Type.String(),
});
const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
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
          response: { 200: Type.Object({ tenants: Type.Array(Tenant) }), ...errors },
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
          body: Type.Object({ name: Name, retention_days: Type.Optional(RetentionDays) }),
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
          body: Type.Object({ name: Type.Optional(Name), retention_days: Type.Optional(Type.Union([RetentionDays, Type.Null()])) }),
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
