import type { Env } from '../shared/config/env.js';
import { buildLogsService, type LogsService } from './app.js';
import type { LogsConfig } from './config.js';
import { loadK8sCluster } from './modules/k8s/k8s.cluster.js';

/** Builds and listens; returns the service so the caller can wire it and close it on a signal. */
export async function startLogs(config: LogsConfig, env: Env = process.env): Promise<LogsService> {
  const service = await buildLogsService({ config, k8s: loadK8sCluster(env) });
  await service.app.listen({ host: config.host, port: config.port });
  return service;
}
