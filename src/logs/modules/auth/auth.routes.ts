import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { errorResponses } from '../../http/errors.js';
import type { LogsAuthService } from './auth.service.js';
import { clientOf, type LogsGuards } from './authenticate.js';

const TokenObject = Type.Object({
  access_token: Type.String({ description: 'JWT (ES256)' }),
  expires_in: Type.Integer({ description: 'Seconds (300 by default)' }),
  refresh_token: Type.String({ description: 'Opaque, single use' }),
  token_type: Type.Literal('Bearer'),
});
const Me = Type.Object({
  username: Type.String(),
  email: Type.String(),
  roles: Type.Array(Type.String()),
  permissions: Type.Array(Type.String(), { description: 'What the user may do now (the console shows only what they may use)' }),
  tenant_id: Type.String(),
});
const LoginResponse = Type.Object({
  token: TokenObject,
  user: Type.Object({ username: Type.String(), roles: Type.Array(Type.String()), email: Type.String() }),
});
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
          body: Type.Object({
            username: Type.String({ minLength: 1, maxLength: 128 }),
            password: Type.String({ minLength: 1, maxLength: 1024 }),
          }),
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
          body: Type.Object({ refresh_token: Type.String({ minLength: 1, maxLength: 512 }) }),
          response: { 200: Type.Object({ token: TokenObject }), ...errorResponses(400, 401) },
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
          response: { 200: Type.Object({ status: Type.Literal('ok') }), ...errorResponses(401) },
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
