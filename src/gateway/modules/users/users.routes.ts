import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AppError } from '../../../shared/errors/app-error.js';
import { Envelope, ErrorEnvelope, success } from '../../http/envelope.js';
import { MESSAGES } from '../../messages.js';
import { SECURED } from '../auth/auth.schemas.js';
import { clientOf, type authGuards } from '../auth/authenticate.js';
import type { UsersRepository } from './users.repository.js';
import {
  CreateUserBody,
  HakAksesBody,
  IdParams,
  ListQuery,
  ResetPasswordBody,
  UpdateUserBody,
  UserDetail,
  UserListItem,
  UserRef,
} from './users.schemas.js';
import type { SsoService } from '../sso/sso.service.js';
import type { UsersService } from './users.service.js';

export interface UsersRoutesDeps {
  users: UsersService;
  usersRepository: UsersRepository;
  guards: ReturnType<typeof authGuards>;
  sso: Pick<SsoService, 'unlinkIdentities'>;
}

const errors = { 400: ErrorEnvelope, 401: ErrorEnvelope, 403: ErrorEnvelope, 404: ErrorEnvelope };
const tags = ['pengguna'];

/** Spec 4.2, under /api/v1/pengguna. Administrators manage; a user may read their own record. */
export function usersRoutes({ users, usersRepository, guards, sso }: UsersRoutesDeps): FastifyPluginAsyncTypebox {
  const { requireAuth, requireAdmin } = guards;
  return async (app) => {
    app.get(
      '/',
      {
        schema: {
          tags,
          summary: 'List users (administrators)',
          security: SECURED,
          querystring: ListQuery,
          response: { 200: Envelope(Type.Array(UserListItem), true), ...errors },
        },
        preHandler: requireAdmin,
      },
      async (request, reply) => {
        const { rows, info } = await users.list(request.query);
        return success(request, reply, 200, MESSAGES.USERS_LISTED, rows, info);
      },
    );

    app.get(
      '/:id',
      {
        schema: {
          tags,
          summary: 'One user (administrators, or the user themself)',
          security: SECURED,
          params: IdParams,
          response: { 200: Envelope(UserDetail), ...errors },
        },
        preHandler: requireAuth,
      },
      async (request, reply) => {
        if (request.params.id !== request.auth!.userId) {
          const caller = await usersRepository.findWithHakAkses(request.auth!.userId);
          if (caller?.is_admin !== 1) throw new AppError('FORBIDDEN');
        }
        return success(request, reply, 200, MESSAGES.USER_FOUND, await users.get(request.params.id));
      },
    );

    app.post(
      '/',
      {
        schema: {
          tags,
          summary: 'Create a user',
          security: SECURED,
          body: CreateUserBody,
          response: { 201: Envelope(UserRef), ...errors },
        },
        preHandler: requireAdmin,
      },
      async (request, reply) => {
        const auth = request.auth!;
        const user = await users.create(request.body, { id: auth.userId, name: auth.claims.no_pegawai ?? null }, clientOf(request));
        return success(request, reply, 201, MESSAGES.USER_CREATED, { id: user.id, no_pegawai: user.no_pegawai, nama: user.nama });
      },
    );

    app.put(
      '/:id',
      {
        schema: {
          tags,
          summary: 'Update name, e-mail, employee type or access right',
          security: SECURED,
          params: IdParams,
          body: UpdateUserBody,
          response: { 200: Envelope(UserRef), ...errors },
        },
        preHandler: requireAdmin,
      },
      async (request, reply) => {
        const user = await users.update(request.params.id, request.body, request.auth!, clientOf(request));
        return success(request, reply, 200, MESSAGES.USER_UPDATED, user);
      },
    );

    app.delete(
      '/:id',
      {
        schema: {
          tags,
          summary: 'Delete a user (ends their sessions)',
          security: SECURED,
          params: IdParams,
          response: { 200: Envelope(), ...errors },
        },
        preHandler: requireAdmin,
      },
      async (request, reply) => {
        await users.delete(request.params.id, request.auth!, clientOf(request));
        return success(request, reply, 200, MESSAGES.USER_DELETED);
      },
    );

    app.post(
      '/:id/reset-password',
      {
        schema: {
          tags,
          summary: "Set a new password (administrators; ends the user's sessions)",
          security: SECURED,
          params: IdParams,
          body: ResetPasswordBody,
          response: { 200: Envelope(), ...errors },
        },
        preHandler: requireAdmin,
      },
      async (request, reply) => {
        await users.resetPassword(request.params.id, request.body.kata_sandi, request.auth!, clientOf(request));
        return success(request, reply, 200, MESSAGES.PASSWORD_RESET);
      },
    );

    app.delete(
      '/:id/sso',
      {
        schema: {
          tags,
          summary: "Unlink the user's SSO identities (administrators): the next SSO login links or creates an account afresh",
          security: SECURED,
          params: IdParams,
          response: { 200: Envelope(Type.Object({ unlinked: Type.Integer() })), ...errors },
        },
        preHandler: requireAdmin,
      },
      async (request, reply) => {
        const unlinked = await sso.unlinkIdentities(request.params.id, request.auth!, clientOf(request));
        return success(request, reply, 200, MESSAGES.SSO_UNLINKED, { unlinked });
      },
    );

    app.put(
      '/:id/hak-akses',
      {
        schema: {
          tags,
          summary: 'Change the access right',
          security: SECURED,
          params: IdParams,
          body: HakAksesBody,
          response: { 200: Envelope(), ...errors },
        },
        preHandler: requireAdmin,
      },
      async (request, reply) => {
        await users.setHakAkses(request.params.id, request.body.hak_akses_id, request.auth!, clientOf(request));
        return success(request, reply, 200, MESSAGES.HAK_AKSES_UPDATED);
      },
    );
  };
}
