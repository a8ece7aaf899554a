import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Envelope, ErrorEnvelope, success } from '../../http/envelope.js';
import { clientOf } from '../auth/authenticate.js';
import { cookieSecure, issueNonce, setAccessCookie, takeNonce } from './sso-cookies.js';
import { LoginSsoBody, LoginSsoResponse, NonceData } from './sso.schemas.js';
import type { SsoService } from './sso.service.js';

export interface SsoRoutesDeps {
  sso: SsoService;
}

const NONCE_ISSUED = { id: 'Nonce SSO berhasil dibuat', en: 'SSO nonce issued' };
const errors = { 400: ErrorEnvelope, 401: ErrorEnvelope, 503: ErrorEnvelope };

/** Spec 4.3, under /auth (area B). */
export function ssoRoutes({ sso }: SsoRoutesDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/sso-nonce',
      {
        schema: {
          tags: ['sso'],
          summary: 'A nonce for the authorization request, also set in a short-lived HttpOnly cookie',
          response: { 200: Envelope(NonceData), 503: ErrorEnvelope },
        },
      },
      async (request, reply) => {
        const config = sso.requireConfig();
        const nonce = issueNonce(reply, config.nonceTtlMs, cookieSecure(request, config.cookieSecure));
        return success(request, reply, 200, NONCE_ISSUED, { nonce, expires_in: Math.floor(config.nonceTtlMs / 1000) });
      },
    );

    app.post(
      '/login-sso',
      {
        schema: {
          tags: ['sso'],
          summary: 'Exchange an OpenID Connect ID token for a gateway token (body and access_token cookie)',
          body: LoginSsoBody,
          response: { 200: LoginSsoResponse, ...errors },
        },
      },
      async (request, reply) => {
        const config = sso.requireConfig();
        const secure = cookieSecure(request, config.cookieSecure);
        const nonce = takeNonce(request, reply, secure);
        const { id_token, access_token, profile } = request.body;
        const result = await sso.login({ idToken: id_token, accessToken: access_token, profile, nonce }, clientOf(request), request.log);
        setAccessCookie(reply, result.token, secure);
        return result;
      },
    );
  };
}
