import type { FastifyInstance } from 'fastify';
import { buildLogsService } from './app.js';
import type { LogsConfig } from './config.js';

/** Builds and listens; returns the app so the caller can close it on a signal. */
export async function startLogs(config: LogsConfig): Promise<FastifyInstance> {
  const { app } = await buildLogsService({ config });
  await app.listen({ host: config.host, port: config.port });
  return app;
}
