import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { SIGNING_KEYS_REFRESH_MS, SigningKeyRing } from '../shared/auth/signing-keys.js';
import { openDatabase, type Database } from '../shared/db/database.js';
import { migrateToLatest } from '../shared/db/migrator.js';
import { installErrorHandling, toAppError } from '../shared/errors/handler.js';
import { Lifecycle } from '../shared/lifecycle.js';
import { PostgresElection, soleInstance, type Election } from '../shared/leader-election.js';
import { createServer } from '../shared/http/create-server.js';
import { registerHealthRoutes } from '../shared/http/health.js';
import { StorageWatch, storageErrorOf } from './modules/store/storage-watch.js';
import { InFlightRequests } from '../shared/http/drain.js';
import { Readiness, shownReasons } from '../shared/http/readiness.js';
import { plainLogger } from '../shared/http/logger.js';
import { metricsRoutes } from '../shared/http/metrics-route.js';
import { measureRoutes, readinessGauge } from '../shared/http/route-metrics.js';
import { registerSwaggerUi } from '../shared/http/swagger-ui.js';
import { documentPermissions } from './modules/rbac/route-permissions.js';
import { stopReadsWhenClientLeaves } from './http/client-gone.js';
import { databaseBytes, sqliteDirectory } from '../shared/db/database-size.js';
import { LogsMetrics } from './modules/metrics/logs-metrics.js';
import type { LogsConfig } from './config.js';
import { logsMigrations } from './db/migrations/index.js';
import type { LogsSchema } from './db/schema.js';
import { logsErrorBody, queryErrorOf, renderLogsError } from './http/errors.js';
import { AlertEvaluator } from './modules/alerts/alerts.evaluator.js';
import { alertEvaluationJob, alertWebhooksPart } from './modules/alerts/alerts.jobs.js';
import { WebhookNotifier } from './modules/alerts/alerts.notifier.js';
import { AlertsRepository } from './modules/alerts/alerts.repository.js';
import { alertsRoutes } from './modules/alerts/alerts.routes.js';
import { AlertsService } from './modules/alerts/alerts.service.js';
import { ensureIngestAccount } from './modules/users/ingest-account.js';
import { gatewayAuditMirror } from './modules/audit/gateway-audit-mirror.js';
import { LogsAuditRepository } from './modules/audit/audit.repository.js';
import { auditRoutes } from './modules/audit/audit.routes.js';
import { logsAuthRoutes } from './modules/auth/auth.routes.js';
import { LogsAuthService } from './modules/auth/auth.service.js';
import { logsGuards } from './modules/auth/authenticate.js';
import { LoginGuard } from './modules/auth/login-guard.js';
import { LogsSessionsRepository } from './modules/auth/sessions.repository.js';
import { LogsTokens } from './modules/auth/tokens.js';
import { SessionIssuer } from './modules/auth/session-issuer.js';
import { MfaRepository } from './modules/mfa/mfa.repository.js';
import { mfaRoutes } from './modules/mfa/mfa.routes.js';
import { SecondFactor } from './modules/mfa/second-factor.js';
import { sessionsRoutes } from './modules/sessions/sessions.routes.js';
import { PasskeysRepository } from './modules/passkeys/passkeys.repository.js';
import { passkeysRoutes } from './modules/passkeys/passkeys.routes.js';
import { PasskeysService } from './modules/passkeys/passkeys.service.js';
import { SessionsService } from './modules/sessions/sessions.service.js';
import { dashboardsRoutes } from './modules/dashboards/dashboards.routes.js';
import { DashboardsService } from './modules/dashboards/dashboards.service.js';
import { SourceCounts, sourceCountsJob } from './modules/dashboards/source-counts.js';
import { otlpRoutes } from './modules/ingest/ingest.routes.js';
import { elasticRoutes } from './modules/elastic/elastic.routes.js';
import { LogBatches } from './modules/ingest/pipeline.js';
import { logsSignal, metricsSignal, tracesSignal } from './modules/ingest/signals.js';
import { PipelineStats } from './modules/ingest/pipeline-stats.js';
import { RolesRepository } from './modules/roles/roles.repository.js';
import { rolesRoutes } from './modules/roles/roles.routes.js';
import { apiKeysRoutes } from './modules/api-keys/api-keys.routes.js';
import { ApiKeysRepository } from './modules/api-keys/api-keys.repository.js';
import { ApiKeysService } from './modules/api-keys/api-keys.service.js';
import { RolesService } from './modules/roles/roles.service.js';
import { searchRoutes } from './modules/search/search.routes.js';
import { compressJson } from './http/compression.js';
import { SavedSearchesRepository } from './modules/saved-searches/saved-searches.repository.js';
import { savedSearchesRoutes } from './modules/saved-searches/saved-searches.routes.js';
import { SavedSearchesService } from './modules/saved-searches/saved-searches.service.js';
import { createLogStore, openStoreReads, sqliteThreadDialect, writerThreadOf, type StoreReads } from './modules/store/index.js';
import type { LogStore } from './modules/store/log-store.js';
import type { K8sCluster } from './modules/k8s/k8s.cluster.js';
import { k8sRoutes } from './modules/k8s/k8s.routes.js';
import { asPermission, DEFAULT_TENANT_ID } from './modules/rbac/permissions.js';
import { apmRoutes } from './modules/apm/apm.routes.js';
import { SpansRepository } from './modules/apm/spans.repository.js';
import { infraRoutes } from './modules/infra/infra.routes.js';
import { MetricsRepository } from './modules/infra/metrics.repository.js';
import { SelfMetricsSampler, selfMetricsJob } from './modules/infra/self-metrics.js';
import { retentionJob } from './modules/tenants/retention.job.js';
import { TenantsRepository } from './modules/tenants/tenants.repository.js';
import { tenantsRoutes } from './modules/tenants/tenants.routes.js';
import { TenantsService } from './modules/tenants/tenants.service.js';
import { LogsUsersRepository } from './modules/users/users.repository.js';
import { logsUsersRoutes } from './modules/users/users.routes.js';
import { LogsUsersService } from './modules/users/users.service.js';
import { ensureFirstLogsAdmin } from './seed.js';
import { consoleRoutes } from './modules/console/console.routes.js';

/** Probes and the scrape itself are not measured as requests. */
const UNMEASURED_ROUTES = new Set(['/healthz', '/readyz', '/metrics']);

export interface LogsServiceOptions {
  config: LogsConfig;
  /** The service's database, opened already (startLogs: migrated behind the migration gate); default: opened here. */
  database?: Database<LogsSchema>;
  /** Injected clock (milliseconds), for tests of expiry and rate limits. */
  now?: () => number;
  /**
   * The log store, or a factory given the service's opened and migrated database; by default the
   * SQLite or PostgreSQL store (createLogStore) on that database.
   */
  logStore?: LogStore | ((database: Database<LogsSchema>) => LogStore);
  /** The cluster of the Kubernetes views (loadK8sCluster); undefined: they answer 503. */
  k8s?: K8sCluster | undefined;
  /** Active alerts of a tenant by severity, for the dashboards overview; default: the alerts module's activeCountsBySeverity. */
  activeAlertsBySeverity?: (tenantId: string) => Promise<Record<string, number>>;
  /** How often an instance that does not lead tries to (PostgreSQL; default 2 s): tests shorten it. */
  electionRetryMs?: number;
}

export interface LogsService {
  app: FastifyInstance;
  database: Database<LogsSchema>;
  store: LogStore;
  audit: LogsAuditRepository;
  stats: PipelineStats;
  tenants: TenantsService;
  /** Alert rules and alerts; evaluateDue()/evaluateRule(id) for tests, activeCountsBySeverity(tenantId) for the dashboards. */
  alerts: AlertsService;
  /** Webhook deliveries (idle() resolves when none is outstanding). */
  alertNotifier: WebhookNotifier;
  /** APM spans and infrastructure metric points (OTLP traces and metrics). */
  spans: SpansRepository;
  metrics: MetricsRepository;
  /** The sampler of the service's own host (run every LOGS_SELF_METRICS_INTERVAL, unless 0). */
  selfMetrics: SelfMetricsSampler;
  /** Creates (or renews the password of) an ingest-only account, for a co-located shipper. */
  provisionIngestAccount(username: string): Promise<{ username: string; password: string }>;
  /** Reasons not to get traffic (`/readyz`): `draining` during a stop, `storage` while writes cannot be stored. */
  readiness: Readiness;
  /** The requests being answered, for the drain at shutdown. */
  inFlight: InFlightRequests;
  /** Whether this instance runs the once-per-cluster jobs (always on SQLite; docs/log-store.md, "Several instances"). */
  leading(): boolean;
}

/** The logs service's election lock (a bigint: 'logslead'), per database. */
const LEADER_LOCK_KEY = 0x6c6f67736c656164n;

/** Builds the logs service (area C): database, then every module registered explicitly with its prefix. */
export async function buildLogsService({
  config,
  database: opened,
  now = Date.now,
  logStore,
  k8s,
  activeAlertsBySeverity,
  electionRetryMs,
}: LogsServiceOptions): Promise<LogsService> {
  const database = opened ?? (await openDatabase<LogsSchema>(config.databaseUrl, { sqliteThread: sqliteThreadDialect }));
  let store: LogStore;
  let storeReads: StoreReads | undefined;
  try {
    // Each migration logs its name and time (the server's logger does not exist yet: same level and destination).
    await migrateToLatest(database.db, logsMigrations, 'logs', {
      log: plainLogger(config.logLevel),
      progressIntervalMs: config.migrationProgressIntervalMs,
    });
    if (logStore === undefined) {
      // Searches run off the event loop (SQLite) and within LOGS_SEARCH_TIMEOUT (docs/log-store.md#time-budget).
      storeReads = await openStoreReads(config.databaseUrl, database.db, {
        ...config.search,
        replicas: config.readReplicas,
        log: plainLogger(config.logLevel),
      });
      store = createLogStore(database.db, database.dialect, {
        reads: storeReads.db,
        readTimeoutMs: config.search.timeoutMs,
        documentIds: { now, windowMs: config.ingestIdWindowMs },
        writeTimeoutMs: config.writeTimeoutMs,
      });
    } else {
      store = typeof logStore === 'function' ? logStore(database) : logStore;
    }
  } catch (error) {
    await storeReads?.close();
    await database.close();
    throw error;
  }
  const { db } = database;

  // Repositories and services
  const audit = new LogsAuditRepository(db, now);
  const tenantsRepository = new TenantsRepository(db);
  const rolesRepository = new RolesRepository(db);
  const usersRepository = new LogsUsersRepository(db);
  const sessions = new LogsSessionsRepository(db);
  // Read again on a token of a key not known here and every minute, so that a rotation needs no restart.
  const signingKeys = await SigningKeyRing.open(db, 'logs_signing_keys', { now });
  const tokens = new LogsTokens(signingKeys, config.token, now);
  const loginGuard = new LoginGuard({ db, config, users: usersRepository, audit, now });
  const issuer = new SessionIssuer({ db, config, users: usersRepository, sessions, tokens, audit, now });
  const mfa = new MfaRepository(db);
  const secondFactor = new SecondFactor({ config, mfa, users: usersRepository, loginGuard, issuer, audit, now });
  const auth = new LogsAuthService({ db, users: usersRepository, sessions, issuer, secondFactor, loginGuard, audit, now });
  const sessionsService = new SessionsService({ sessions, users: usersRepository, audit, now });
  const passkeys = new PasskeysService({
    config,
    passkeys: new PasskeysRepository(db),
    mfa,
    users: usersRepository,
    loginGuard,
    issuer,
    audit,
    now,
  });
  const users = new LogsUsersService({ db, users: usersRepository, roles: rolesRepository, sessions, audit, now });
  const roles = new RolesService(rolesRepository, audit, now);
  const spans = new SpansRepository(db);
  const metrics = new MetricsRepository(db);
  const tenants = new TenantsService({
    tenants: tenantsRepository,
    data: [store, spans, metrics],
    audit,
    defaultRetentionDays: config.retentionDays,
    now,
  });
  const stats = new PipelineStats(now);
  const readiness = new Readiness();
  // A full disk or read-only data: ingestion answers 503 with Retry-After and /readyz says `storage`.
  const storage = new StorageWatch({ readiness, dataDir: sqliteDirectory(config.databaseUrl), now });
  const alertsRepository = new AlertsRepository(db);
  // Which instance runs the once-per-cluster jobs (below); created with the server's logger.
  let election: Election = soleInstance;
  const serviceMetrics = new LogsMetrics({
    leading: () => election.leading,
    stats,
    storeBytes: () => databaseBytes(db, database.dialect),
    firingAlerts: () => alertsRepository.countBySeverity(undefined, ['firing']),
    dataDirectory: sqliteDirectory(config.databaseUrl),
    readReplicas: () => storeReads?.replicas?.states() ?? [],
  });
  // Background work reports to the server log (created below; only called once running).
  const alertNotifier = new WebhookNotifier({
    settings: config.alerts.webhook,
    alerts: alertsRepository,
    now,
    onError: (error) => app.log.error({ err: error }, 'alert webhook bookkeeping failed'),
    onDeliveryFailure: (details) => app.log.warn(details, 'alert webhook delivery failed'),
    onAttempt: (outcome, attempt) => {
      serviceMetrics.webhookDeliveries.inc({ outcome });
      if (attempt > 1) serviceMetrics.webhookRetries.inc();
    },
  });
  const alertEvaluator = new AlertEvaluator({
    repository: alertsRepository,
    store,
    notifier: alertNotifier,
    audit,
    now,
    onError: (error) => app.log.error({ err: error }, 'alert evaluation failed'),
    onEvaluated: (outcome) => serviceMetrics.alertEvaluations.inc({ outcome }),
  });
  const alerts = new AlertsService({
    repository: alertsRepository,
    evaluator: alertEvaluator,
    audit,
    allowedWebhookHosts: config.alerts.webhook.allowedHosts,
    now,
  });
  // Per-minute counts by ingestion source, persisted for the throughput dashboard.
  const sourceCounts = new SourceCounts(db, database.dialect, (error) =>
    app.log.error({ err: error }, 'writing ingestion source counts failed'),
  );
  stats.onRecord((batch) => sourceCounts.add(batch));
  const selfMetrics = new SelfMetricsSampler({
    write: (tenantId, points) => metrics.insert(tenantId, points),
    tenantId: DEFAULT_TENANT_ID,
    now,
  });
  const savedSearches = new SavedSearchesService({ repository: new SavedSearchesRepository(db), audit, now });
  const apiKeys = new ApiKeysService({ db, keys: new ApiKeysRepository(db), users: usersRepository, audit, now });
  const guards = logsGuards({
    config,
    apiKeys,
    tokens,
    sessions,
    users: usersRepository,
    tenants: tenantsRepository,
    loginGuard,
    passwordAlone: (userId) => secondFactor.passwordAlone(userId),
    now,
  });

  // HTTP
  const inFlight = new InFlightRequests();
  const app = createServer({
    logLevel: config.logLevel,
    bodyLimit: config.bodyLimit,
    trustProxy: config.trustProxy,
    requestTimeoutMs: config.requestTimeoutMs,
    renderClientError: logsErrorBody,
    inFlight,
  });
  app.decorateRequest('logsAuth', null);
  app.decorateRequest('tenantId', '');
  installErrorHandling(
    app,
    renderLogsError,
    'LOGS_NOT_FOUND',
    (error) => queryErrorOf(error) ?? storageErrorOf(error) ?? toAppError(error),
  );
  // Any route's write that meets a full disk or read-only data answers 503 and raises readiness `storage`.
  app.addHook('onError', async (_request, _reply, error) => storage.observe(error));
  // Every guarded route states its permission in the OpenAPI document (before swagger collects the routes).
  app.addHook('onRoute', documentPermissions);
  // A client that leaves stops its reads of the store (client-gone.ts).
  app.addHook('onRoute', stopReadsWhenClientLeaves);
  // JSON answers brotli- or gzip-compressed when the client asks (http/compression.ts).
  app.addHook('onSend', compressJson);
  await app.register(swagger, {
    openapi: {
      info: {
        title: 'Gerbang logs',
        version: '1.0.0',
        description: 'Log monitoring: search, audit, tenants, users and roles, and log ingestion (OTLP, Elasticsearch bulk).',
      },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'The access_token from /api/login' },
          basic: {
            type: 'http',
            scheme: 'basic',
            description: 'Ingestion and the Elasticsearch-compatible API: a user with logs:write or logs:read',
          },
          apiKey: {
            type: 'apiKey',
            in: 'header',
            name: 'Authorization',
            description:
              "`ApiKey <encoded>`, the `encoded` value from POST /api/v1/api-keys (Elasticsearch's convention); every route that takes a bearer token",
          },
        },
      },
    },
  });

  // Request metrics by route (the pattern, never the raw URL) for /metrics; not of the probes themselves.
  measureRoutes(app, { registry: serviceMetrics.registry, prefix: 'logs', unmeasured: UNMEASURED_ROUTES });
  await app.register(metricsRoutes(() => serviceMetrics.registry.metrics(), config.metricsToken));
  // A stopped SQLite thread fails every write until a restart: liveness fails, so the orchestrator restarts.
  const writerThread = writerThreadOf(db);
  registerHealthRoutes(app, {
    readiness,
    alive: () => !writerThread?.stopped(),
    // The event loop's connection reads; the SQLite thread, if there is one, must answer too.
    ready: async () => {
      await storage.recheck();
      await sql`select 1`.execute(db);
      await writerThread?.check();
    },
    render: (healthy, reasons) => ({
      status: healthy ? 'ok' : 'unavailable',
      ...(reasons.length > 0 ? { reasons: shownReasons(reasons) } : {}),
    }),
  });
  readinessGauge(app, serviceMetrics.registry, 'logs');
  await app.register(logsAuthRoutes({ auth, guards }), { prefix: '/api' });
  await app.register(mfaRoutes({ secondFactor, guards }), { prefix: '/api' });
  await app.register(sessionsRoutes({ sessions: sessionsService, guards }), { prefix: '/api' });
  await app.register(passkeysRoutes({ passkeys, guards }), { prefix: '/api' });
  await app.register(tenantsRoutes({ tenants, guards }), { prefix: '/api/tenants' });
  await app.register(logsUsersRoutes({ users, guards }), { prefix: '/api/users' });
  await app.register(rolesRoutes({ roles, guards }), { prefix: '/api/roles' });
  await app.register(apiKeysRoutes({ apiKeys, guards }), { prefix: '/api/v1/api-keys' });
  await app.register(searchRoutes({ store, guards, audit, now }), { prefix: '/api/v1/logs' });
  await app.register(savedSearchesRoutes({ savedSearches, guards }), { prefix: '/api/v1/logs/saved-searches' });
  await app.register(auditRoutes({ audit, guards, now }), { prefix: '/api/v1/log-audit' });
  await app.register(alertsRoutes({ alerts, guards }), { prefix: '/api/v1/alerts' });
  const dashboards = new DashboardsService({
    store,
    stats,
    sourceCounts,
    config: config.dashboards,
    now,
    activeAlertsBySeverity: activeAlertsBySeverity ?? ((tenantId) => alerts.activeCountsBySeverity(tenantId)),
    logError: (error, what) => app.log.error({ err: error }, what),
  });
  await app.register(dashboardsRoutes({ dashboards, guards }), { prefix: '/api/v1/dashboard' });
  await app.register(k8sRoutes({ cluster: k8s, requirePermission: (name) => guards.requirePermission(asPermission(name)) }), {
    prefix: '/api/v1/k8s',
  });
  // Ingestion: one pipeline (ingest/pipeline.ts), a row per OTLP signal (ingest/signals.ts).
  const ingest = { stats, storage, guards, bodyLimit: config.ingestBodyLimit, maxInflateRatio: config.ingestMaxInflateRatio, now };
  // `_bulk` and OTLP logs take their turns in one pipeline to the store's writer.
  const logBatches = new LogBatches();
  const gatewayLogs = {
    store,
    batches: logBatches,
    gatewayUsername: config.gatewayShipperUsername,
    onStored: gatewayAuditMirror(audit, config.gatewayShipperUsername),
  };
  await app.register(otlpRoutes(ingest, [logsSignal(gatewayLogs), tracesSignal(spans), metricsSignal(metrics)]));
  await app.register(elasticRoutes({ ...ingest, store, batches: logBatches }), { prefix: '/api/v1/_elastic' });
  await app.register(apmRoutes({ spans, guards, now }), { prefix: '/api/v1/apm' });
  await app.register(infraRoutes({ metrics, guards, now }), { prefix: '/api/v1/infra' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  await registerSwaggerUi(app, { title: 'Gerbang logs API', specUrl: '/openapi.json' });
  await app.register(consoleRoutes());

  // Background work (shared/lifecycle.ts): it starts in this order once the service is built (below),
  // and closes in the same order with the app: each job after its run in flight, then the read
  // pool, then the database, then the election. On PostgreSQL several instances may share the
  // database: the `elected` jobs run on the one that holds the election's lock; on SQLite there is
  // one instance (the data lock), which always leads. docs/log-store.md, "Several instances".
  if (database.dialect === 'postgres') {
    election = new PostgresElection({
      connectionString: config.databaseUrl,
      lockKey: LEADER_LOCK_KEY,
      name: 'logs leader',
      log: app.log,
      ...(electionRetryMs === undefined ? {} : { retryMs: electionRetryMs }),
    });
  }
  const lifecycle = new Lifecycle(app, app.log, undefined, election);
  // Each instance's own host, so one machine shows infrastructure data without a collector.
  lifecycle.every(selfMetricsJob(selfMetrics, config.selfMetricsIntervalMs));
  // The leader delivers webhooks, first those a stopped process or the last leader left unfinished.
  lifecycle.whileLeading(
    'alert webhooks',
    alertWebhooksPart(alertEvaluator, alertNotifier, (error) => app.log.error({ err: error }, 'resuming alert webhooks failed')),
  );
  lifecycle.every(alertEvaluationJob(alertEvaluator, alertNotifier, config.alerts.evalIntervalMs));
  lifecycle.every(
    retentionJob({
      tenants,
      intervalMs: config.retentionIntervalMs,
      now,
      onRemoved: (tenant, count) => serviceMetrics.retentionRemoved.inc({ tenant }, count),
      log: app.log,
    }),
  );
  // Documents' `_id`s are forgotten once their window has passed (LOGS_INGEST_ID_WINDOW).
  lifecycle.every({ name: 'document id expiry', intervalMs: 600_000, elected: true, run: () => store.forgetDocumentIds(now()) });
  lifecycle.every(
    sourceCountsJob(sourceCounts, { flushMs: config.dashboards.sourceCountsFlushMs, retentionDays: config.retentionDays, now }),
  );
  // A rotation's new key signs here within a minute (tokens of it are accepted at once: SigningKeyRing).
  lifecycle.every({ name: 'signing key refresh', intervalMs: SIGNING_KEYS_REFRESH_MS, run: () => signingKeys.reload() });
  lifecycle.add('store reads', async () => storeReads?.close());
  lifecycle.add('database', () => database.close());

  await ensureFirstLogsAdmin(config, usersRepository, users, app.log);
  // The account the shipper key acts as; its password is renewed and discarded (the key is its only way in).
  if (config.gatewayShipperKey !== undefined) await ensureIngestAccount(usersRepository, config.gatewayShipperUsername, now);

  // The first attempt at the lead before the jobs start: a lone instance leads once built.
  await election.start();
  lifecycle.start();
  return {
    app,
    database,
    store,
    audit,
    stats,
    tenants,
    spans,
    metrics,
    selfMetrics,
    alerts,
    alertNotifier,
    provisionIngestAccount: (username) => ensureIngestAccount(usersRepository, username, now),
    readiness,
    inFlight,
    leading: () => election.leading,
  };
}
