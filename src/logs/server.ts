import type { Env } from '../shared/config/env.js';
import { plainLogger } from '../shared/http/logger.js';
import { logProcessWarnings } from '../shared/process-warnings.js';
import { buildLogsService, type LogsService } from './app.js';
import type { LogsConfig } from './config.js';
import { loadK8sCluster } from './modules/k8s/k8s.cluster.js';
import { sqliteThreadDialect, writerThreadOf } from './modules/store/index.js';
import { LOGS_NODE_OPTIONS, youngGenerationSized } from './node-options.js';
import { openDatabase, type Database } from '../shared/db/database.js';
import { migrateToLatest, pendingMigrations } from '../shared/db/migrator.js';
import { AppError } from '../shared/errors/app-error.js';
import { openMigrationGate, type MigrationGate } from '../shared/http/migration-gate.js';
import { logsMigrations } from './db/migrations/index.js';
import type { LogsSchema } from './db/schema.js';
import { logsErrorBody } from './http/errors.js';

/**
 * Migrates, builds and listens; returns the service so the caller can wire it and close it on a
 * signal. Pending migrations run behind the migration gate (migration-gate.ts): the port answers
 * probes while they run. Warns first when node runs with V8's default young generation
 * (node-options.ts: slower ingestion).
 */
export async function startLogs(config: LogsConfig, env: Env = process.env): Promise<LogsService> {
  logProcessWarnings(plainLogger(config.logLevel));
  const database = await openDatabase<LogsSchema>(config.databaseUrl, { sqliteThread: sqliteThreadDialect });
  let gate: MigrationGate | undefined;
  let service: LogsService;
  try {
    if ((await pendingMigrations(database.db, logsMigrations, 'logs')).length > 0) gate = await migrateBehindGate(config, database);
    service = await buildLogsService({ config, database, k8s: loadK8sCluster(env) });
  } catch (error) {
    await gate?.close();
    // (buildLogsService may have closed it already.)
    await database.close().catch(() => undefined);
    throw error;
  }
  if (!youngGenerationSized(process.execArgv, env.NODE_OPTIONS ?? '')) {
    service.app.log.warn(
      { nodeOptions: LOGS_NODE_OPTIONS.join(' ') },
      'node runs with V8\'s default young generation, which slows ingestion: start it with these options (docs/operations.md, "Memory")',
    );
  }
  // The gate hands the port over once the service is built: it is closed for the moment between.
  await gate?.close();
  await service.app.listen({ host: config.host, port: gate?.port ?? config.port });
  return service;
}

/**
 * Opens the port (`/readyz`: `migrating` and the progress), runs the pending migrations, and returns
 * the gate still open (reason `starting` while the service is built).
 */
async function migrateBehindGate(config: LogsConfig, database: Database<LogsSchema>): Promise<MigrationGate> {
  const gate = await openMigrationGate({
    host: config.host,
    port: config.port,
    logLevel: config.logLevel,
    trustProxy: config.trustProxy,
    requestTimeoutMs: config.requestTimeoutMs,
    renderClientError: logsErrorBody,
    unavailable: logsErrorBody(new AppError('LOGS_MIGRATING')),
  });
  try {
    await migrateToLatest(database.db, logsMigrations, 'logs', {
      log: gate.log,
      progressIntervalMs: config.migrationProgressIntervalMs,
      onProgress: ({ migration, done, total }) => gate.readiness.set('migrating', { migration, done, total }),
    });
  } catch (error) {
    await gate.close();
    throw error;
  }
  gate.readiness.clear('migrating');
  gate.readiness.set('starting');
  return gate;
}

/**
 * Without its SQLite thread every write fails until a restart: once it stops, `exit(1)` (a graceful
 * stop), so that the supervisor of `npm start`, or the orchestrator, restarts the service.
 */
export function exitWhenWriterStops(service: LogsService, exit: (code: number) => void): void {
  writerThreadOf(service.database.db)?.onStop((error) => {
    service.app.log.fatal({ err: error }, 'the SQLite thread stopped; exiting to be restarted');
    exit(1);
  });
}
