import type { Env } from '../shared/config/env.js';
import { buildLogsService, type LogsService } from './app.js';
import type { LogsConfig } from './config.js';
import { loadK8sCluster } from './modules/k8s/k8s.cluster.js';
import { writerThreadOf } from '../shared/db/sqlite-thread.js';

/** Builds and listens; returns the service so the caller can wire it and close it on a signal. */
export async function startLogs(config: LogsConfig, env: Env = process.env): Promise<LogsService> {
  const service = await buildLogsService({ config, k8s: loadK8sCluster(env) });
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
