import { availableParallelism } from 'node:os';
import { ConfigError, envReader, readAdminPassword, readServiceBasics, type Env, type ServiceBasics } from '../shared/config/env.js';
import { GATEWAY_SERVICE_NAME } from '../shared/telemetry/gateway-records.js';
import type { TelemetryConfig } from './modules/telemetry/telemetry.js';
import { loadSsoConfig, type SsoConfig } from './modules/sso/sso.config.js';
import { loadProxyConfig, type ProxyConfig } from './modules/proxy/proxy-config.js';

export interface GatewayConfig extends ServiceBasics {
  readonly admin: { readonly noPegawai: string; readonly password: string | undefined };
  readonly token: { readonly ttlMs: number; readonly issuer: string; readonly audience: string };
  /** 0 = passwords never expire. */
  readonly passwordMaxAgeMs: number;
  /** Browser origins allowed by CORS; empty = none. */
  readonly corsOrigins: readonly string[];
  /** Largest JSON body of the gateway's own routes, in bytes. */
  readonly bodyLimit: number;
  /** Longest time to receive a whole request, uploads through the proxy included (408 beyond). */
  readonly requestTimeoutMs: number;
  /** Trust X-Forwarded-* from a proxy in front (Fastify trustProxy: true, a hop count or addresses). */
  readonly trustProxy: boolean | number | string;
  readonly loginLimits: {
    readonly perAccount: number;
    readonly perAddress: number;
    readonly windowMs: number;
  };
  readonly listMaxPerPage: number;
  /** GATEWAY_MFA_REQUIRED_FOR: access rights (hak_akses ids) whose holders must enrol a second factor. */
  readonly mfaRequiredFor: readonly string[];
  /** GATEWAY_MFA_ISSUER: the name authenticator apps show beside the account. */
  readonly mfaIssuer: string;
  /** Shipping of the gateway's access logs, audit events and traces to the logs service. */
  readonly telemetry: TelemetryConfig;
  /** `/auth/login-sso`; undefined when OIDC_ISSUER / OIDC_CLIENT_ID are unset (SSO answers 503). */
  readonly sso: SsoConfig | undefined;
  /** The eight proxied services (spec 4.4), their docs, metrics. */
  readonly proxy: ProxyConfig;
  /** How long a session look-up is reused on this instance (0 = off); see docs/proxy.md. */
  readonly sessionCacheMs: number;
  /** GATEWAY_WORKERS: processes serving the one port under `gerbang gateway` (docs/workers.md). */
  readonly workers: number;
}

const MAX_WORKERS = 64;

export function loadGatewayConfig(env: Env): GatewayConfig {
  const read = envReader(env);
  const adminPassword = readAdminPassword(read, 'GATEWAY_ADMIN_PASSWORD');
  const workersRaw = read.optionalString('GATEWAY_WORKERS');
  if (
    workersRaw !== undefined &&
    workersRaw !== 'auto' &&
    !(/^\d+$/.test(workersRaw) && Number(workersRaw) >= 1 && Number(workersRaw) <= MAX_WORKERS)
  ) {
    throw new ConfigError('GATEWAY_WORKERS', `must be "auto" or an integer from 1 to ${MAX_WORKERS}, got "${workersRaw}"`);
  }
  // `auto`: one worker per core the process may use, as nginx's `worker_processes auto`.
  const workers = workersRaw === undefined ? 1 : workersRaw === 'auto' ? Math.min(availableParallelism(), MAX_WORKERS) : Number(workersRaw);
  return Object.freeze({
    ...readServiceBasics(env, { port: 'GATEWAY_PORT', defaultPort: 8080, database: 'GATEWAY_DATABASE_URL', file: 'gateway.sqlite' }),
    admin: { noPegawai: read.string('GATEWAY_ADMIN_NO_PEGAWAI', 'admin'), password: adminPassword },
    token: {
      ttlMs: read.duration('GATEWAY_TOKEN_TTL', '24h'),
      issuer: read.string('GATEWAY_TOKEN_ISSUER', 'gerbang'),
      audience: read.string('GATEWAY_TOKEN_AUDIENCE', 'gerbang'),
    },
    passwordMaxAgeMs: read.duration('PASSWORD_MAX_AGE', '90d'),
    corsOrigins: read.list('GATEWAY_CORS_ORIGINS'),
    bodyLimit: read.int('GATEWAY_BODY_LIMIT', 1_048_576, 1_024, 1_073_741_824),
    requestTimeoutMs: read.duration('GATEWAY_REQUEST_TIMEOUT', '120s'),
    trustProxy: read.trustProxy('GATEWAY_TRUST_PROXY'),
    loginLimits: {
      perAccount: read.int('LOGIN_MAX_FAILURES_PER_ACCOUNT', 5, 1, 1_000_000),
      perAddress: read.int('LOGIN_MAX_FAILURES_PER_ADDRESS', 50, 1, 1_000_000),
      windowMs: read.duration('LOGIN_LOCKOUT_WINDOW', '15m'),
    },
    listMaxPerPage: 100,
    mfaRequiredFor: Object.freeze(read.list('GATEWAY_MFA_REQUIRED_FOR')),
    mfaIssuer: read.string('GATEWAY_MFA_ISSUER', 'Gerbang'),
    telemetry: loadTelemetryConfig(read),
    sso: loadSsoConfig(env),
    proxy: loadProxyConfig(env),
    sessionCacheMs: read.duration('GATEWAY_SESSION_CACHE_TTL', '2s'),
    workers,
  });
}

/** GATEWAY_TELEMETRY_SAMPLE_RATIO's default. */
export const DEFAULT_SAMPLE_RATIO = 0.1;

/** GATEWAY_TELEMETRY_*: where and how the gateway ships its own logs and traces (docs/configuration.md). */
function loadTelemetryConfig(read: ReturnType<typeof envReader>): TelemetryConfig {
  const username = read.optionalString('GATEWAY_TELEMETRY_USERNAME');
  const password = read.optionalString('GATEWAY_TELEMETRY_PASSWORD');
  const key = read.optionalString('GATEWAY_TELEMETRY_KEY');
  if (key !== undefined && (username !== undefined || password !== undefined)) {
    throw new ConfigError('GATEWAY_TELEMETRY_KEY', 'and GATEWAY_TELEMETRY_USERNAME/PASSWORD are two ways to authenticate: set one');
  }
  if (key !== undefined && key.length < 32) throw new ConfigError('GATEWAY_TELEMETRY_KEY', 'must be at least 32 characters');
  const ratioRaw = read.optionalString('GATEWAY_TELEMETRY_SAMPLE_RATIO');
  // A tenth of traces (and every failed one) by default: recording every trace costs the gateway a
  // noticeable share of its capacity (docs/performance-notes.md, "Gateway").
  const sampleRatio = ratioRaw === undefined ? DEFAULT_SAMPLE_RATIO : Number(ratioRaw);
  if (ratioRaw !== undefined && !(/^\d*\.?\d+$/.test(ratioRaw) && sampleRatio >= 0 && sampleRatio <= 1)) {
    throw new ConfigError('GATEWAY_TELEMETRY_SAMPLE_RATIO', `must be a number from 0 to 1, got "${ratioRaw}"`);
  }
  return {
    url: read.url('GATEWAY_TELEMETRY_URL'),
    username,
    password,
    key,
    serviceName: read.string('GATEWAY_SERVICE_NAME', GATEWAY_SERVICE_NAME),
    maxQueue: read.int('GATEWAY_TELEMETRY_BUFFER', 10_000, 1, 1_000_000),
    // Large batches: each send costs the gateway about as much CPU as a proxied request
    // (docs/performance-notes.md, "Gateway").
    maxBatch: read.int('GATEWAY_TELEMETRY_BATCH', 2048, 1, 100_000),
    intervalMs: read.duration('GATEWAY_TELEMETRY_INTERVAL', '1s'),
    sampleRatio,
  };
}
