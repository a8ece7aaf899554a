import type { IncomingHttpHeaders } from 'node:http';
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

/**
 * What a token check reads of a request. A FastifyRequest is one; the proxy, which takes its
 * requests before Fastify does, builds its own.
 */
export interface TokenRequest {
  readonly method: string;
  readonly headers: IncomingHttpHeaders;
  readonly cookies: Readonly<Record<string, string | undefined>>;
  readonly protocol: string;
  readonly host: string;
}

/** Where a request's token comes from; the SSO module adds the cookie source. */
export type TokenSource = (request: TokenRequest) => string | undefined;

export const authorizationHeaderSource: TokenSource = (request) => request.headers.authorization;

/** The caller as the request context and audit trail see them. */
export function clientOf(request: FastifyRequest) {
  return { ip: request.ip, userAgent: request.headers['user-agent'], requestId: request.id };
}

/** The token values whose JWT `authenticateCached` remembers: at most this many, then it starts over. */
const RECENT_LIMIT = 10_000;
/** How many trailing characters of a token value find it among those remembered. */
const RECENT_KEY_LENGTH = 48;

export function authGuards(tokens: GatewayTokens, users: UsersRepository, sources: TokenSource[] = [authorizationHeaderSource]) {
  /** Token values seen (by their last characters) and the JWT inside each: no secret beyond what the verifier's cache holds. */
  const recentTokens = new Map<string, { raw: string; jwt: string }>();

  const tokenOf = (request: TokenRequest): string | undefined => {
    for (const source of sources) {
      const raw = source(request);
      if (raw) return raw;
    }
    return undefined;
  };

  /** The caller's session, or 401 unless the request carries a valid token of a live session. */
  const authenticate = async (request: TokenRequest): Promise<AuthContext> => {
    const raw = tokenOf(request);
    if (!raw) throw new AppError('TOKEN_MISSING');
    const jwt = unwrapToken(raw);
    const auth = jwt ? await tokens.authenticate(jwt) : undefined;
    if (!auth) throw new AppError('TOKEN_INVALID');
    return auth;
  };

  const requireAuth: preHandlerAsyncHookHandler = async function (request: FastifyRequest) {
    request.auth = await authenticate(request);
  };

  /** 403 unless the caller's access right is an administrator right (read fresh, so demotion is immediate). */
  const requireAdmin: preHandlerAsyncHookHandler = async function (this: unknown, request: FastifyRequest, reply: FastifyReply) {
    await requireAuth.call(this as never, request, reply);
    const user = await users.findWithHakAkses(request.auth!.userId);
    if (!user) throw new AppError('TOKEN_INVALID');
    if (user.is_admin !== 1) throw new AppError('FORBIDDEN');
  };

  /**
   * The caller's session when the caches answer for it at once (GatewayTokens.authenticateCached);
   * undefined otherwise, and then `authenticate` decides. The proxy's hot path: no promise and no
   * wait for the common case of a client sending the same token again.
   */
  const authenticateCached = (request: TokenRequest): AuthContext | undefined => {
    const raw = tokenOf(request);
    if (!raw) return undefined;
    // Unwrapping (two regular expressions over ~600 characters) and hashing a fresh ~600-character
    // string for the verifier's map cost more than the rest of the check. A value seen before is
    // found by its last characters (random: the signature and the wrapping) and compared whole,
    // so only the very same value gets its JWT back; the JWT kept is the string the maps have hashed.
    const key = raw.length > RECENT_KEY_LENGTH ? raw.slice(-RECENT_KEY_LENGTH) : raw;
    const seen = recentTokens.get(key);
    let jwt: string | undefined;
    if (seen !== undefined && seen.raw === raw) jwt = seen.jwt;
    else {
      jwt = unwrapToken(raw);
      if (!jwt) return undefined;
      if (recentTokens.size >= RECENT_LIMIT) recentTokens.clear();
      recentTokens.set(key, { raw, jwt });
    }
    return tokens.authenticateCached(jwt);
  };

  return { authenticate, authenticateCached, requireAuth, requireAdmin };
}
