import { readFileSync } from 'node:fs';
import { ConfigError, envReader, type Env } from '../../../shared/config/env.js';
import { SERVICES } from './services.js';
import { dict } from '../../../shared/dict.js';

// The proxy's settings (GATEWAY_PROXY_*, SERVER_SERVICE_*; docs/configuration.md), read once at start.

/** Where and how one service is reached. */
export interface UpstreamConfig {
  /** `http(s)://host:port`, for the connection pool. */
  readonly origin: string;
  /** Path prefix of the upstream address, '' or '/prefix' (no trailing slash). */
  readonly pathPrefix: string;
  /** Time to the response headers, and the longest pause inside a response body (ms). */
  readonly timeoutMs: number;
  /** Largest request body (bytes); 413 beyond it. */
  readonly bodyLimit: number;
  /** Path of the service's OpenAPI/Swagger description, relative to the upstream address. */
  readonly docsPath: string;
}

export interface ProxyConfig {
  /** One entry per service of SERVICES, by key; undefined = not configured (503). */
  readonly upstreams: Readonly<Record<string, UpstreamConfig | undefined>>;
  /** `bearer`: `Authorization: Bearer <jwt>`; `wrapped`: the spec 2.3 wrapped token as the client sent it. */
  readonly authorization: 'bearer' | 'wrapped';
  /** Extra attempts of a body-less GET/HEAD after a connection error (never after a response began). */
  readonly retries: number;
  /** Most sockets open to one upstream. */
  readonly connections: number;
  /** How long an upstream's description is reused by /api/v1/docs.json (ms). */
  readonly docsRefreshMs: number;
  /** Consecutive failed calls that open a service's circuit (0 = no breaker). */
  readonly breakerThreshold: number;
  /** How long an open circuit fails calls at once before one trial call. */
  readonly breakerCooldownMs: number;
  /** When set, GET /metrics needs `Authorization: Bearer <token>`. */
  readonly metricsToken: string | undefined;
  /** PEM certificates of extra authorities trusted for HTTPS upstreams (an internal CA), besides Node's roots. */
  readonly caCertificates: string | undefined;
}

/** GATEWAY_PROXY_CA_FILE read at start, so a wrong path stops the start rather than the first call. */
function readCaFile(path: string | undefined): string | undefined {
  if (path === undefined) return undefined;
  let pem: string;
  try {
    pem = readFileSync(path, 'utf8');
  } catch {
    throw new ConfigError('GATEWAY_PROXY_CA_FILE', 'cannot be read');
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new ConfigError('GATEWAY_PROXY_CA_FILE', 'holds no PEM certificate');
  return pem;
}

const MIB = 1_048_576;

/** Reads SERVER_SERVICE_* and the GATEWAY_PROXY_* settings (docs/configuration.md lists them). */
export function loadProxyConfig(env: Env): ProxyConfig {
  const read = envReader(env);
  const defaultTimeout = read.duration('GATEWAY_PROXY_TIMEOUT', '30s');
  const defaultBodyLimit = read.int('GATEWAY_PROXY_BODY_LIMIT', 10 * MIB, 0, Number.MAX_SAFE_INTEGER);
  const defaultDocsPath = read.string('GATEWAY_DOCS_UPSTREAM_PATH', '/docs.json');
  const upstreams = dict<UpstreamConfig | undefined>();
  for (const service of SERVICES) {
    const address = read.url(service.env);
    if (address === undefined) {
      upstreams[service.key] = undefined;
      continue;
    }
    const url = new URL(address);
    if (url.username || url.password) throw new ConfigError(service.env, 'must not carry credentials');
    if (url.search || url.hash) throw new ConfigError(service.env, 'must not carry a query or fragment');
    const timeoutMs = read.duration(`${service.env}_TIMEOUT`, `${defaultTimeout}ms`);
    if (timeoutMs <= 0) throw new ConfigError(`${service.env}_TIMEOUT`, 'must be greater than 0');
    const docsPath = read.string(`${service.env}_DOCS_PATH`, defaultDocsPath);
    if (!docsPath.startsWith('/')) throw new ConfigError(`${service.env}_DOCS_PATH`, 'must start with /');
    upstreams[service.key] = {
      origin: url.origin,
      pathPrefix: url.pathname.replace(/\/+$/, ''),
      timeoutMs,
      // The File service carries uploads: 1 GiB unless set.
      bodyLimit: read.int(`${service.env}_BODY_LIMIT`, service.key === 'file' ? 1024 * MIB : defaultBodyLimit, 0, Number.MAX_SAFE_INTEGER),
      docsPath,
    };
  }
  return Object.freeze({
    upstreams: Object.freeze(upstreams),
    authorization: read.oneOf('GATEWAY_PROXY_AUTHORIZATION', ['bearer', 'wrapped'] as const, 'bearer'),
    retries: read.int('GATEWAY_PROXY_RETRIES', 1, 0, 5),
    connections: read.int('GATEWAY_PROXY_CONNECTIONS', 128, 1, 65_536),
    docsRefreshMs: read.duration('GATEWAY_DOCS_REFRESH', '5m'),
    breakerThreshold: read.int('GATEWAY_PROXY_BREAKER_THRESHOLD', 5, 0, 1_000_000),
    breakerCooldownMs: read.duration('GATEWAY_PROXY_BREAKER_COOLDOWN', '10s'),
    metricsToken: read.optionalString('GATEWAY_METRICS_TOKEN'),
    caCertificates: readCaFile(read.optionalString('GATEWAY_PROXY_CA_FILE')),
  });
}
