import type { Env } from '../shared/config/env.js';
import { plainLogger } from '../shared/http/logger.js';
import { logProcessWarnings } from '../shared/process-warnings.js';
import { buildLogsService, type LogsService } from './app.js';
import type { LogsConfig } from './config.js';
import { loadK8sCluster } from './modules/k8s/k8s.cluster.js';
import { writerThreadOf } from '../shared/db/sqlite-thread.js';
import { LOGS_NODE_OPTIONS, youngGenerationSized } from './node-options.js';

/**
 * Builds and listens; returns the service so the caller can wire it and close it on a signal. Warns
 * first when node runs with V8's default young generation (node-options.ts: slower ingestion).
 */
export async function startLogs(config: LogsConfig, env: Env = process.env): Promise<LogsService> {
  logProcessWarnings(plainLogger(config.logLevel));
  const service = await buildLogsService({ config, k8s: loadK8sCluster(env) });
  if (!youngGenerationSized(process.execArgv, env.NODE_OPTIONS ?? '')) {
    service.app.log.warn(
      { nodeOptions: LOGS_NODE_OPTIONS.join(' ') },
      'node runs with V8\'s default young generation, which slows ingestion: start it with these options (docs/operations.md, "Memory")',
    );
  }
  await service.app.listen({ host: config.host, port: config.port });
  return service;
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
