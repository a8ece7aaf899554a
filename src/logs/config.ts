import { ConfigError, envReader, readAdminPassword, readServiceBasics, type Env, type ServiceBasics } from '../shared/config/env.js';
import { WebhookAllowList } from './modules/alerts/webhook-address.js';
import { DEFAULT_WRITE_TIMEOUT_MS } from './modules/store/index.js';
import { loadDashboardsConfig, type DashboardsConfig } from './modules/dashboards/dashboards.config.js';
import { isPermission, type Permission } from './modules/rbac/permissions.js';

export interface RateRule {
  readonly limit: number;
  readonly windowMs: number;
}

export interface LogsConfig extends ServiceBasics {
  readonly admin: { readonly username: string; readonly password: string | undefined };
  readonly token: { readonly accessTtlMs: number; readonly refreshTtlMs: number; readonly issuer: string; readonly audience: string };
  /** Largest JSON body of the API routes, in bytes. */
  readonly bodyLimit: number;
  /** Largest ingestion body (after gzip decompression), in bytes. */
  readonly ingestBodyLimit: number;
  /** A gzip ingestion body is refused (413) once it inflates beyond this many times its compressed size. */
  readonly ingestMaxInflateRatio: number;
  /** How long a document's `_id` is remembered so that a retry is stored once (LOGS_INGEST_ID_WINDOW). */
  readonly ingestIdWindowMs: number;
  /** PostgreSQL: how long a statement of a batch's write may wait or run before the batch fails (LOGS_WRITE_TIMEOUT). */
  readonly writeTimeoutMs: number;
  /** When set, GET /metrics needs `Authorization: Bearer <token>` (LOGS_METRICS_TOKEN). */
  readonly metricsToken: string | undefined;
  readonly trustProxy: boolean | number | string;
  /** Longest time to receive a whole request, headers and body (408 beyond): bounds slow clients. */
  readonly requestTimeoutMs: number;
  readonly rateLimits: {
    /** Login attempts per client address. */
    readonly loginPerAddress: RateRule;
    /** Failed logins per username (lockout). */
    readonly loginFailuresPerUsername: RateRule;
    /** Authenticated API calls per user. */
    readonly apiPerUser: RateRule;
    /** Ingestion requests (batches) per tenant. */
    readonly ingestPerTenant: RateRule;
  };
  /** Log retention for tenants without their own setting. */
  readonly retentionDays: number;
  /** The ingest account whose audit-typed records (the gateway's audit events) join the audit trail. */
  readonly gatewayShipperUsername: string;
  /**
   * LOGS_GATEWAY_SHIPPER_KEY: a shared secret that authenticates ingestion as that account, checked
   * in constant time and outside the login lockout (a stranger cannot lock it); undefined = off.
   */
  readonly gatewayShipperKey: string | undefined;
  /** How often the retention sweep runs; 0 = never (tests). */
  readonly retentionIntervalMs: number;
  /** How long a verified HTTP Basic credential of an ingestion client is trusted without argon2 again. */
  readonly basicAuthCacheMs: number;
  /** Alerts (docs/alerts.md): how often due rules are looked for (0 = never), and webhook delivery. */
  readonly alerts: {
    readonly evalIntervalMs: number;
    readonly webhook: {
      readonly timeoutMs: number;
      readonly attempts: number;
      readonly backoffMs: number;
      readonly allowedHosts: readonly string[];
    };
  };
  /** Sites and pipeline status thresholds of the dashboards (docs/dashboards.md). */
  readonly dashboards: DashboardsConfig;
  /** How often the logs service samples its own host's metrics (docs/infra.md); 0 = never. */
  readonly selfMetricsIntervalMs: number;
  /** Least time between two progress lines of a long migration (docs/operations.md, "Upgrade and rollback"). */
  readonly migrationProgressIntervalMs: number;
  /** Log store reads (docs/log-store.md#time-budget): budget of each read, and reads running at once. */
  readonly search: { readonly timeoutMs: number; readonly workers: number };
  /**
   * PostgreSQL hot standbys that answer the log store's reads (LOGS_DATABASE_READ_URL, none by
   * default), the lag past which one is left out and how often lag is measured (docs/scaling.md).
   */
  readonly readReplicas: { readonly urls: readonly string[]; readonly maxLagMs: number; readonly checkIntervalMs: number };
  /**
   * Second factor (docs/logs-api.md "Second factor"): holders of any of these permissions must
   * enrol before they get a session (LOGS_MFA_REQUIRED_PERMISSIONS; `none` = nobody); the issuer
   * an authenticator app shows (LOGS_MFA_ISSUER).
   */
  readonly mfa: { readonly requiredPermissions: readonly Permission[]; readonly issuer: string };
  /** Passkeys (docs/console.md "Passkeys"): the relying party's id and name, and the origins a ceremony may come from. */
  readonly webauthn: { readonly rpId: string; readonly rpName: string; readonly origins: readonly string[] };
}

export function loadLogsConfig(env: Env): LogsConfig {
  const read = envReader(env);
  const adminPassword = readAdminPassword(read, 'LOGS_ADMIN_PASSWORD');
  const accessTtlMs = read.duration('LOGS_ACCESS_TOKEN_TTL', '300s');
  if (accessTtlMs < 1000) throw new ConfigError('LOGS_ACCESS_TOKEN_TTL', 'must be at least 1s');
  const refreshTtlMs = read.duration('LOGS_REFRESH_TOKEN_TTL', '12h');
  if (refreshTtlMs < accessTtlMs) throw new ConfigError('LOGS_REFRESH_TOKEN_TTL', 'must be at least LOGS_ACCESS_TOKEN_TTL');
  const rule = (limitName: string, limit: number, windowName: string, window: string): RateRule => ({
    limit: read.int(limitName, limit, 1, 1_000_000_000),
    windowMs: Math.max(1000, read.duration(windowName, window)),
  });
  const basics = readServiceBasics(env, { port: 'LOGS_PORT', defaultPort: 8081, database: 'LOGS_DATABASE_URL', file: 'logs.sqlite' });
  return Object.freeze({
    ...basics,
    admin: { username: read.string('LOGS_ADMIN_USERNAME', 'admin'), password: adminPassword },
    token: {
      accessTtlMs,
      refreshTtlMs,
      issuer: read.string('LOGS_TOKEN_ISSUER', 'gerbang-logs'),
      audience: read.string('LOGS_TOKEN_AUDIENCE', 'gerbang-logs'),
    },
    bodyLimit: read.int('LOGS_BODY_LIMIT', 1_048_576, 1_024, 1_073_741_824),
    ingestBodyLimit: read.int('LOGS_INGEST_BODY_LIMIT', 16_777_216, 1_024, 1_073_741_824),
    ingestMaxInflateRatio: read.int('LOGS_INGEST_MAX_INFLATE_RATIO', 200, 2, 100_000),
    ingestIdWindowMs: Math.max(60_000, read.duration('LOGS_INGEST_ID_WINDOW', '24h')),
    writeTimeoutMs: writeTimeout(read),
    metricsToken: read.optionalString('LOGS_METRICS_TOKEN'),
    trustProxy: read.trustProxy('LOGS_TRUST_PROXY'),
    requestTimeoutMs: read.duration('LOGS_REQUEST_TIMEOUT', '120s'),
    rateLimits: {
      loginPerAddress: rule('LOGS_LOGIN_RATE_PER_ADDRESS', 30, 'LOGS_LOGIN_RATE_WINDOW', '1m'),
      loginFailuresPerUsername: rule('LOGS_LOGIN_MAX_FAILURES_PER_USERNAME', 5, 'LOGS_LOGIN_LOCKOUT_WINDOW', '15m'),
      apiPerUser: rule('LOGS_API_RATE_PER_USER', 1200, 'LOGS_API_RATE_WINDOW', '1m'),
      ingestPerTenant: rule('LOGS_INGEST_RATE_PER_TENANT', 12_000, 'LOGS_INGEST_RATE_WINDOW', '1m'),
    },
    retentionDays: read.int('LOGS_RETENTION_DAYS', 30, 1, 36_500),
    gatewayShipperUsername: read.string('LOGS_GATEWAY_SHIPPER', 'gateway'),
    gatewayShipperKey: shipperKey(read),
    retentionIntervalMs: read.duration('LOGS_RETENTION_INTERVAL', '1h'),
    basicAuthCacheMs: read.duration('LOGS_BASIC_AUTH_CACHE_TTL', '60s'),
    alerts: alertsConfig(read),
    dashboards: loadDashboardsConfig(env),
    selfMetricsIntervalMs: read.duration('LOGS_SELF_METRICS_INTERVAL', '30s'),
    migrationProgressIntervalMs: read.duration('LOGS_MIGRATION_PROGRESS_INTERVAL', '10s'),
    search: searchConfig(read),
    readReplicas: readReplicasConfig(read, basics.databaseUrl),
    mfa: mfaConfig(read),
    webauthn: webauthnConfig(read, basics.port),
  });
}

const DEFAULT_MFA_REQUIRED: readonly Permission[] = ['users:manage', 'roles:manage', 'tenants:manage'];

function mfaConfig(read: ReturnType<typeof envReader>): LogsConfig['mfa'] {
  const name = 'LOGS_MFA_REQUIRED_PERMISSIONS';
  const listed = read.list(name);
  let requiredPermissions: readonly Permission[] = DEFAULT_MFA_REQUIRED;
  if (listed.length === 1 && listed[0]!.toLowerCase() === 'none') requiredPermissions = [];
  else if (listed.length > 0) {
    const unknown = listed.filter((permission) => !isPermission(permission));
    if (unknown.length > 0) throw new ConfigError(name, `names no permission: ${unknown.join(', ')} (or write none)`);
    requiredPermissions = listed as Permission[];
  }
  return { requiredPermissions, issuer: read.string('LOGS_MFA_ISSUER', 'Gerbang Logs') };
}

function webauthnConfig(read: ReturnType<typeof envReader>, port: number): LogsConfig['webauthn'] {
  const rpId = read.string('LOGS_WEBAUTHN_RP_ID', 'localhost').toLowerCase();
  if (!/^[a-z0-9.-]+$/.test(rpId) || /^[\d.]+$/.test(rpId)) {
    throw new ConfigError('LOGS_WEBAUTHN_RP_ID', "must be a domain name (the console's host or a parent of it), not an address");
  }
  const listed = read.list('LOGS_WEBAUTHN_ORIGIN');
  const origins = listed.length > 0 ? listed : [rpId === 'localhost' ? `http://localhost:${port}` : `https://${rpId}`];
  for (const origin of origins) {
    let host: string;
    try {
      const url = new URL(origin);
      if (url.origin !== origin || !/^https?:$/.test(url.protocol)) throw new Error('not an origin');
      host = url.hostname;
    } catch {
      throw new ConfigError('LOGS_WEBAUTHN_ORIGIN', `must be origins (scheme://host[:port]) separated by commas, got "${origin}"`);
    }
    if (host !== rpId && !host.endsWith(`.${rpId}`)) {
      throw new ConfigError('LOGS_WEBAUTHN_ORIGIN', `${origin} is not on LOGS_WEBAUTHN_RP_ID (${rpId}) or a subdomain of it`);
    }
  }
  return { rpId, rpName: read.string('LOGS_WEBAUTHN_RP_NAME', 'Gerbang Logs'), origins };
}

/** At most this many read replicas (a typo'd list is refused rather than opening hundreds of pools). */
const MAX_READ_REPLICAS = 16;

function readReplicasConfig(read: ReturnType<typeof envReader>, databaseUrl: string): LogsConfig['readReplicas'] {
  const name = 'LOGS_DATABASE_READ_URL';
  const urls = read.list(name);
  // The values are never repeated in an error: a database URL may hold a password.
  if (urls.length > 0 && databaseUrl.startsWith('sqlite:')) {
    throw new ConfigError(name, 'needs LOGS_DATABASE_URL on PostgreSQL: SQLite has no read replicas (unset it)');
  }
  if (urls.length > MAX_READ_REPLICAS) throw new ConfigError(name, `may list at most ${MAX_READ_REPLICAS} URLs, got ${urls.length}`);
  urls.forEach((url, index) => {
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      parsed = undefined;
    }
    if (parsed === undefined || !/^postgres(ql)?:$/.test(parsed.protocol) || parsed.hostname === '') {
      throw new ConfigError(
        name,
        `must be postgres:// URLs separated by commas; URL ${index + 1} of ${urls.length} is not one (the value is not shown: it may hold a password)`,
      );
    }
  });
  const maxLagMs = read.duration('LOGS_READ_REPLICA_MAX_LAG', '10s');
  if (maxLagMs < 100) throw new ConfigError('LOGS_READ_REPLICA_MAX_LAG', 'must be at least 100ms');
  const checkIntervalMs = read.duration('LOGS_READ_REPLICA_CHECK_INTERVAL', '2s');
  if (checkIntervalMs < 10 || checkIntervalMs > 60_000)
    throw new ConfigError('LOGS_READ_REPLICA_CHECK_INTERVAL', 'must be from 10ms to 1m');
  return { urls, maxLagMs, checkIntervalMs };
}

function writeTimeout(read: ReturnType<typeof envReader>): number {
  const timeoutMs = read.duration('LOGS_WRITE_TIMEOUT', `${DEFAULT_WRITE_TIMEOUT_MS}ms`);
  // 0 would turn PostgreSQL's statement_timeout off: the stall this bounds.
  if (timeoutMs < 100) throw new ConfigError('LOGS_WRITE_TIMEOUT', 'must be at least 100ms');
  return timeoutMs;
}

function searchConfig(read: ReturnType<typeof envReader>): LogsConfig['search'] {
  const timeoutMs = read.duration('LOGS_SEARCH_TIMEOUT', '30s');
  // 0 would mean "never" elsewhere; here an unbounded search is exactly what the budget prevents.
  if (timeoutMs < 1) throw new ConfigError('LOGS_SEARCH_TIMEOUT', 'must be at least 1ms');
  return { timeoutMs, workers: read.int('LOGS_SEARCH_WORKERS', 2, 1, 64) };
}

function alertsConfig(read: ReturnType<typeof envReader>): LogsConfig['alerts'] {
  const timeoutMs = read.duration('LOGS_WEBHOOK_TIMEOUT', '5s');
  if (timeoutMs < 100) throw new ConfigError('LOGS_WEBHOOK_TIMEOUT', 'must be at least 100ms');
  const allowedHosts = read.list('LOGS_WEBHOOK_ALLOWED_HOSTS');
  try {
    new WebhookAllowList(allowedHosts);
  } catch (error) {
    throw new ConfigError('LOGS_WEBHOOK_ALLOWED_HOSTS', (error as Error).message);
  }
  return {
    evalIntervalMs: read.duration('LOGS_ALERTS_EVAL_INTERVAL', '15s'),
    webhook: {
      timeoutMs,
      attempts: read.int('LOGS_WEBHOOK_ATTEMPTS', 3, 1, 10),
      backoffMs: read.duration('LOGS_WEBHOOK_BACKOFF', '1s'),
      allowedHosts,
    },
  };
}

function shipperKey(read: ReturnType<typeof envReader>): string | undefined {
  const key = read.optionalString('LOGS_GATEWAY_SHIPPER_KEY');
  if (key !== undefined && key.length < 32) throw new ConfigError('LOGS_GATEWAY_SHIPPER_KEY', 'must be at least 32 characters');
  return key;
}
