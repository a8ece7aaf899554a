import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses } from '../../http/errors.js';
import { clientOf, type LogsGuards } from '../auth/authenticate.js';
import { ApiKey, ApiKeyCreateBody, ApiKeyCreated, ApiKeyIdParams, ApiKeysQuery, ApiKeysResponse } from './api-keys.schemas.js';
import type { ApiKeysService } from './api-keys.service.js';

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
          body: ApiKeyCreateBody,
          response: { 201: ApiKeyCreated, ...errors },
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
          querystring: ApiKeysQuery,
          response: { 200: ApiKeysResponse, ...errors },
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
          params: ApiKeyIdParams,
          response: { 200: ApiKey, ...errors },
        },
        preHandler,
      },
      async (request) => apiKeys.revoke(request.tenantId, request.params.id, request.logsAuth!, clientOf(request)),
    );
  };
}
