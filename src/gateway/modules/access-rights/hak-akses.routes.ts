import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { Envelope, ErrorEnvelope, success } from '../../http/envelope.js';
import { MESSAGES } from '../../messages.js';
import { SECURED } from '../auth/auth.schemas.js';
import type { authGuards } from '../auth/authenticate.js';
import type { HakAksesRepository } from './hak-akses.repository.js';

const HakAkses = Type.Object({ id: Type.String(), nama: Type.String(), is_admin: Type.Boolean() });

/** GET /api/v1/hak-akses: the access rights, for forms (any signed-in user). */
export function hakAksesRoutes(deps: { hakAkses: HakAksesRepository; guards: ReturnType<typeof authGuards> }): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/',
      {
        schema: {
          tags: ['hak-akses'],
          summary: 'List access rights',
          security: SECURED,
          response: { 200: Envelope(Type.Array(HakAkses)), 401: ErrorEnvelope },
        },
        preHandler: deps.guards.requireAuth,
      },
      async (request, reply) => {
        const rows = await deps.hakAkses.list();
        return success(
          request,
          reply,
          200,
          MESSAGES.HAK_AKSES_LISTED,
          rows.map((row) => ({ ...row, is_admin: row.is_admin === 1 })),
        );
      },
    );
  };
}
