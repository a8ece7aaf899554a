import { brokenPasswordRule } from '../auth/password-policy.js';
import { parseDuration } from './duration.js';

/** A bad setting: the process prints this one line and exits non-zero. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`invalid configuration: ${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

export type Env = Readonly<Record<string, string | undefined>>;

/** Typed readers over an environment; each throws a ConfigError naming the variable. */
export function envReader(env: Env) {
  const raw = (name: string): string | undefined => {
    const value = env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  };
  return {
    raw,
    string(name: string, fallback: string): string {
      return raw(name) ?? fallback;
    },
    optionalString(name: string): string | undefined {
      return raw(name);
    },
    int(name: string, fallback: number, min: number, max: number): number {
      const value = raw(name);
      if (value === undefined) return fallback;
      if (!/^-?\d+$/.test(value) || Number(value) < min || Number(value) > max) {
        throw new ConfigError(name, `must be an integer from ${min} to ${max}, got "${value}"`);
      }
      return Number(value);
    },
    port(name: string, fallback: number): number {
      return this.int(name, fallback, 0, 65_535);
    },
    /** Milliseconds. */
    duration(name: string, fallback: string): number {
      const value = raw(name) ?? fallback;
      const ms = parseDuration(value);
      if (ms === undefined) throw new ConfigError(name, `must be a duration such as 90d, 12h, 30m, 300s or 0, got "${value}"`);
      return ms;
    },
    bool(name: string, fallback: boolean): boolean {
      const value = raw(name);
      if (value === undefined) return fallback;
      if (/^(1|true|yes|on)$/i.test(value)) return true;
      if (/^(0|false|no|off)$/i.test(value)) return false;
      throw new ConfigError(name, `must be true or false, got "${value}"`);
    },
    url(name: string, protocols: string[] = ['http:', 'https:']): string | undefined {
      const value = raw(name);
      if (value === undefined) return undefined;
      let parsed: URL;
      try {
        parsed = new URL(value);
      } catch {
        throw new ConfigError(name, `must be a URL, got "${value}"`);
      }
      if (!protocols.includes(parsed.protocol)) throw new ConfigError(name, `must be a ${protocols.join(' or ')} URL`);
      return value;
    },
    list(name: string): string[] {
      return (raw(name) ?? '')
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean);
    },
    oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
      const value = raw(name) ?? fallback;
      if (!allowed.includes(value as T)) throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got "${value}"`);
      return value as T;
    },
    /** Fastify's trustProxy from `true`, a hop count, or addresses/CIDRs (passed on as written); unset: false. */
    trustProxy(name: string): boolean | number | string {
      const value = raw(name);
      if (value === undefined) return false;
      if (/^\d+$/.test(value)) return Number(value);
      return value === 'true' ? true : value;
    },
  };
}

/** `sqlite:path`, `sqlite::memory:` or `postgres://…`; default is a SQLite file in DATA_DIR. */
export function databaseUrl(env: Env, name: string, dataDir: string, file: string): string {
  const value = envReader(env).raw(name);
  if (value === undefined) return `sqlite:${dataDir}/${file}`;
  if (!/^(sqlite:|postgres:\/\/|postgresql:\/\/)/.test(value)) {
    throw new ConfigError(name, 'must start with sqlite: or postgres://');
  }
  return value;
}

/** Where a service listens and keeps its data. */
export interface ServiceBasics {
  readonly host: string;
  readonly port: number;
  readonly dataDir: string;
  readonly databaseUrl: string;
  readonly logLevel: string;
  /** How the service stops on SIGTERM/SIGINT (shared/http/drain.ts). */
  readonly shutdown: ShutdownSettings;
}

/** SHUTDOWN_READINESS_DELAY and SHUTDOWN_DRAIN_TIMEOUT (docs/operations.md, "Stopping and deploys"). */
export interface ShutdownSettings {
  /** After the signal, how long `/readyz` answers 503 while the service still accepts (the load balancer's reaction time). */
  readonly readinessDelayMs: number;
  /** Then, how long requests in flight may take to finish before they are cut. */
  readonly drainTimeoutMs: number;
}

/** The shutdown settings: both services read the same two variables (and so does `all`'s supervisor). */
export function readShutdownSettings(env: Env): ShutdownSettings {
  const read = envReader(env);
  // An hour at most: a stop that may take longer is a typo (30m for 30s), not a plan.
  const bounded = (name: string, fallback: string) => {
    const ms = read.duration(name, fallback);
    if (ms > MAX_SHUTDOWN_STEP_MS) throw new ConfigError(name, `must be at most 1h, got "${read.raw(name)}"`);
    return ms;
  };
  return {
    readinessDelayMs: bounded('SHUTDOWN_READINESS_DELAY', '0s'),
    drainTimeoutMs: bounded('SHUTDOWN_DRAIN_TIMEOUT', '30s'),
  };
}

const MAX_SHUTDOWN_STEP_MS = 3_600_000;

/** HOST, the service's port, DATA_DIR, its database URL (default: `file` in DATA_DIR) and LOG_LEVEL. */
export function readServiceBasics(env: Env, names: { port: string; defaultPort: number; database: string; file: string }): ServiceBasics {
  const read = envReader(env);
  const dataDir = read.string('DATA_DIR', './data');
  return {
    host: read.string('HOST', '0.0.0.0'),
    port: read.port(names.port, names.defaultPort),
    dataDir,
    databaseUrl: databaseUrl(env, names.database, dataDir, names.file),
    logLevel: read.oneOf('LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info'),
    shutdown: readShutdownSettings(env),
  };
}

/** An administrator password from `name`, when set: it must meet the password rules (a typo is not a weak account). */
export function readAdminPassword(read: ReturnType<typeof envReader>, name: string): string | undefined {
  const password = read.optionalString(name);
  if (password !== undefined && brokenPasswordRule(password)) {
    throw new ConfigError(name, 'must meet the password rules (8+ characters, lower and upper case, a digit, a special character)');
  }
  return password;
}
