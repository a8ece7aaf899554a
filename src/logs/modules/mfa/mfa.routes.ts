import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../../../shared/errors/app-error.js';
import { errorResponses } from '../../http/errors.js';
import { LoginResponse } from '../auth/auth.schemas.js';
import { clientOf, type LogsGuards } from '../auth/authenticate.js';
import {
  MfaCodeBody,
  MfaConfirmResponse,
  MfaLoginBody,
  MfaRecoveryCodesResponse,
  MfaStartResponse,
  MfaStatusResponse,
  MfaUserParams,
  OkResponse,
} from './mfa.schemas.js';
import type { MfaActor, SecondFactor } from './second-factor.js';

const SECURED = [{ bearer: [] }];
const tags = ['mfa'];

/** A person's own session: an API key is a program, not a person enrolling a factor. */
function personOf(request: FastifyRequest): MfaActor {
  const auth = request.logsAuth!;
  if (auth.apiKeyId !== undefined || auth.sessionId === null) throw new AppError('LOGS_PERMISSION_DENIED');
  return auth;
}

/** `/api/login/mfa`, `/api/mfa/...` and `/api/users/:id/mfa` (docs/logs-api.md "Second factor"). */
export function mfaRoutes({ secondFactor, guards }: { secondFactor: SecondFactor; guards: LogsGuards }): FastifyPluginAsyncTypebox {
  /** The enrolment-only credential of a login that must enrol, presented as a bearer token (it is no JWT). */
  const enrolmentOf = new WeakMap<FastifyRequest, string>();
  const enrollingPreHandler = Object.assign(
    async (request: FastifyRequest) => {
      const token = /^bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1];
      const enrolling = token !== undefined && !token.includes('.') ? await secondFactor.enrolling(token) : undefined;
      if (!enrolling) return guards.requireAuth.call(request.server, request, undefined as never);
      const user = enrolling.user;
      request.logsAuth = {
        userId: user.id,
        username: user.username,
        email: user.email,
        homeTenantId: user.tenant_id,
        sessionId: null,
        roles: [],
        permissions: new Set(),
      };
      request.tenantId = user.tenant_id;
      enrolmentOf.set(request, enrolling.tokenHash);
    },
    { permissions: [] as const },
  );
  const enrollingActor = (request: FastifyRequest): MfaActor => (enrolmentOf.has(request) ? request.logsAuth! : personOf(request));

  return async (app) => {
    app.post(
      '/login/mfa',
      {
        schema: {
          tags: ['auth'],
          summary: "A login's second step: the challenge of the 401 `second factor required` and a code give the login answer",
          body: MfaLoginBody,
          response: { 200: LoginResponse, ...errorResponses(400, 401, 429) },
        },
      },
      async (request) => secondFactor.verifyLogin(request.body.challenge, request.body.code, clientOf(request)),
    );

    app.get(
      '/mfa',
      {
        schema: {
          tags,
          summary: "The caller's second factor",
          security: SECURED,
          response: { 200: MfaStatusResponse, ...errorResponses(401, 403, 429) },
        },
        preHandler: guards.requireAuth,
      },
      async (request) => secondFactor.status(personOf(request)),
    );

    app.post(
      '/mfa/totp/start',
      {
        schema: {
          tags,
          summary: 'Begin enrolling an authenticator app: a new secret and its otpauth:// URI (a session or an enrolment-only credential)',
          security: SECURED,
          response: { 200: MfaStartResponse, ...errorResponses(401, 403, 409, 429) },
        },
        preHandler: enrollingPreHandler,
      },
      async (request) => secondFactor.start(enrollingActor(request)),
    );

    app.post(
      '/mfa/totp/confirm',
      {
        schema: {
          tags,
          summary:
            'Confirm the app with its first code: ten recovery codes, shown once; with an enrolment-only credential, the login answer too',
          security: SECURED,
          body: MfaCodeBody,
          response: { 200: MfaConfirmResponse, ...errorResponses(400, 401, 403, 409, 429) },
        },
        preHandler: enrollingPreHandler,
      },
      async (request) => secondFactor.confirm(enrollingActor(request), request.body.code, clientOf(request), enrolmentOf.get(request)),
    );

    app.post(
      '/mfa/recovery-codes',
      {
        schema: {
          tags,
          summary: 'Ten new recovery codes, with a current code from the app; the old ones stop working (audited)',
          security: SECURED,
          body: MfaCodeBody,
          response: { 200: MfaRecoveryCodesResponse, ...errorResponses(400, 401, 403, 409, 429) },
        },
        preHandler: guards.requireAuth,
      },
      async (request, reply) => {
        reply.header('cache-control', 'no-store');
        return secondFactor.regenerateRecoveryCodes(personOf(request), request.body.code, clientOf(request));
      },
    );

    app.delete(
      '/mfa/totp',
      {
        schema: {
          tags,
          summary: 'Remove your authenticator app and recovery codes, with a current code',
          security: SECURED,
          body: MfaCodeBody,
          response: { 200: OkResponse, ...errorResponses(400, 401, 403, 409, 429) },
        },
        preHandler: guards.requireAuth,
      },
      async (request) => {
        await secondFactor.remove(personOf(request), request.body.code, clientOf(request));
        return { status: 'ok' as const };
      },
    );

    app.delete(
      '/users/:id/mfa',
      {
        schema: {
          tags,
          summary: "Remove a user's second factor (users:manage, a user no more powerful than you): they enrol again at their next login",
          security: SECURED,
          params: MfaUserParams,
          response: { 200: OkResponse, ...errorResponses(400, 401, 403, 404, 409, 429) },
        },
        preHandler: guards.requirePermission('users:manage'),
      },
      async (request) => {
        await secondFactor.removeFor(request.tenantId, request.params.id, request.logsAuth!, clientOf(request));
        return { status: 'ok' as const };
      },
    );
  };
}
