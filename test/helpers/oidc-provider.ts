import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from 'jose';
import { Provider } from 'oidc-provider';

/**
 * A real OpenID Provider (`oidc-provider`) on 127.0.0.1 for SSO tests. Tokens are obtained through
 * its authorization code flow (PKCE), driven with fetch through its development login and consent
 * forms: no browser, no stub. Its signing key is generated here, so tests can also forge tokens
 * that a verifier must refuse, against the provider's real discovery document and JWKS.
 */

export const CLIENT_ID = 'gerbang-web';
export const OTHER_CLIENT_ID = 'other-app';
const CLIENT_SECRET = 'test-client-secret-0123456789abcdef';
const REDIRECT_URI = 'http://127.0.0.1:1/callback';
export const PROVIDER_KID = 'provider-rs256';

export interface TestAccount {
  email: string;
  email_verified: boolean;
  name: string;
  employee_number?: string;
  employee_type?: string;
  groups?: string[];
  department?: string;
  position?: string;
}

export interface ProviderTokens {
  id_token: string;
  access_token: string;
}

export interface TestProvider {
  readonly issuer: string;
  /** Accounts by id (= sub); change one to change what the next login's tokens say. */
  readonly accounts: Map<string, TestAccount>;
  /** Runs the authorization code flow for the account and returns the provider's tokens. */
  login(accountId: string, options?: { nonce?: string; clientId?: string }): Promise<ProviderTokens>;
  /** Signs arbitrary claims with the provider's own key (RS256, its kid). */
  forge(claims: JWTPayload, header?: Record<string, unknown>): Promise<string>;
  readonly privateKey: CryptoKey;
  readonly publicJwk: Record<string, unknown>;
  close(): Promise<void>;
}

export async function startTestProvider(options: { idTokenTtlSeconds?: number } = {}): Promise<TestProvider> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const privateJwk = { ...(await exportJWK(privateKey)), kid: PROVIDER_KID, alg: 'RS256', use: 'sig' };
  const publicJwk = { ...(await exportJWK(publicKey)), kid: PROVIDER_KID, alg: 'RS256', use: 'sig' };
  const accounts = new Map<string, TestAccount>();

  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const client = (client_id: string) => ({
    client_id,
    client_secret: CLIENT_SECRET,
    redirect_uris: [REDIRECT_URI],
    grant_types: ['authorization_code'],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
  });
  const provider = new Provider(issuer, {
    clients: [client(CLIENT_ID), client(OTHER_CLIENT_ID)],
    jwks: { keys: [privateJwk] },
    cookies: { keys: [randomBytes(16).toString('hex')] },
    // ID tokens carry the scope's claims (not only userinfo), as most enterprise providers do.
    conformIdTokenClaims: false,
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name', 'employee_number', 'employee_type', 'groups', 'department', 'position'],
    },
    ttl: {
      IdToken: options.idTokenTtlSeconds ?? 3600,
      AccessToken: 3600,
      AuthorizationCode: 60,
      Interaction: 600,
      Session: 600,
      Grant: 600,
    },
    features: { devInteractions: { enabled: true } },
    findAccount: async (_ctx, id) => {
      const account = accounts.get(id);
      if (!account) return undefined;
      return { accountId: id, claims: async () => ({ sub: id, ...accounts.get(id) }) };
    },
  });
  // The dev interactions announce themselves on the console; the tests do not need to hear it.
  provider.on('server_error', (_ctx, error) => process.stderr.write(`[oidc-provider] ${String(error)}\n`));
  server.on('request', provider.callback());

  async function login(
    accountId: string,
    { nonce, clientId = CLIENT_ID }: { nonce?: string; clientId?: string } = {},
  ): Promise<ProviderTokens> {
    const jar = new Map<string, string>();
    const cookieHeader = () => [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
    const remember = (response: Response) => {
      for (const line of response.headers.getSetCookie()) {
        const [pair = ''] = line.split(';');
        const at = pair.indexOf('=');
        jar.set(pair.slice(0, at), pair.slice(at + 1));
      }
    };
    const verifier = randomBytes(32).toString('base64url');
    const authorize = new URL('/auth', issuer);
    authorize.search = new URLSearchParams({
      client_id: clientId,
      response_type: 'code',
      scope: 'openid email profile',
      redirect_uri: REDIRECT_URI,
      state: randomBytes(8).toString('hex'),
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      ...(nonce ? { nonce } : {}),
    }).toString();

    let next: { url: string; init?: RequestInit } = { url: authorize.toString() };
    let code: string | undefined;
    for (let step = 0; step < 12 && !code; step++) {
      const response = await fetch(next.url, {
        ...next.init,
        redirect: 'manual',
        headers: { ...(next.init?.headers as Record<string, string>), cookie: cookieHeader() },
      });
      remember(response);
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && location) {
        await response.arrayBuffer();
        const target = new URL(location, issuer);
        if (target.href.startsWith(REDIRECT_URI)) {
          const error = target.searchParams.get('error');
          if (error) throw new Error(`provider refused: ${error} ${target.searchParams.get('error_description')}`);
          code = target.searchParams.get('code') ?? undefined;
        } else {
          next = { url: target.href };
        }
        continue;
      }
      const html = await response.text();
      if (response.status !== 200) throw new Error(`provider answered ${response.status}: ${html.slice(0, 300)}`);
      // An interaction page: the development login form (any login, any password) or consent.
      const prompt = /name="prompt" value="login"/.test(html) ? 'login' : 'consent';
      const form = new URLSearchParams({ prompt, ...(prompt === 'login' ? { login: accountId, password: 'any' } : {}) });
      next = {
        url: next.url,
        init: { method: 'POST', body: form.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } },
      };
    }
    if (!code) throw new Error('the authorization flow did not reach the redirect');

    const tokenResponse = await fetch(new URL('/token', issuer), {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${clientId}:${CLIENT_SECRET}`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, code_verifier: verifier }).toString(),
    });
    const body = (await tokenResponse.json()) as ProviderTokens & { error?: string };
    if (!tokenResponse.ok || !body.id_token) throw new Error(`token endpoint answered ${tokenResponse.status}: ${body.error}`);
    return { id_token: body.id_token, access_token: body.access_token };
  }

  return {
    issuer,
    accounts,
    login,
    privateKey,
    publicJwk,
    forge: (claims, header = {}) => new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: PROVIDER_KID, ...header }).sign(privateKey),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
