import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { AppError } from '../../../shared/errors/app-error.js';
import type { UsersRepository } from '../users/users.repository.js';
import { unwrapToken } from './token-wrapping.js';
import type { AuthContext, GatewayTokens } from './tokens.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by `requireAuth` on protected routes. */
    auth: AuthContext | null;
  }
}

/** Where a request's token comes from; the SSO module adds the cookie source. */
export type TokenSource = (request: FastifyRequest) => string | undefined;

export const authorizationHeaderSource: TokenSource = (request) => request.headers.authorization;

/** The caller as the request context and audit trail see them. */
export function clientOf(request: FastifyRequest) {
  return { ip: request.ip, userAgent: request.headers['user-agent'], requestId: request.id };
}

export function authGuards(tokens: GatewayTokens, users: UsersRepository, sources: TokenSource[] = [authorizationHeaderSource]) {
  /** 401 unless the request carries a valid token of a live session. */
  const requireAuth: preHandlerAsyncHookHandler = async function (request: FastifyRequest) {
    let raw: string | undefined;
    for (const source of sources) {
      raw = source(request);
      if (raw) break;
    }
    if (!raw) throw new AppError('TOKEN_MISSING');
    const jwt = unwrapToken(raw);
    const auth = jwt ? await tokens.authenticate(jwt) : undefined;
    if (!auth) throw new AppError('TOKEN_INVALID');
    request.auth = auth;
  };

  /** 403 unless the caller's access right is an administrator right (read fresh, so demotion is immediate). */
  const requireAdmin: preHandlerAsyncHookHandler = async function (this: unknown, request: FastifyRequest, reply: FastifyReply) {
    await requireAuth.call(this as never, request, reply);
    const user = await users.findWithHakAkses(request.auth!.userId);
    if (!user) throw new AppError('TOKEN_INVALID');
    if (user.is_admin !== 1) throw new AppError('FORBIDDEN');
  };

  return { requireAuth, requireAdmin };
}
