import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { errorResponses } from '../../http/errors.js';
import { clientOf, type LogsGuards } from '../auth/authenticate.js';
import {
  SavedSearch,
  SavedSearchCreateBody,
  SavedSearchesResponse,
  SavedSearchParams,
  SavedSearchUpdateBody,
} from './saved-searches.schemas.js';
import type { SavedSearchesService } from './saved-searches.service.js';

const SECURED = [{ bearer: [] }];
const tags = ['logs'];
const readErrors = errorResponses(400, 401, 403, 404, 429);

/** The explorer's saved searches (`logs:read`), within the caller's tenant; who may change one: the service. */
export function savedSearchesRoutes({
  savedSearches,
  guards,
}: {
  savedSearches: SavedSearchesService;
  guards: LogsGuards;
}): FastifyPluginAsyncTypebox {
  const preHandler = guards.requirePermission('logs:read');
  return async (app) => {
    app.get(
      '/',
      {
        schema: {
          tags,
          summary: "The tenant's saved searches, by name",
          security: SECURED,
          response: { 200: SavedSearchesResponse, ...readErrors },
        },
        preHandler,
      },
      async (request) => ({ data: await savedSearches.list(request.tenantId, request.logsAuth!) }),
    );

    app.post(
      '/',
      {
        schema: {
          tags,
          summary: 'Save a search (query, range, columns, sort) under a name unique in the tenant',
          security: SECURED,
          body: SavedSearchCreateBody,
          response: { 201: SavedSearch, ...readErrors },
        },
        preHandler,
      },
      async (request, reply) => {
        const created = await savedSearches.create(request.tenantId, request.body, request.logsAuth!, clientOf(request));
        return reply.status(201).send(created);
      },
    );

    app.get(
      '/:id',
      {
        schema: {
          tags,
          summary: 'One saved search',
          security: SECURED,
          params: SavedSearchParams,
          response: { 200: SavedSearch, ...readErrors },
        },
        preHandler,
      },
      async (request) => savedSearches.get(request.tenantId, request.params.id, request.logsAuth!),
    );

    app.put(
      '/:id',
      {
        schema: {
          tags,
          summary: 'Rename or change a saved search (given fields replace the current ones; its owner or users:manage)',
          security: SECURED,
          params: SavedSearchParams,
          body: SavedSearchUpdateBody,
          response: { 200: SavedSearch, ...readErrors },
        },
        preHandler,
      },
      async (request) => savedSearches.update(request.tenantId, request.params.id, request.body, request.logsAuth!, clientOf(request)),
    );

    app.delete(
      '/:id',
      {
        schema: {
          tags,
          summary: 'Delete a saved search (its owner or users:manage)',
          security: SECURED,
          params: SavedSearchParams,
          response: { 204: Type.Null(), ...readErrors },
        },
        preHandler,
      },
      async (request, reply) => {
        await savedSearches.remove(request.tenantId, request.params.id, request.logsAuth!, clientOf(request));
        return reply.status(204).send(null);
      },
    );
  };
}
