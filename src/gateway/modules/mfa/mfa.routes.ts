import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../../../shared/errors/app-error.js';
import type { UsersTable } from '../../db/schema.js';
import { Envelope, ErrorEnvelope, success } from '../../http/envelope.js';
import { MESSAGES } from '../../messages.js';
import { LoginData, SECURED } from '../auth/auth.schemas.js';
import type { AuthService } from '../auth/auth.service.js';
import { clientOf, type authGuards } from '../auth/authenticate.js';
import type { UsersRepository } from '../users/users.repository.js';
import { IdParams } from '../users/users.schemas.js';
import { CodeBody, EnrolmentStarted, MfaStatusData, RecoveryCodes, VerifyBody } from './mfa.schemas.js';
import { isEnrolmentToken, type MfaService } from './mfa.service.js';

export interface MfaRoutesDeps {
  mfa: MfaService;
  auth: AuthService;
  users: UsersRepository;
  guards: ReturnType<typeof authGuards>;
}

const errors = { 400: ErrorEnvelope, 401: ErrorEnvelope, 404: ErrorEnvelope, 409: ErrorEnvelope, 429: ErrorEnvelope };
const tags = ['auth'];
/** Enrolment routes also take the enrolment-only token of an MFA_ENROLMENT_REQUIRED login answer. */
const ENROLMENT_SECURED = [...SECURED, { mfaEnrolmentToken: [] }];

/** The enrolment-only token of an Authorization header, if that is what it holds. */
function enrolmentTokenOf(request: FastifyRequest): string | undefined {
  const bare = request.headers.authorization?.trim().replace(/^bearer\s+/i, '');
  return bare !== undefined && isEnrolmentToken(bare) ? bare : undefined;
}

/** Under /api/v1/auth/mfa: a person's own second factor, and the second step of a login. */
export function mfaRoutes({ mfa, auth, users, guards }: MfaRoutesDeps): FastifyPluginAsyncTypebox {
  /** The signed-in user, or the holder of an enrolment-only token (which opens these routes only). */
  const enrollingUser = async (request: FastifyRequest): Promise<{ user: UsersTable; enrolmentDigest?: string }> => {
    const enrolmentToken = enrolmentTokenOf(request);
    if (enrolmentToken !== undefined) {
      const challenge = await mfa.findChallenge(enrolmentToken, 'enrolment');
      const user = challenge && (await users.findById(challenge.user_id));
      if (!challenge || !user) throw new AppError('TOKEN_INVALID');
      return { user, enrolmentDigest: challenge.digest };
    }
    request.auth = await guards.authenticate(request);
    const user = await users.findById(request.auth.userId);
    if (!user) throw new AppError('TOKEN_INVALID');
    return { user };
  };

  return async (app) => {
    app.get(
      '/',
      {
        schema: {
          tags,
          summary: 'Whether a second factor is enrolled, and recovery codes left',
          security: ENROLMENT_SECURED,
          response: { 200: Envelope(MfaStatusData), ...errors },
        },
      },
      async (request, reply) => {
        const { user } = await enrollingUser(request);
        return success(request, reply, 200, MESSAGES.MFA_STATUS, await mfa.status(user.id));
      },
    );

    app.post(
      '/totp',
      {
        schema: {
          tags,
          summary: 'Start TOTP enrolment: a new secret and otpauth URI, pending until confirmed',
          security: ENROLMENT_SECURED,
          response: { 200: Envelope(EnrolmentStarted), ...errors },
        },
      },
      async (request, reply) => {
        const { user } = await enrollingUser(request);
        reply.header('cache-control', 'no-store');
        return success(request, reply, 200, MESSAGES.MFA_ENROLMENT_STARTED, await mfa.start(user, clientOf(request)));
      },
    );

    app.post(
      '/totp/confirm',
      {
        schema: {
          tags,
          summary: 'Confirm TOTP enrolment with a first code; answers the ten recovery codes, shown once',
          security: ENROLMENT_SECURED,
          body: CodeBody,
          response: { 200: Envelope(RecoveryCodes), ...errors },
        },
      },
      async (request, reply) => {
        const { user, enrolmentDigest } = await enrollingUser(request);
        const codes = await mfa.confirm(user, request.body.code, clientOf(request), enrolmentDigest);
        reply.header('cache-control', 'no-store');
        return success(request, reply, 200, MESSAGES.MFA_ENROLLED, { recovery_codes: codes });
      },
    );

    app.delete(
      '/',
      {
        schema: {
          tags,
          summary: 'Remove the second factor, with a current code or a recovery code',
          security: SECURED,
          body: CodeBody,
          response: { 200: Envelope(), ...errors },
        },
        preHandler: guards.requireAuth,
      },
      async (request, reply) => {
        const user = await users.findById(request.auth!.userId);
        if (!user) throw new AppError('TOKEN_INVALID');
        await mfa.removeOwn(user, request.body.code, clientOf(request));
        return success(request, reply, 200, MESSAGES.MFA_REMOVED);
      },
    );

    app.post(
      '/recovery-codes',
      {
        schema: {
          tags,
          summary: 'Ten new recovery codes, with a current TOTP code; the old ones stop working (audited)',
          security: SECURED,
          body: CodeBody,
          response: { 200: Envelope(RecoveryCodes), ...errors },
        },
        preHandler: guards.requireAuth,
      },
      async (request, reply) => {
        const user = await users.findById(request.auth!.userId);
        if (!user) throw new AppError('TOKEN_INVALID');
        const codes = await mfa.regenerateRecoveryCodes(user, request.body.code, clientOf(request));
        reply.header('cache-control', 'no-store');
        return success(request, reply, 200, MESSAGES.MFA_RECOVERY_CODES, { recovery_codes: codes });
      },
    );

    app.post(
      '/verify',
      {
        schema: {
          tags,
          summary: "Second step of an enrolled user's login: the challenge and a code; answers as login does",
          body: VerifyBody,
          response: { 200: Envelope(LoginData), ...errors },
        },
      },
      async (request, reply) => {
        const { token, user } = await auth.verifySecondFactor(request.body.challenge, request.body.code, clientOf(request));
        return success(request, reply, 200, MESSAGES.LOGIN_OK, { token: token.wrapped, user });
      },
    );
  };
}

/** Under /api/v1/pengguna: an administrator sees and removes a user's second factor. */
export function userMfaRoutes({ mfa, users, guards }: Omit<MfaRoutesDeps, 'auth'>): FastifyPluginAsyncTypebox {
  const adminErrors = { ...errors, 403: ErrorEnvelope };
  const target = async (id: string) => {
    const user = await users.findById(id);
    if (!user) throw new AppError('USER_NOT_FOUND');
    return user;
  };
  return async (app) => {
    app.get(
      '/:id/mfa',
      {
        schema: {
          tags: ['pengguna'],
          summary: "A user's second-factor status (administrators)",
          security: SECURED,
          params: IdParams,
          response: { 200: Envelope(MfaStatusData), ...adminErrors },
        },
        preHandler: guards.requireAdmin,
      },
      async (request, reply) => {
        const user = await target(request.params.id);
        return success(request, reply, 200, MESSAGES.MFA_STATUS, await mfa.status(user.id));
      },
    );

    app.delete(
      '/:id/mfa',
      {
        schema: {
          tags: ['pengguna'],
          summary: "Remove a user's second factor (administrators; audited): they sign in with the password and enrol again",
          security: SECURED,
          params: IdParams,
          response: { 200: Envelope(), ...adminErrors },
        },
        preHandler: guards.requireAdmin,
      },
      async (request, reply) => {
        const user = await target(request.params.id);
        await mfa.removeByAdministrator(user, request.auth!, clientOf(request));
        return success(request, reply, 200, MESSAGES.MFA_REMOVED);
      },
    );
  };
}
