import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses } from '../../http/errors.js';
import { LoginBody, LoginResponse, LogoutResponse, Me, RefreshBody, RefreshResponse } from './auth.schemas.js';
import type { LogsAuthService } from './auth.service.js';
import { clientOf, type LogsGuards } from './authenticate.js';

const SECURED = [{ bearer: [] }];
const tags = ['auth'];

/** Spec 2.5 / 4.5 login and current user, plus refresh and logout. */
export function logsAuthRoutes({ auth, guards }: { auth: LogsAuthService; guards: LogsGuards }): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/login',
      {
        schema: {
          tags,
          summary: 'Login by username and password',
          body: LoginBody,
          response: { 200: LoginResponse, ...errorResponses(400, 401, 429) },
        },
      },
      async (request) => auth.login(request.body.username, request.body.password, clientOf(request)),
    );

    app.get(
      '/me',
      {
        schema: { tags, summary: 'The signed-in user', security: SECURED, response: { 200: Me, ...errorResponses(401, 429) } },
        preHandler: guards.requireAuth,
      },
      async (request) => {
        const me = request.logsAuth!;
        return {
          username: me.username,
          email: me.email,
          roles: [...me.roles],
          permissions: [...me.permissions].sort(),
          tenant_id: me.homeTenantId,
        };
      },
    );

    app.post(
      '/refresh',
      {
        schema: {
          tags,
          summary: 'Exchange a refresh token for a new token pair (the old refresh token stops working)',
          body: RefreshBody,
          response: { 200: RefreshResponse, ...errorResponses(400, 401) },
        },
      },
      async (request) => ({ token: await auth.refresh(request.body.refresh_token, clientOf(request)) }),
    );

    app.post(
      '/logout',
      {
        schema: {
          tags,
          summary: 'End the session: its refresh and access tokens stop working',
          security: SECURED,
          response: { 200: LogoutResponse, ...errorResponses(401) },
        },
        preHandler: guards.requireAuth,
      },
      async (request) => {
        await auth.logout(request.logsAuth!, clientOf(request));
        return { status: 'ok' as const };
      },
    );
  };
}
