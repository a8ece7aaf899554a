import { ACCESS_COOKIE } from '../auth/access-cookie.js';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../../shared/errors/app-error.js';
import type { TokenRequest, TokenSource } from '../auth/authenticate.js';
import type { SsoConfig } from './sso.config.js';

/** Spec 4.3 / 8: the cookie lives 30 days (the token inside it 24 h). */
export const ACCESS_COOKIE_MAX_AGE_S = 30 * 24 * 60 * 60;
export const NONCE_COOKIE = 'sso_nonce';
/** The nonce is only ever read by the SSO routes. */
const NONCE_COOKIE_PATH = '/auth';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function cookieSecure(request: FastifyRequest, mode: SsoConfig['cookieSecure']): boolean {
  return mode === 'always' || (mode === 'auto' && request.protocol === 'https');
}

export function setAccessCookie(reply: FastifyReply, wrappedToken: string, secure: boolean): void {
  reply.setCookie(ACCESS_COOKIE, wrappedToken, { httpOnly: true, maxAge: ACCESS_COOKIE_MAX_AGE_S, path: '/', sameSite: 'lax', secure });
}

/** A fresh nonce in a short-lived HttpOnly cookie; the client passes the same value to the provider. */
export function issueNonce(reply: FastifyReply, ttlMs: number, secure: boolean): string {
  const nonce = randomBytes(32).toString('base64url');
  reply.setCookie(NONCE_COOKIE, nonce, {
    httpOnly: true,
    maxAge: Math.floor(ttlMs / 1000),
    path: NONCE_COOKIE_PATH,
    sameSite: 'lax',
    secure,
  });
  return nonce;
}

/** The nonce cookie is single-use: cleared by every login attempt that carried it. */
export function takeNonce(request: FastifyRequest, reply: FastifyReply, secure: boolean): string | undefined {
  const nonce = request.cookies[NONCE_COOKIE];
  if (nonce !== undefined) reply.clearCookie(NONCE_COOKIE, { path: NONCE_COOKIE_PATH, httpOnly: true, sameSite: 'lax', secure });
  return nonce;
}

export function nonceMatches(expected: string | undefined, actual: unknown): boolean {
  if (expected === undefined || typeof actual !== 'string') return false;
  const left = Buffer.from(expected);
  const right = Buffer.from(actual);
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * True when a browser sent this request from another site. Browsers send `Origin` on every
 * cross-origin state-changing request (`null` from sandboxed or privacy-stripped contexts, which we
 * refuse), and `Sec-Fetch-Site` on all requests; a request with neither is not a browser's
 * cross-site request.
 */
export function isCrossSite(request: TokenRequest, trustedOrigins: readonly string[]): boolean {
  const origin = request.headers.origin;
  if (origin !== undefined) {
    return origin !== `${request.protocol}://${request.host}` && !trustedOrigins.includes(origin);
  }
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined) return site !== 'same-origin' && site !== 'none';
  return false;
}

/**
 * The `access_token` cookie as a token source, used only when no Authorization header was sent.
 * Browsers attach cookies to requests other sites trigger, so a state-changing request
 * authenticated by the cookie alone must come from the gateway's own origin or a configured CORS
 * origin (403 CSRF_REJECTED otherwise). SameSite=Lax already keeps the cookie off most cross-site
 * subrequests; this check also covers sibling subdomains and older browsers.
 */
export function cookieTokenSource(trustedOrigins: readonly string[]): TokenSource {
  return (request) => {
    const token = request.cookies?.[ACCESS_COOKIE];
    if (!token) return undefined;
    if (!SAFE_METHODS.has(request.method) && isCrossSite(request, trustedOrigins)) throw new AppError('CSRF_REJECTED');
    return token;
  };
}
