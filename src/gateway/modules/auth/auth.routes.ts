import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError } from '../../../shared/errors/app-error.js';
import { ACCESS_COOKIE } from './access-cookie.js';
import { Envelope, ErrorEnvelope, success } from '../../http/envelope.js';
import { MESSAGES } from '../../messages.js';
import type { UsersRepository } from '../users/users.repository.js';
import { Profile } from '../users/users.schemas.js';
import { ChangeExpiredPasswordBody, ChangePasswordBody, LoginBody, LoginData, SECURED, TokenData } from './auth.schemas.js';
import type { AuthService } from './auth.service.js';
import { clientOf, type authGuards } from './authenticate.js';

export interface AuthRoutesDeps {
  auth: AuthService;
  users: UsersRepository;
  guards: ReturnType<typeof authGuards>;
}

const errors = { 400: ErrorEnvelope, 401: ErrorEnvelope, 429: ErrorEnvelope };

/** Spec 4.1, under /api/v1/auth. */
export function authRoutes({ auth, users, guards }: AuthRoutesDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/login',
      {
        schema: {
          tags: ['auth'],
          summary: 'Login by employee number and password',
          body: LoginBody,
          response: { 200: Envelope(LoginData), ...errors },
        },
      },
      async (request, reply) => {
        const { token, user } = await auth.login(request.body.no_pegawai, request.body.kata_sandi, clientOf(request));
        return success(request, reply, 200, MESSAGES.LOGIN_OK, { token: token.wrapped, user });
      },
    );

    app.post(
      '/logout',
      {
        schema: { tags: ['auth'], summary: 'End the session', security: SECURED, response: { 200: Envelope(), ...errors } },
        preHandler: guards.requireAuth,
      },
      async (request, reply) => {
        await auth.logout(request.auth!, clientOf(request));
        // A browser signed in through SSO holds the token in a cookie too: drop it with the session.
        if (request.cookies?.[ACCESS_COOKIE] !== undefined) reply.clearCookie(ACCESS_COOKIE, { path: '/' });
        return success(request, reply, 200, MESSAGES.LOGOUT_OK);
      },
    );

    app.get(
      '/profile',
      {
        schema: { tags: ['auth'], summary: 'The signed-in user', security: SECURED, response: { 200: Envelope(Profile), ...errors } },
        preHandler: guards.requireAuth,
      },
      async (request, reply) => {
        const user = await users.findWithHakAkses(request.auth!.userId);
        if (!user) throw new AppError('TOKEN_INVALID');
        return success(request, reply, 200, MESSAGES.PROFILE_OK, {
          ...user,
          hak_akses: { id: user.hak_akses_id, nama: user.hak_akses_nama },
        });
      },
    );

    app.put(
      '/change-password',
      {
        schema: {
          tags: ['auth'],
          summary: 'Change own password (ends every session)',
          security: SECURED,
          body: ChangePasswordBody,
          response: { 200: Envelope(), ...errors },
        },
        preHandler: guards.requireAuth,
      },
      async (request, reply) => {
        const { kata_sandi_lama, kata_sandi, konfirmasi_kata_sandi } = request.body;
        await auth.changePassword(request.auth!, kata_sandi_lama, kata_sandi, konfirmasi_kata_sandi, clientOf(request));
        return success(request, reply, 200, MESSAGES.PASSWORD_CHANGED);
      },
    );

    app.post(
      '/change-expired-password',
      {
        schema: {
          tags: ['auth'],
          summary: 'Change an expired password with the old one (no token needed)',
          body: ChangeExpiredPasswordBody,
          response: { 200: Envelope(), ...errors },
        },
      },
      async (request, reply) => {
        const { no_pegawai, kata_sandi_lama, kata_sandi, konfirmasi_kata_sandi, code } = request.body;
        await auth.changeExpiredPassword(no_pegawai, kata_sandi_lama, kata_sandi, konfirmasi_kata_sandi, clientOf(request), code);
        return success(request, reply, 200, MESSAGES.PASSWORD_CHANGED);
      },
    );

    app.post(
      '/refresh',
      {
        schema: {
          tags: ['auth'],
          summary: 'A new token for a still-valid one',
          security: SECURED,
          response: { 200: Envelope(TokenData), ...errors },
        },
        preHandler: guards.requireAuth,
      },
      async (request, reply) => {
        const token = await auth.refresh(request.auth!, clientOf(request));
        return success(request, reply, 200, MESSAGES.TOKEN_REFRESHED, { token: token.wrapped });
      },
    );
  };
}
