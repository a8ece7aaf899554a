import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses } from '../../http/errors.js';
import type { LogsGuards } from '../auth/authenticate.js';
import { searchCondition } from '../query/condition.js';
import { rangeOf, storeRange } from '../query/time-range.js';
import type { LogStore } from '../store/log-store.js';
import { PatternsBody, PatternsResponse } from './patterns.schemas.js';
import { DEFAULT_PATTERNS, DEFAULT_SAMPLE, findPatterns } from './patterns.service.js';

const SECURED = [{ bearer: [] }];
const errors = errorResponses(400, 401, 403, 429, 503);

/** POST /api/v1/logs/patterns (logs:read): the search's entries grouped into message patterns, over the caller's tenant. */
export function patternsRoutes({
  store,
  guards,
  now,
}: {
  store: LogStore;
  guards: LogsGuards;
  now: () => number;
}): FastifyPluginAsyncTypebox {
  const preHandler = guards.requirePermission('logs:read');
  return async (app) => {
    app.post(
      '/patterns',
      {
        schema: {
          tags: ['logs'],
          summary: 'Message patterns of a search (Drain), with counts and an example; sampled over a large range',
          security: SECURED,
          body: PatternsBody,
          response: { 200: PatternsResponse, ...errors },
        },
        preHandler,
      },
      async (request) => {
        const body = request.body;
        const { from, to } = storeRange(rangeOf(body.timeRange, now()));
        return findPatterns(store, {
          tenantId: request.tenantId,
          condition: searchCondition(body.query, body.filters),
          query: body.query ?? '',
          from,
          to,
          sample: body.sample ?? DEFAULT_SAMPLE,
          limit: body.limit ?? DEFAULT_PATTERNS,
        });
      },
    );
  };
}
