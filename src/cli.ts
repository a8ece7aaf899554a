#!/usr/bin/env node
/**
 * gerbang CLI:
 *   all | gateway | logs              start both services, or one (gateway: GATEWAY_WORKERS processes)
 *   migrate                           run both services' database migrations and exit
 *   reset-password <no_pegawai>       set a new generated password for a gateway user (printed once)
 */
import './shared/runtime-flags.js';
import cluster from 'node:cluster';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { ConfigError } from './shared/config/env.js';
import type { AddressInfo } from 'node:net';
import { loadGatewayConfig, type GatewayConfig } from './gateway/config.js';
import { startGateway } from './gateway/server.js';
import { superviseWorkers } from './gateway/workers/supervisor.js';
import { plainLogger } from './shared/http/logger.js';
import { openDatabase } from './shared/db/database.js';
import { migrateToLatest } from './shared/db/migrator.js';
import { gatewayMigrations } from './gateway/db/migrations/index.js';
import type { GatewaySchema } from './gateway/db/schema.js';
import { resetPasswordOffline } from './gateway/reset-password.js';
import { loadLogsConfig } from './logs/config.js';
import { startLogs } from './logs/server.js';
import { logsMigrations } from './logs/db/migrations/index.js';
import { reportReady, stopWhenSupervisorGone } from './supervisor/messages.js';
import { superviseServices } from './supervisor/supervise-services.js';

async function start(services: FastifyInstance[]): Promise<void> {
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    for (const app of services) app.log.info({ signal }, 'shutting down');
    // Stop accepting, let in-flight requests finish, then close pools; hard exit if that hangs.
    const timer = setTimeout(() => process.exit(1), 10_000).unref();
    await Promise.allSettled(services.map((app) => app.close()));
    clearTimeout(timer);
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  stopWhenSupervisorGone();
  reportReady((services[0]!.server.address() as AddressInfo).port);
}

/** Where a service listening on HOST is reached from this machine. */
function loopbackOf(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

/**
 * `all`: the logs service and the gateway, each in a process of its own under a small supervisor
 * (src/supervisor). Unless GATEWAY_TELEMETRY_URL points elsewhere, the gateway watches itself
 * through the logs service beside it, authenticated by a key made fresh at each start and handed
 * to both through their environment only (never a command line, never a log line).
 */
async function supervised(gatewayConfig: GatewayConfig, logsHost: string): Promise<number> {
  const shipToOwnLogs = gatewayConfig.telemetry.url === undefined;
  const key = randomBytes(32).toString('base64url');
  return superviseServices({
    cliArgs: [...process.execArgv, fileURLToPath(import.meta.url)],
    // One short line per write, which a pipe takes whole beside the services' own blocks of whole lines.
    log: plainLogger(gatewayConfig.logLevel, process.stdout),
    services: [
      {
        name: 'logs',
        portVariable: 'LOGS_PORT',
        env: () => ({ ...process.env, ...(shipToOwnLogs ? { LOGS_GATEWAY_SHIPPER_KEY: key } : {}) }),
      },
      {
        name: 'gateway',
        portVariable: 'GATEWAY_PORT',
        env: (ports) => {
          if (!shipToOwnLogs) return process.env;
          const { GATEWAY_TELEMETRY_USERNAME: _user, GATEWAY_TELEMETRY_PASSWORD: _password, ...env } = process.env;
          return { ...env, GATEWAY_TELEMETRY_URL: `http://${loopbackOf(logsHost)}:${ports.get('logs')}`, GATEWAY_TELEMETRY_KEY: key };
        },
      },
    ],
  });
}

async function main(argv: string[]): Promise<void> {
  const [command = 'all', ...args] = argv;
  switch (command) {
    case 'all': {
      // Both configurations are checked before either service starts.
      const gatewayConfig = loadGatewayConfig(process.env);
      const logsConfig = loadLogsConfig(process.env);
      process.exit(await supervised(gatewayConfig, logsConfig.host));
      return;
    }
    case 'logs': {
      await start([(await startLogs(loadLogsConfig(process.env))).app]);
      return;
    }
    case 'gateway': {
      const config = loadGatewayConfig(process.env);
      if (config.workers > 1 && cluster.isPrimary) {
        // Workers run this same command; the primary only supervises them (and, under `all`,
        // tells its own supervisor once the first worker listens).
        stopWhenSupervisorGone();
        cluster.once('listening', (_worker, address) => reportReady(address.port));
        process.exit(await superviseWorkers({ workers: config.workers, log: plainLogger(config.logLevel) }));
      }
      await start([await startGateway(config)]);
      return;
    }
    case 'migrate': {
      const config = loadGatewayConfig(process.env);
      const logsConfig = loadLogsConfig(process.env);
      for (const [name, url, migrations] of [
        ['gateway', config.databaseUrl, gatewayMigrations],
        ['logs', logsConfig.databaseUrl, logsMigrations],
      ] as const) {
        const database = await openDatabase<unknown>(url);
        try {
          const applied = await migrateToLatest(database.db, migrations, name);
          process.stdout.write(`${name}: ${applied.length} migration(s) applied\n`);
        } finally {
          await database.close();
        }
      }
      return;
    }
    case 'reset-password': {
      const [noPegawai] = args;
      if (!noPegawai) throw new Error('usage: reset-password <no_pegawai>');
      const config = loadGatewayConfig(process.env);
      const database = await openDatabase<GatewaySchema>(config.databaseUrl);
      try {
        process.stdout.write(`new password for ${noPegawai}: ${await resetPasswordOffline(database, noPegawai)}\n`);
      } finally {
        await database.close();
      }
      return;
    }
    default:
      throw new Error(`unknown command "${command}" (all, gateway, logs, migrate, reset-password)`);
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  // One clear line for a bad setting; the stack for anything else.
  process.stderr.write(
    error instanceof ConfigError ? `${error.message}\n` : `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
