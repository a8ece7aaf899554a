import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../../../shared/errors/app-error.js';
import { errorResponses } from '../../http/errors.js';
import { clientOf, type LogsGuards } from '../auth/authenticate.js';
import {
  Passkey,
  PasskeyIdParams,
  PasskeyLoginBody,
  PasskeyLoginResponse,
  PasskeyOptionsResponse,
  PasskeyRegisterBody,
  PasskeyRemovedResponse,
  PasskeysResponse,
  UserPasskeyParams,
  UserPasskeysParams,
} from './passkeys.schemas.js';
import type { PasskeyActor, PasskeysService } from './passkeys.service.js';

const SECURED = [{ bearer: [] }];
const tags = ['passkeys'];

/** A person's own session: an API key is a program, not a person holding an authenticator. */
function personOf(request: FastifyRequest): PasskeyActor {
  const auth = request.logsAuth!;
  if (auth.apiKeyId !== undefined || auth.sessionId === null) throw new AppError('LOGS_PERMISSION_DENIED');
  return auth;
}

/** `/api/passkeys` and `/api/login/passkey` (docs/logs-api.md "Passkeys", docs/console.md). */
export function passkeysRoutes({ passkeys, guards }: { passkeys: PasskeysService; guards: LogsGuards }): FastifyPluginAsyncTypebox {
  // Your own passkeys need only a session; a user's are `users:manage`'s (and may be refused 403).
  const errors = errorResponses(400, 401, 404, 429);
  const adminErrors = errorResponses(400, 401, 403, 404, 429);
  return async (app) => {
    app.get(
      '/passkeys',
      {
        schema: { tags, summary: 'Your passkeys', security: SECURED, response: { 200: PasskeysResponse, ...errors } },
        preHandler: guards.requireAuth,
      },
      async (request) => ({ passkeys: await passkeys.list(personOf(request)) }),
    );

    app.post(
      '/passkeys/options',
      {
        schema: {
          tags,
          summary: 'Begin registering a passkey: options for navigator.credentials.create()',
          security: SECURED,
          response: { 200: PasskeyOptionsResponse, ...errors },
        },
        preHandler: guards.requireAuth,
      },
      async (request) => passkeys.registrationOptions(personOf(request)),
    );

    app.post(
      '/passkeys',
      {
        schema: {
          tags,
          summary: 'Register the passkey the browser created',
          security: SECURED,
          body: PasskeyRegisterBody,
          response: { 201: Passkey, ...errors },
        },
        preHandler: guards.requireAuth,
      },
      async (request, reply) => {
        const { challenge_id: challengeId, name, credential } = request.body;
        const made = await passkeys.register(
          personOf(request),
          challengeId,
          name,
          credential as unknown as RegistrationResponseJSON,
          clientOf(request),
        );
        reply.status(201);
        return made;
      },
    );

    app.delete(
      '/passkeys/:id',
      {
        schema: {
          tags,
          summary: 'Remove one of your passkeys',
          security: SECURED,
          params: PasskeyIdParams,
          response: { 200: PasskeyRemovedResponse, ...errors },
        },
        preHandler: guards.requireAuth,
      },
      async (request) => {
        await passkeys.remove(personOf(request), request.params.id, clientOf(request));
        return { status: 'ok' as const };
      },
    );

    app.get(
      '/users/:id/passkeys',
      {
        schema: {
          tags,
          summary: "A user's passkeys (users:manage, a user of the tenant no more powerful than you)",
          security: SECURED,
          params: UserPasskeysParams,
          response: { 200: PasskeysResponse, ...adminErrors },
        },
        preHandler: guards.requirePermission('users:manage'),
      },
      async (request) => ({ passkeys: await passkeys.listFor(request.tenantId, request.params.id, request.logsAuth!) }),
    );

    app.delete(
      '/users/:id/passkeys/:passkeyId',
      {
        schema: {
          tags,
          summary: "Remove a user's passkey (users:manage, a user of the tenant no more powerful than you; audited)",
          security: SECURED,
          params: UserPasskeyParams,
          response: { 200: PasskeyRemovedResponse, ...adminErrors },
        },
        preHandler: guards.requirePermission('users:manage'),
      },
      async (request) => {
        const { id, passkeyId } = request.params;
        await passkeys.removeFor(request.tenantId, id, passkeyId, request.logsAuth!, clientOf(request));
        return { status: 'ok' as const };
      },
    );

    app.post(
      '/login/passkey/options',
      {
        schema: {
          tags: ['auth'],
          summary: 'Begin signing in with a passkey: options for navigator.credentials.get()',
          response: { 200: PasskeyOptionsResponse, ...errorResponses(429) },
        },
      },
      async (request) => passkeys.loginOptions(clientOf(request)),
    );

    app.post(
      '/login/passkey',
      {
        schema: {
          tags: ['auth'],
          summary: 'Sign in with a passkey (both factors): the login answer',
          body: PasskeyLoginBody,
          response: { 200: PasskeyLoginResponse, ...errorResponses(400, 401, 429) },
        },
      },
      async (request) =>
        passkeys.login(request.body.challenge_id, request.body.credential as unknown as AuthenticationResponseJSON, clientOf(request)),
    );
  };
}
