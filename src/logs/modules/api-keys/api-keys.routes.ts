import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { errorResponses } from '../../http/errors.js';
import { clientOf, type LogsGuards } from '../auth/authenticate.js';
import { PERMISSIONS } from '../rbac/permissions.js';
import type { ApiKeysService } from './api-keys.service.js';

const Nullable = Type.Union([Type.String(), Type.Null()]);
const ApiKey = Type.Object({
  id: Type.String(),
  name: Type.String(),
  tenant_id: Type.String(),
  user_id: Type.String(),
  permissions: Type.Array(Type.String()),
  created_by: Type.String(),
  created_at: Type.String(),
  expires_at: Nullable,
  revoked_at: Nullable,
  last_used_at: Nullable,
});
const SECURED: Record<string, string[]>[] = [{ bearer: [] }, { apiKey: [] }];
const tags = ['api-keys'];
const errors = errorResponses(400, 401, 403, 404, 429);

/** `/api/v1/api-keys`: any signed-in user for their own keys; users:manage for another user's (docs/logs-api.md). */
export function apiKeysRoutes({ apiKeys, guards }: { apiKeys: ApiKeysService; guards: LogsGuards }): FastifyPluginAsyncTypebox {
  const preHandler = guards.requireSignedIn;
  return async (app) => {
    app.post(
      '/',
      {
        schema: {
          tags,
          summary:
            "Create an API key (the secret is in this answer only); at most the creator's permissions; users:manage to create one for another user",
          security: SECURED,
          body: Type.Object({
            name: Type.String({ minLength: 1, maxLength: 128 }),
            permissions: Type.Array(Type.String({ maxLength: 64 }), {
              minItems: 1,
              maxItems: 64,
              description: `Any of: ${PERMISSIONS.join(', ')}`,
            }),
            expires_at: Type.Optional(Type.String({ maxLength: 64, description: 'ISO 8601; none: the key does not expire' })),
            user_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'The owner; default the caller' })),
          }),
          response: { 201: Type.Intersect([ApiKey, Type.Object({ api_key: Type.String(), encoded: Type.String() })]), ...errors },
        },
        preHandler,
      },
      async (request, reply) => {
        reply.status(201);
        return apiKeys.create(request.tenantId, request.body, request.logsAuth!, clientOf(request));
      },
    );

    app.get(
      '/',
      {
        schema: {
          tags,
          summary: "The caller's API keys, or a user's (users:manage), without their secrets",
          security: SECURED,
          querystring: Type.Object({ user_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })) }),
          response: { 200: Type.Object({ api_keys: Type.Array(ApiKey) }), ...errors },
        },
        preHandler,
      },
      async (request) => ({ api_keys: await apiKeys.list(request.tenantId, request.logsAuth!, request.query.user_id) }),
    );

    app.delete(
      '/:id',
      {
        schema: {
          tags,
          summary: 'Revoke an API key (its owner, or users:manage): it stops working at once',
          security: SECURED,
          params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) }),
          response: { 200: ApiKey, ...errors },
        },
        preHandler,
      },
      async (request) => apiKeys.revoke(request.tenantId, request.params.id, request.logsAuth!, clientOf(request)),
    );
  };
}
