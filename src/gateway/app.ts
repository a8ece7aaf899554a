import cluster from 'node:cluster';
import type { IncomingMessage, ServerResponse } from 'node:http';
import swagger from '@fastify/swagger';
import cookie from '@fastify/cookie';
import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import { SIGNING_KEYS_REFRESH_MS, SigningKeyRing } from '../shared/auth/signing-keys.js';
import { openDatabase, type Database } from '../shared/db/database.js';
import { migrateToLatest } from '../shared/db/migrator.js';
import { Lifecycle } from '../shared/lifecycle.js';
import { installErrorHandling } from '../shared/errors/handler.js';
import { gatewayErrorOf } from './http/storage-errors.js';
import { createServer, frontThenFastify } from '../shared/http/create-server.js';
import { pino } from 'pino';
import { plainLogger } from '../shared/http/logger.js';
import { registerHealthRoutes } from '../shared/http/health.js';
import { InFlightRequests } from '../shared/http/drain.js';
import { Readiness, shownReasons } from '../shared/http/readiness.js';
import { sql } from 'kysely';
import type { GatewayConfig } from './config.js';
import { gatewayMigrations } from './db/migrations/index.js';
import type { GatewaySchema } from './db/schema.js';
import { renderErrorEnvelope } from './http/envelope.js';
import { HakAksesRepository } from './modules/access-rights/hak-akses.repository.js';
import { hakAksesRoutes } from './modules/access-rights/hak-akses.routes.js';
import { AuditRepository } from './modules/audit/audit.repository.js';
import { authRoutes } from './modules/auth/auth.routes.js';
import { AuthService, gatewayLoginLockout } from './modules/auth/auth.service.js';
import { ownSessionsRoutes, userSessionsRoutes } from './modules/auth/sessions.routes.js';
import { SessionsService } from './modules/auth/sessions.service.js';
import { MfaRepository } from './modules/mfa/mfa.repository.js';
import { mfaRoutes, userMfaRoutes } from './modules/mfa/mfa.routes.js';
import { MfaService } from './modules/mfa/mfa.service.js';
import { authGuards, authorizationHeaderSource } from './modules/auth/authenticate.js';
import { CachingSessionsRepository, type SessionAnnouncer } from './modules/auth/session-cache.js';
import { announceEndedSessions, listenToOtherInstances, sessionCacheDegradedGauge } from './modules/auth/session-notify.js';
import { GatewayTokens } from './modules/auth/tokens.js';
import { ProviderKeys } from './modules/sso/provider-keys.js';
import { cookieTokenSource } from './modules/sso/sso-cookies.js';
import { SsoRepository } from './modules/sso/sso.repository.js';
import { ssoRoutes } from './modules/sso/sso.routes.js';
import { SsoService } from './modules/sso/sso.service.js';
import { UsersRepository } from './modules/users/users.repository.js';
import { usersRoutes } from './modules/users/users.routes.js';
import { UsersService } from './modules/users/users.service.js';
import {
  createGatewayTelemetry,
  registerTelemetryMetrics,
  watchFastifyRequests,
  type GatewayTelemetry,
} from './modules/telemetry/telemetry.js';
import { ensureFirstAdmin } from './seed.js';
import { CircuitBreaker } from './modules/proxy/circuit-breaker.js';
import { metricsRoutes } from '../shared/http/metrics-route.js';
import { measureRoutes, readinessGauge } from '../shared/http/route-metrics.js';
import { collectRuntimeMetrics } from '../shared/http/runtime-metrics.js';
import { ProxyMetrics } from './modules/proxy/proxy.metrics.js';
import { createProxyHandler } from './modules/proxy/proxy-handler.js';
import { accessLine } from './modules/proxy/access-line.js';
import { SERVICES } from './modules/proxy/services.js';
import { Upstream } from './modules/proxy/upstream.js';
import { docsRoutes } from './modules/docs/docs.routes.js';
import { DocsService } from './modules/docs/docs.service.js';
import { WorkerSiblings } from './workers/siblings.js';

export interface GatewayOptions {
  config: GatewayConfig;
  /** Injected clock (milliseconds), for tests of expiry. */
  now?: () => number;
  /** Where log lines go (default stdout); tests read them. */
  logStream?: NodeJS.WritableStream;
}

export interface Gateway {
  app: FastifyInstance;
  database: Database<GatewaySchema>;
  audit: AuditRepository;
  telemetry: GatewayTelemetry;
  /** The session store of the token check (with its cache). */
  sessions: CachingSessionsRepository;
  /** What the server does with a request: the proxy takes its own, Fastify the rest (tests inject here). */
  handle(req: IncomingMessage, res: ServerResponse): void;
  /** Reasons not to get traffic (`/readyz`): `draining` during a stop. */
  readiness: Readiness;
  /** The requests being answered, for the drain at shutdown. */
  inFlight: InFlightRequests;
}

/** Probes and scrapes are not traffic worth shipping or measuring. */
const UNWATCHED_ROUTES = new Set(['/healthz', '/readyz', '/metrics']);

/** Builds the gateway: database, then every module registered explicitly with its prefix. */
export async function buildGateway({ config, now = Date.now, logStream }: GatewayOptions): Promise<Gateway> {
  const database = await openDatabase<GatewaySchema>(config.databaseUrl);
  try {
    // Each migration logs its name and time (the server's logger does not exist yet: same level and destination).
    await migrateToLatest(database.db, gatewayMigrations, 'gateway', { log: plainLogger(config.logLevel, logStream) });
  } catch (error) {
    await database.close();
    throw error;
  }
  const { db } = database;

  // Repositories and services
  const audit = new AuditRepository(db, now);
  const usersRepository = new UsersRepository(db, database.dialect);
  const hakAkses = new HakAksesRepository(db);
  // One of several workers (GATEWAY_WORKERS): ended sessions and metrics are shared through the primary.
  const proxyMetrics = new ProxyMetrics();
  // The process and Node runtime series (CPU, memory, event loop lag, GC, handles), beside the proxy's.
  collectRuntimeMetrics(proxyMetrics.registry);
  const siblings = cluster.isWorker ? new WorkerSiblings(proxyMetrics.registry) : undefined;
  const sessionAnnouncers: SessionAnnouncer[] = [];
  if (config.sessionCacheMs > 0 && database.dialect === 'postgres') sessionAnnouncers.push(announceEndedSessions);
  if (config.sessionCacheMs > 0 && siblings) sessionAnnouncers.push((_db, ids) => siblings.announceEndedSessions(ids));
  const sessions = new CachingSessionsRepository({ db, ttlMs: config.sessionCacheMs, now, announcers: sessionAnnouncers });
  siblings?.whenSessionsEnd((ids) => sessions.endedElsewhere(ids));
  // Read again on rotation, so that it needs no restart (docs/operations.md, "Passwords and keys").
  const signingKeys = await SigningKeyRing.open(db, 'gateway_signing_keys', { now });
  const tokens = new GatewayTokens({ keys: signingKeys, config: config.token, sessions, now });
  // Wrong passwords and wrong second-factor codes count against the same lockout.
  const lockout = gatewayLoginLockout({ db, config, users: usersRepository, audit, now });
  const mfaRepository = new MfaRepository(db);
  const mfa = new MfaService({ db, mfa: mfaRepository, audit, lockout, issuer: config.mfaIssuer, now });
  const auth = new AuthService({ db, config, users: usersRepository, sessions, tokens, audit, lockout, mfa, now });
  const sessionsService = new SessionsService({ sessions, audit, now });
  const users = new UsersService({ db, users: usersRepository, hakAkses, sessions, auth, audit, now });
  const sso = new SsoService({
    config: config.sso,
    keys: config.sso && new ProviderKeys(config.sso.issuer, now),
    db,
    sso: new SsoRepository(db),
    users: usersRepository,
    usersService: users,
    auth,
    audit,
    now,
    limits: config.loginLimits,
  });
  // The Authorization header wins; the SSO cookie counts only without one (CSRF-checked).
  const guards = authGuards(tokens, usersRepository, [authorizationHeaderSource, cookieTokenSource(config.corsOrigins)]);

  // The gateway watched: access logs, audit events and traces go to the logs service when configured.
  // The proxy and telemetry log through their own logger: they exist before the Fastify app.
  const log = plainLogger(config.logLevel, logStream) ?? pino({ level: 'silent' });
  const telemetry = createGatewayTelemetry(config.telemetry, log);
  audit.onRecord((row) => telemetry.audit(row));

  // Proxied services (spec 4.4): the proxy sees every request first and takes those of the proxied services.
  const upstreams = new Map<string, Upstream>();
  for (const service of SERVICES) {
    const upstream = config.proxy.upstreams[service.key];
    if (!upstream) continue;
    const breaker = new CircuitBreaker(config.proxy.breakerThreshold, config.proxy.breakerCooldownMs, now);
    upstreams.set(
      service.key,
      new Upstream({
        config: upstream,
        connections: config.proxy.connections,
        retries: config.proxy.retries,
        breaker,
        caCertificates: config.proxy.caCertificates,
      }),
    );
  }
  let closing = false;
  const proxy = createProxyHandler({
    config: config.proxy,
    upstreams,
    authenticate: guards.authenticate,
    authenticateCached: guards.authenticateCached,
    metrics: proxyMetrics,
    trustProxy: config.trustProxy,
    corsOrigins: config.corsOrigins,
    accessLog: accessLine(config.logLevel, logStream),
    log,
    telemetry,
    closing: () => closing,
  });
  const readiness = new Readiness();
  const inFlight = new InFlightRequests();
  const app = createServer({
    logLevel: config.logLevel,
    bodyLimit: config.bodyLimit,
    trustProxy: config.trustProxy,
    logStream,
    requestTimeoutMs: config.requestTimeoutMs,
    front: proxy,
    inFlight,
    // Node's parser refusals carry no language preference: the envelope in the default language.
    renderClientError: (error) => renderErrorEnvelope(error, { headers: {} }),
  });
  app.decorateRequest('auth', null);
  installErrorHandling(app, renderErrorEnvelope, 'ROUTE_NOT_FOUND', gatewayErrorOf);

  if (telemetry.enabled) watchFastifyRequests(app, telemetry, UNWATCHED_ROUTES);
  // Its own routes (login, users, SSO, docs) by route pattern; proxied requests have their own series.
  measureRoutes(app, { registry: proxyMetrics.registry, prefix: 'gateway', unmeasured: UNWATCHED_ROUTES });
  await app.register(cookie);
  if (config.corsOrigins.length > 0) await app.register(cors, { origin: [...config.corsOrigins], credentials: true, maxAge: 600 });
  await app.register(swagger, {
    openapi: {
      info: {
        title: 'Gerbang gateway',
        version: '1.0.0',
        description: 'Authentication, user management and the platform services behind one entry point.',
      },
      components: {
        securitySchemes: {
          gatewayToken: {
            type: 'apiKey',
            in: 'header',
            name: 'Authorization',
            description: 'The wrapped token from login (also accepted: Bearer <jwt>)',
          },
          mfaEnrolmentToken: {
            type: 'apiKey',
            in: 'header',
            name: 'Authorization',
            description: 'The enrolment-only token of an MFA_ENROLMENT_REQUIRED login answer (mfae_…): opens the enrolment routes only',
          },
          ssoCookie: {
            type: 'apiKey',
            in: 'cookie',
            name: 'access_token',
            description:
              "Set by SSO login; used only without an Authorization header, and state-changing requests must come from the gateway's own origin or a GATEWAY_CORS_ORIGINS origin",
          },
        },
      },
    },
  });

  registerHealthRoutes(app, {
    readiness,
    ready: async () => void (await sql`select 1`.execute(db)),
    render: (healthy, reasons, _request, reply) => ({
      code: reply.statusCode,
      status: healthy,
      message: healthy ? 'ok' : 'not ready',
      data: { status: healthy ? 'ok' : 'unavailable', ...(reasons.length > 0 ? { reasons: shownReasons(reasons) } : {}) },
    }),
  });
  readinessGauge(app, proxyMetrics.registry, 'gateway');
  sessionCacheDegradedGauge(proxyMetrics.registry, sessions);
  app.get(
    '/.well-known/jwks.json',
    { schema: { tags: ['auth'], summary: 'Public keys that verify gateway tokens' } },
    async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=300');
      return tokens.publicJwks;
    },
  );
  await app.register(authRoutes({ auth, users: usersRepository, guards }), { prefix: '/api/v1/auth' });
  await app.register(mfaRoutes({ mfa, auth, users: usersRepository, guards }), { prefix: '/api/v1/auth/mfa' });
  await app.register(ownSessionsRoutes({ sessions: sessionsService, users: usersRepository, guards }), { prefix: '/api/v1/auth/sessions' });
  await app.register(usersRoutes({ users, usersRepository, guards, sso }), { prefix: '/api/v1/pengguna' });
  await app.register(userMfaRoutes({ mfa, users: usersRepository, guards }), { prefix: '/api/v1/pengguna' });
  await app.register(userSessionsRoutes({ sessions: sessionsService, users: usersRepository, guards }), { prefix: '/api/v1/pengguna' });
  await app.register(hakAksesRoutes({ hakAkses, guards }), { prefix: '/api/v1/hak-akses' });
  await app.register(ssoRoutes({ sso }), { prefix: '/auth' });

  // The proxied services' merged documentation and the proxy's metrics
  registerTelemetryMetrics(proxyMetrics.registry, telemetry);
  app.addHook('preClose', async () => void (closing = true));
  // What closes with the app, in this order (shared/lifecycle.ts): the last telemetry goes out
  // first, the database closes last.
  const lifecycle = new Lifecycle(app, app.log);
  lifecycle.add('telemetry', () => telemetry.close());
  if (siblings) lifecycle.add('worker metrics', () => siblings.close());
  lifecycle.add('upstream pools', async () => void (await Promise.all([...upstreams.values()].map((upstream) => upstream.close()))));
  await app.register(
    metricsRoutes(siblings ? () => siblings.clusterMetrics() : () => proxyMetrics.registry.metrics(), config.proxy.metricsToken),
  );
  const docs = new DocsService(upstreams, config.proxy.docsRefreshMs, now);
  await app.register(docsRoutes({ docs, ownDocument: () => app.swagger() }));

  // Rotations this instance was not told of (its listener was away; SQLite has none) within a minute.
  lifecycle.every({ name: 'signing key refresh', intervalMs: SIGNING_KEYS_REFRESH_MS, run: () => signingKeys.reload() });
  // Challenges and enrolment tokens nobody used: refused once expired, deleted here.
  lifecycle.every({
    name: 'expired MFA challenges',
    intervalMs: 10 * 60_000,
    run: async () => void (await mfaRepository.deleteExpiredChallenges(new Date(now()).toISOString())),
  });
  if (database.dialect === 'postgres') {
    // Other instances' logouts reach this instance's session cache at once, key rotations its
    // signing keys (docs/proxy.md, docs/scaling.md); reconnects by itself when the connection is lost.
    const listener = await listenToOtherInstances({
      url: config.databaseUrl,
      sessions,
      keys: signingKeys,
      log: app.log,
    });
    lifecycle.add('session notification listener', () => listener.close());
  }
  lifecycle.add('database', () => database.close());
  await ensureFirstAdmin(config, usersRepository, users, app.log);
  lifecycle.start();
  return {
    app,
    database,
    audit,
    telemetry,
    sessions,
    handle: frontThenFastify(proxy, (req, res) => app.routing(req, res)),
    readiness,
    inFlight,
  };
}
