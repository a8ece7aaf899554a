import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler, preHandlerAsyncHookHandler } from 'fastify';
import { RateLimiter } from '../../../shared/auth/rate-limiter.js';
import { AppError } from '../../../shared/errors/app-error.js';
import type { LogsConfig } from '../../config.js';
import type { LogsUsersTable } from '../../db/schema.js';
import { permissionsOfRole, type Permission } from '../rbac/permissions.js';
import type { TenantsRepository } from '../tenants/tenants.repository.js';
import type { LogsUsersRepository } from '../users/users.repository.js';
import type { Client } from './client.js';
import type { LoginGuard } from './login-guard.js';
import { keyPermissions, type ApiKeysService } from '../api-keys/api-keys.service.js';
import type { LogsSessionsRepository } from './sessions.repository.js';
import type { LogsTokens } from './tokens.js';

/** The caller of a protected request, read fresh on every request (a removed role takes effect at once). */
export interface LogsAuthContext {
  readonly userId: string;
  readonly username: string;
  readonly email: string;
  /** The tenant the user belongs to. */
  readonly homeTenantId: string;
  /** null for HTTP Basic (ingestion clients have no session). */
  readonly sessionId: string | null;
  readonly roles: readonly string[];
  readonly permissions: ReadonlySet<Permission>;
  /** Set when the request came with an API key: its tenant is fixed, its permissions are the key's. */
  readonly apiKeyId?: string | undefined;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the guards on protected routes. */
    logsAuth: LogsAuthContext | null;
    /** The tenant whose data the request reads or writes: the user's own, or X-Tenant-Id for tenants:manage. */
    tenantId: string;
  }
}

/**
 * A guard carries what it requires, so the OpenAPI document can say it for every route
 * (rbac/route-permissions.ts): the permissions (any one of them suffices), or none for any signed-in user.
 */
export type Guard<H> = H & { readonly permissions: readonly Permission[] };

function guard<H extends object>(handler: H, permissions: readonly Permission[]): Guard<H> {
  return Object.assign(handler, { permissions });
}

/** The caller as the audit trail sees them. */

export type { Client };

export function clientOf(request: FastifyRequest): Client {
  return { ip: request.ip, userAgent: request.headers['user-agent'], requestId: request.id };
}

/** A session's last use is written at most this often. */
const SESSION_TOUCH_EVERY_MS = 60_000;

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

export interface GuardDeps {
  config: LogsConfig;
  apiKeys: ApiKeysService;
  tokens: LogsTokens;
  sessions: LogsSessionsRepository;
  users: LogsUsersRepository;
  tenants: TenantsRepository;
  loginGuard: LoginGuard;
  /** Whether a password alone may stand for the user (no second factor, none required): HTTP Basic's rule. */
  passwordAlone: (userId: string) => Promise<boolean>;
  now: () => number;
}

/**
 * The guards of the logs service: bearer tokens (spec 5.3) or API keys for the API, those or HTTP Basic for
 * ingestion; 401 without valid credentials, 403 without the permission, 429 over the rate limit.
 */
export function logsGuards({ config, apiKeys, tokens, sessions, users, tenants, loginGuard, passwordAlone, now }: GuardDeps) {
  const apiLimiter = new RateLimiter(config.rateLimits.apiPerUser, now);
  const ingestLimiter = new RateLimiter(config.rateLimits.ingestPerTenant, now);
  /**
   * Verified Basic credentials: SHA-256(username NUL password) -> the user and the password hash
   * they were checked against, to spare argon2 per batch. A changed password voids the entry at once.
   */
  const basicCache = new Map<string, { digest: Buffer; userId: string; passwordHash: string; expiresAt: number }>();

  async function contextOf(user: LogsUsersTable | undefined, sessionId: string | null): Promise<LogsAuthContext | undefined> {
    if (!user) return undefined;
    const roles = (await users.rolesOf([user.id])).get(user.id) ?? [];
    const permissions = new Set<Permission>(roles.flatMap((role) => permissionsOfRole(role)));
    return {
      userId: user.id,
      username: user.username,
      email: user.email,
      homeTenantId: user.tenant_id,
      sessionId,
      roles: roles.map((r) => r.name),
      permissions,
    };
  }

  async function fromBearer(token: string): Promise<LogsAuthContext> {
    const claims = token.length <= 16_384 ? await tokens.verify(token) : undefined;
    if (!claims) throw new AppError('LOGS_INVALID_TOKEN');
    const session = await sessions.find(claims.sid);
    const nowIso = new Date(now()).toISOString();
    if (!session || session.revoked_at !== null || session.expires_at <= nowIso || session.user_id !== claims.sub)
      throw new AppError('LOGS_INVALID_TOKEN');
    // "Last used" from the row this check reads anyway: a write at most once a minute per session.
    const touchBefore = new Date(now() - SESSION_TOUCH_EVERY_MS).toISOString();
    if (session.last_used_at === null || session.last_used_at < touchBefore) await sessions.touch(session.id, nowIso, touchBefore);
    const context = await contextOf(await users.findById(claims.sub), claims.sid);
    if (!context) throw new AppError('LOGS_INVALID_TOKEN');
    return context;
  }

  /** `Authorization: ApiKey base64(id:secret)`: the owner, read fresh, with at most the key's permissions. */
  async function fromApiKey(encoded: string, request: FastifyRequest): Promise<LogsAuthContext> {
    const key = await loginGuard.verifyApiKey(encoded, clientOf(request), (value) => apiKeys.verify(value));
    const owner = await contextOf(await users.findById(key.user_id), null);
    // A key for another tenant than its owner's works only while the owner may act there.
    if (!owner || (key.tenant_id !== owner.homeTenantId && !owner.permissions.has('tenants:manage'))) {
      throw new AppError('LOGS_INVALID_CREDENTIALS');
    }
    const permissions = new Set(keyPermissions(key).filter((permission) => owner.permissions.has(permission)));
    return { ...owner, homeTenantId: key.tenant_id, permissions, apiKeyId: key.id };
  }

  async function fromBasic(encoded: string, request: FastifyRequest): Promise<LogsAuthContext> {
    const decoded = Buffer.from(encoded, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    // NUL cannot reach PostgreSQL text; no stored username or password holds one anyway.
    if (colon <= 0 || decoded.includes('\u0000')) throw new AppError('LOGS_INVALID_CREDENTIALS');
    const username = decoded.slice(0, colon);
    const password = decoded.slice(colon + 1);
    const key = username.toLowerCase();
    const digest = sha256(`${username}\u0000${password}`);
    const cached = basicCache.get(key);
    const fresh =
      cached && cached.expiresAt > now() && timingSafeEqual(cached.digest, digest) ? await users.findById(cached.userId) : undefined;
    let user = fresh && fresh.password_hash === cached!.passwordHash ? fresh : undefined;
    if (!user) {
      // A password is one factor: an account with (or required to have) a second one uses an API key.
      user = await loginGuard.verifyBasic(username, password, clientOf(request), (found) => passwordAlone(found.id));
      if (basicCache.size >= 10_000) basicCache.clear();
      basicCache.set(key, { digest, userId: user.id, passwordHash: user.password_hash, expiresAt: now() + config.basicAuthCacheMs });
    }
    const context = await contextOf(user, null);
    if (!context) throw new AppError('LOGS_INVALID_CREDENTIALS');
    return context;
  }

  /**
   * The gateway's shipper key (LOGS_GATEWAY_SHIPPER_KEY) as a bearer credential: compared as SHA-256
   * digests in constant time, it never touches the login counters, so nobody can lock it. It acts as
   * the ingest-only shipper account, read fresh (a role removed takes effect at once).
   */
  const shipperKeyDigest = config.gatewayShipperKey === undefined ? undefined : sha256(config.gatewayShipperKey);
  async function fromShipperKey(token: string): Promise<LogsAuthContext | undefined> {
    if (!shipperKeyDigest || !timingSafeEqual(sha256(token), shipperKeyDigest)) return undefined;
    const context = await contextOf(await users.findByUsername(config.gatewayShipperUsername), null);
    if (!context) throw new AppError('LOGS_INVALID_TOKEN');
    return context;
  }

  /** Chooses the tenant: the user's own unless X-Tenant-Id names another and the user has tenants:manage. */
  async function resolveTenant(request: FastifyRequest, auth: LogsAuthContext): Promise<void> {
    const header = request.headers['x-tenant-id'];
    const wanted = typeof header === 'string' && header.trim() !== '' ? header.trim() : undefined;
    if (wanted === undefined || wanted === auth.homeTenantId) {
      request.tenantId = auth.homeTenantId;
      return;
    }
    if (auth.apiKeyId !== undefined || !auth.permissions.has('tenants:manage')) throw new AppError('LOGS_PERMISSION_DENIED');
    if (!(await tenants.find(wanted))) throw new AppError('LOGS_NOT_FOUND');
    request.tenantId = wanted;
  }

  function limited(limiter: RateLimiter, key: string): void {
    const state = limiter.hit(key);
    if (state.limited) throw new AppError('LOGS_RATE_LIMITED', { headers: { 'retry-after': String(state.retryAfterSeconds) } });
  }

  /** `countApiCall`: ingestion has its own per-tenant limit instead of the per-user API limit. */
  async function bearer(request: FastifyRequest, countApiCall = true): Promise<LogsAuthContext> {
    const header = request.headers.authorization;
    if (!header) throw new AppError('LOGS_MISSING_TOKEN');
    const apiKey = /^apikey\s+(\S+)\s*$/i.exec(header);
    const token = /^bearer\s+(\S+)\s*$/i.exec(header);
    if (!apiKey && !token) throw new AppError('LOGS_MISSING_TOKEN');
    const auth = apiKey ? await fromApiKey(apiKey[1]!, request) : await fromBearer(token![1]!);
    if (countApiCall) limited(apiLimiter, auth.userId);
    request.logsAuth = auth;
    return auth;
  }

  /** Any signed-in user (spec 4.5 `/api/me`). */
  const requireAuth = guard<preHandlerAsyncHookHandler>(async (request) => {
    const auth = await bearer(request);
    request.tenantId = auth.homeTenantId;
  }, []);

  /** Any signed-in user or API key, acting on the chosen tenant: the route decides what each may do. */
  const requireSignedIn = guard<preHandlerAsyncHookHandler>(async (request) => {
    await resolveTenant(request, await bearer(request));
  }, []);

  /** A signed-in user holding the permission, acting on the chosen tenant. */
  function requirePermission(permission: Permission): Guard<preHandlerAsyncHookHandler> {
    return guard<preHandlerAsyncHookHandler>(
      async (request) => {
        const auth = await bearer(request);
        if (!auth.permissions.has(permission)) throw new AppError('LOGS_PERMISSION_DENIED');
        await resolveTenant(request, auth);
      },
      [permission],
    );
  }

  /** A bearer token, the gateway's shipper key or HTTP Basic: what shippers and data sources send. */
  async function anyCredential(request: FastifyRequest, reply: FastifyReply, countApiCall: boolean): Promise<LogsAuthContext> {
    const header = request.headers.authorization;
    const basic = header ? /^basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header) : null;
    if (basic) {
      let auth: LogsAuthContext;
      try {
        auth = await fromBasic(basic[1]!, request);
      } catch (error) {
        reply.header('www-authenticate', 'Basic realm="gerbang-logs", charset="UTF-8"');
        throw error;
      }
      request.logsAuth = auth;
      if (countApiCall) limited(apiLimiter, auth.userId);
      return auth;
    }
    const token = header ? /^bearer\s+(\S+)\s*$/i.exec(header)?.[1] : undefined;
    const shipper = token === undefined ? undefined : await fromShipperKey(token);
    if (shipper) {
      request.logsAuth = shipper;
      return shipper;
    }
    return bearer(request, countApiCall);
  }

  /** Ingestion: any credential of a user with logs:write; rate-limited per tenant. */
  const requireIngest = guard<onRequestAsyncHookHandler>(
    async (request, reply) => {
      const auth = await anyCredential(request, reply, false);
      if (!auth.permissions.has('logs:write')) throw new AppError('LOGS_PERMISSION_DENIED');
      await resolveTenant(request, auth);
      limited(ingestLimiter, request.tenantId);
    },
    ['logs:write'],
  );

  /** Data sources and shippers' probes (the Elasticsearch-compatible API): any credential holding one of the permissions; the per-user API limit. */
  function requireReader(permissions: readonly Permission[]): Guard<onRequestAsyncHookHandler> {
    return guard<onRequestAsyncHookHandler>(async (request, reply) => {
      const auth = await anyCredential(request, reply, true);
      if (!permissions.some((permission) => auth.permissions.has(permission))) throw new AppError('LOGS_PERMISSION_DENIED');
      await resolveTenant(request, auth);
    }, permissions);
  }

  return { requireAuth, requireSignedIn, requirePermission, requireIngest, requireReader };
}

export type LogsGuards = ReturnType<typeof logsGuards>;
