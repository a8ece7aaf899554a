import type { FastifyInstance } from 'fastify';
import type { Env } from '../shared/config/env.js';
import { buildLogsService } from './app.js';
import type { LogsConfig } from './config.js';
import { loadK8sCluster } from './modules/k8s/k8s.cluster.js';

/** Builds and listens; returns the app so the caller can close it on a signal. */
export async function startLogs(config: LogsConfig, env: Env = process.env): Promise<FastifyInstance> {
  const { app } = await buildLogsService({ config, k8s: loadK8sCluster(env) });
  await app.listen({ host: config.host, port: config.port });
  return app;
}
