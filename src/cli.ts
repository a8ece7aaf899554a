#!/usr/bin/env node
/** The gerbang CLI: `node dist/cli.js --help` lists its commands (COMMANDS below). */
import './shared/capture-warnings.js';
import './shared/runtime-flags.js';
import cluster from 'node:cluster';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { ConfigError, readShutdownSettings, type ShutdownSettings } from './shared/config/env.js';
import { drainAndClose, killAfterMs, stopDeadlineMs, type DrainableService } from './shared/http/drain.js';
import type { AddressInfo } from 'node:net';
import { loadGatewayConfig, type GatewayConfig } from './gateway/config.js';
import { startGateway } from './gateway/server.js';
import { runWorkerPrimary } from './gateway/workers/primary.js';
import { plainLogger } from './shared/http/logger.js';
import { openDatabase, type Database } from './shared/db/database.js';
import { migrateToLatest } from './shared/db/migrator.js';
import { gatewayMigrations } from './gateway/db/migrations/index.js';
import type { GatewaySchema } from './gateway/db/schema.js';
import { resetPasswordOffline } from './gateway/reset-password.js';
import { resetLogsPasswordOffline } from './logs/reset-password.js';
import type { LogsSchema } from './logs/db/schema.js';
import { backup, restore, type DatabaseToSave } from './shared/db/backup.js';
import { commandOfThisProcess, DataLockedError, holdDataLock } from './shared/db/data-lock.js';
import { announceSigningKeys, rotateSigningKeys } from './shared/auth/signing-keys.js';
import { loadLogsConfig } from './logs/config.js';
import { exitWhenWriterStops, startLogs } from './logs/server.js';
import { logsMigrations } from './logs/db/migrations/index.js';
import { LOGS_NODE_OPTIONS, youngGenerationSized } from './logs/node-options.js';
import { reportReady, stopWhenSupervisorGone } from './supervisor/messages.js';
import { superviseServices } from './supervisor/supervise-services.js';

/**
 * Serves until a signal, then drains (shared/http/drain.ts) and exits; returns the stop, for a service
 * that must exit on its own (with `code`). If closing hangs past the stop's deadline it exits 1 anyway.
 */
async function start(service: DrainableService, settings: ShutdownSettings): Promise<(reason: string, code: number) => Promise<void>> {
  let stopping = false;
  const stop = async (signal: string, code = 0) => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => {
      service.app.log.error({ deadlineMs: stopDeadlineMs(settings) }, 'the stop took longer than its deadline; exiting');
      process.exit(1);
    }, stopDeadlineMs(settings)).unref();
    await drainAndClose(service, settings, signal).catch((error: unknown) => service.app.log.error({ err: error }, 'closing failed'));
    process.exit(code);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  stopWhenSupervisorGone();
  reportReady((service.app.server.address() as AddressInfo).port);
  return stop;
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
    // Both services read the same shutdown settings: each gets its whole stop before it is killed.
    graceMs: killAfterMs(readShutdownSettings(process.env)),
    // One short line per write, which a pipe takes whole beside the services' own blocks of whole lines.
    log: plainLogger(gatewayConfig.logLevel, process.stdout),
    services: [
      {
        name: 'logs',
        portVariable: 'LOGS_PORT',
        nodeOptions: youngGenerationSized() ? [] : LOGS_NODE_OPTIONS,
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

interface Command {
  /** `name <required> [optional] [--flag]`: what parseArguments accepts, too. */
  usage: string;
  summary: string;
  run(args: Arguments): Promise<void>;
}

interface Arguments {
  positional: string[];
  flags: ReadonlySet<string>;
}

/** Both services' databases, from the same settings the services read. */
function databases(): DatabaseToSave[] {
  return [
    { name: 'gateway', url: loadGatewayConfig(process.env).databaseUrl },
    { name: 'logs', url: loadLogsConfig(process.env).databaseUrl },
  ];
}

/**
 * Runs `use` on the `name` database at `url`, closed afterwards whether or not `use` succeeded. A
 * database that cannot be used (unreachable, refused, not a database) is named in one line; the URL
 * is not, as it may hold a password.
 */
async function withDatabase<Schema>(name: string, url: string, use: (database: Database<Schema>) => Promise<void>): Promise<void> {
  let database: Database<Schema> | undefined;
  try {
    database = await openDatabase<Schema>(url);
    // Reached (and, for SQLite, read) before the command starts, so that a dead database is named as such.
    await sql`${sql.raw(database.dialect === 'sqlite' ? 'SELECT count(*) FROM sqlite_master' : 'SELECT 1')}`.execute(database.db);
    await use(database);
  } catch (error) {
    // Driver and system errors carry a code (ECONNREFUSED, 28P01, SQLITE_NOTADB); ours do not.
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' || error instanceof AggregateError)
      throw new Error(`the ${name} database cannot be used: ${oneLine(error)}`, { cause: error });
    throw error;
  } finally {
    await database?.close().catch(() => undefined);
  }
}

/**
 * The lock a service holds on its SQLite database while it runs (src/shared/db/data-lock.ts): a second
 * process on the same files, or one started during a restore, stops here with one line.
 */
async function holdDatabase(name: string, url: string, refusal = 'refusing to start a second process on it'): Promise<void> {
  try {
    await holdDataLock(url, commandOfThisProcess());
  } catch (error) {
    if (error instanceof DataLockedError) throw new Error(`the ${name} database ${error.message}: ${refusal}`);
    throw error;
  }
}

const COMMANDS: Record<string, Command> = {
  all: {
    usage: 'all',
    summary: 'start both services as supervised processes (what `npm start` runs)',
    async run() {
      // Both configurations are checked before either service starts.
      const gatewayConfig = loadGatewayConfig(process.env);
      const logsConfig = loadLogsConfig(process.env);
      process.exit(await supervised(gatewayConfig, logsConfig.host));
    },
  },
  gateway: {
    usage: 'gateway',
    summary: 'start the gateway alone (GATEWAY_WORKERS processes)',
    async run() {
      const config = loadGatewayConfig(process.env);
      // The primary holds the lock for its workers, which open the same database.
      if (cluster.isPrimary) await holdDatabase('gateway', config.databaseUrl);
      if (config.workers > 1 && cluster.isPrimary) {
        // Workers run this same command; the primary only supervises them (and, under `all`,
        // tells its own supervisor once the first worker listens).
        stopWhenSupervisorGone();
        cluster.once('listening', (_worker, address) => reportReady(address.port));
        process.exit(await runWorkerPrimary({ workers: config.workers, log: plainLogger(config.logLevel) }));
      }
      await start(await startGateway(config), config.shutdown);
    },
  },
  logs: {
    usage: 'logs',
    summary: 'start the logs service alone',
    async run() {
      const config = loadLogsConfig(process.env);
      await holdDatabase('logs', config.databaseUrl);
      const service = await startLogs(config);
      const stop = await start(service, config.shutdown);
      exitWhenWriterStops(service, (code) => void stop('sqlite thread stopped', code));
    },
  },
  migrate: {
    usage: 'migrate',
    summary: "run both services' database migrations and exit",
    async run() {
      const log = plainLogger(loadLogsConfig(process.env).logLevel);
      for (const [{ name, url }, migrations] of zip(databases(), [gatewayMigrations, logsMigrations])) {
        // Not under a running service: it would find its schema changed beneath it.
        await holdDatabase(name, url, 'stop it first (a service migrates its own database when it starts)');
        await withDatabase(name, url, async (database) => {
          const applied = await migrateToLatest(database.db, migrations, name, { log: log?.child({ service: name }) });
          process.stdout.write(`${name}: ${applied.length} migration(s) applied\n`);
        });
      }
    },
  },
  'reset-password': {
    usage: 'reset-password <no_pegawai> [--remove-second-factor]',
    summary:
      "set a new generated password for a gateway user, end the user's sessions (printed once, audited); --remove-second-factor: also remove the user's authenticator and recovery codes (a lost phone)",
    async run({ positional: [noPegawai], flags }) {
      await withDatabase<GatewaySchema>('gateway', loadGatewayConfig(process.env).databaseUrl, async (database) => {
        const removeSecondFactor = flags.has('--remove-second-factor');
        const reset = await resetPasswordOffline(database, noPegawai!, Date.now, { removeSecondFactor });
        process.stdout.write(`new password for ${noPegawai}: ${reset.password}\n`);
        if (removeSecondFactor) process.stdout.write(secondFactorLine(reset.secondFactorRemoved));
      });
    },
  },
  'logs-reset-password': {
    usage: 'logs-reset-password <username> [--remove-second-factor]',
    summary: 'the same for a logs-service user (for example the logs administrator); passkeys are kept',
    async run({ positional: [username], flags }) {
      await withDatabase<LogsSchema>('logs', loadLogsConfig(process.env).databaseUrl, async (database) => {
        const removeSecondFactor = flags.has('--remove-second-factor');
        const reset = await resetLogsPasswordOffline(database, username!, Date.now, { removeSecondFactor });
        process.stdout.write(`new password for ${username}: ${reset.password}\n`);
        if (removeSecondFactor) process.stdout.write(secondFactorLine(reset.secondFactorRemoved));
      });
    },
  },
  'rotate-signing-keys': {
    usage: 'rotate-signing-keys [--prune]',
    summary:
      "add a new token-signing key to both services' databases, keeping the old ones (--prune: keep only the newest); running instances pick it up without a restart",
    async run({ flags }) {
      const prune = flags.has('--prune');
      for (const { name, url } of databases()) {
        await withDatabase(name, url, async (database) => {
          const result = await rotateSigningKeys(database.db, `${name}_signing_keys`, { prune });
          // Running instances that listen read their keys again at once; the others on their next token of the new key, or within a minute.
          if (database.dialect === 'postgres') await announceSigningKeys(database.db, `${name}_signing_keys`);
          const line = prune
            ? `${name}: signing key ${result.kid} kept, ${result.removed} older key(s) removed`
            : `${name}: new signing key ${result.kid}, ${result.kept} older key(s) kept for verification`;
          process.stdout.write(`${line}\n`);
        });
      }
    },
  },
  backup: {
    usage: 'backup <dir>',
    summary: 'a consistent online copy of both SQLite databases, with a manifest (PostgreSQL: pg_dump, docs/operations.md)',
    async run({ positional: [dir] }) {
      const manifest = await backup(dir!, databases());
      for (const saved of manifest.databases) process.stdout.write(`${saved.name}: ${saved.bytes} bytes, sha256 ${saved.sha256}\n`);
      process.stdout.write(`backup complete: ${dir}\n`);
    },
  },
  restore: {
    usage: 'restore <dir> [--force]',
    summary: 'put a verified backup in place of both databases (--force: replace existing ones); refused while any process has them open',
    async run({ positional: [dir], flags }) {
      const manifest = await restore(dir!, databases(), { force: flags.has('--force'), command: commandOfThisProcess() });
      process.stdout.write(
        `restored ${manifest.databases.map((saved) => saved.name).join(' and ')} from the backup of ${manifest.created_at}\n`,
      );
    },
  },
  help: {
    usage: 'help [command]',
    summary: "this text, or one command's",
    async run({ positional: [name] }) {
      const command = name === undefined || !Object.hasOwn(COMMANDS, name) ? undefined : COMMANDS[name];
      if (name !== undefined && !command) throw new UsageError();
      process.stdout.write(command ? `usage: gerbang ${command.usage}\n  ${command.summary}\n` : usage());
    },
  },
};

function zip<A, B>(a: readonly A[], b: readonly B[]): [A, B][] {
  return a.map((item, index) => [item, b[index]!]);
}

function usage(): string {
  const width = Math.max(...Object.values(COMMANDS).map((command) => command.usage.length));
  const lines = Object.values(COMMANDS).map((command) => `  ${command.usage.padEnd(width)}  ${command.summary}`);
  return `usage: gerbang <command> [arguments]   (node dist/cli.js, or npm start for \`all\`)\n\n${lines.join('\n')}\n\nSettings come from the environment: docs/configuration.md.\n`;
}

/**
 * A command line that names no command, an unknown one, misses an argument, has one too many or an
 * unknown option: the reason and the usage on stderr, exit 2.
 */
class UsageError extends Error {
  constructor(
    readonly command?: string,
    readonly reason?: string,
  ) {
    super(command === undefined ? 'unknown command' : `usage: gerbang ${COMMANDS[command]!.usage}`);
  }
}

/** What `--remove-second-factor` did, for the operator. */
function secondFactorLine(removed: boolean): string {
  return removed ? 'second factor removed: the user signs in with the password and enrols again\n' : 'no second factor was enrolled\n';
}

/** The arguments the command's usage line allows: `<required>`, `[optional]` and `[--flag]` words; `--` ends the options. */
function parseArguments(name: string, args: readonly string[]): Arguments {
  const words = COMMANDS[name]!.usage.split(' ').slice(1);
  const known = new Set(words.flatMap((word) => /^\[(--[a-z-]+)\]$/.exec(word)?.[1] ?? []));
  const required = words.filter((word) => /^<[^>]+>$/.test(word)).length;
  const allowed = required + words.filter((word) => /^\[[^-][^\]]*\]$/.test(word)).length;
  const positional: string[] = [];
  const flags = new Set<string>();
  let optionsEnded = false;
  for (const arg of args) {
    if (!optionsEnded && arg === '--') optionsEnded = true;
    else if (!optionsEnded && arg.startsWith('-') && arg !== '-') {
      if (!known.has(arg)) throw new UsageError(name, `unknown option ${JSON.stringify(arg)}`);
      flags.add(arg);
    } else positional.push(arg);
  }
  if (positional.length < required) throw new UsageError(name);
  if (positional.length > allowed) throw new UsageError(name, `unexpected argument ${JSON.stringify(positional[allowed])}`);
  return { positional, flags };
}

async function main(argv: string[]): Promise<void> {
  const [name, ...args] = argv;
  if (name === '--help' || name === '-h') return COMMANDS.help!.run({ positional: [], flags: new Set() });
  if (name === undefined) throw new UsageError();
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) throw new UsageError();
  if (args.includes('--help')) return COMMANDS.help!.run({ positional: [name], flags: new Set() });
  await command.run(parseArguments(name, args));
}

/** An error's first line; an AggregateError (a host with several addresses) by its first error. */
function oneLine(error: unknown): string {
  if (error instanceof AggregateError && error.message === '' && error.errors.length > 0) return oneLine(error.errors[0]);
  const code = (error as { code?: unknown } | undefined)?.code;
  const text = error instanceof Error ? error.message || (typeof code === 'string' ? code : error.name) : String(error);
  return text.split('\n')[0]!;
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError) {
    const reason = error.reason === undefined ? '' : `gerbang ${error.command}: ${error.reason}\n`;
    process.stderr.write(error.command === undefined ? usage() : `${reason}${error.message}\n`);
    process.exit(2);
  }
  // One line an operator can act on, for a bad setting or any other failure; the stack only when asked for.
  const command = process.argv[2];
  process.stderr.write(error instanceof ConfigError ? `${error.message}\n` : `gerbang ${command}: ${oneLine(error)}\n`);
  if (/^(debug|trace)$/i.test(process.env.LOG_LEVEL ?? '') && error instanceof Error && error.stack)
    process.stderr.write(`${error.stack}\n`);
  process.exit(1);
});
