import type { FastifyInstance } from 'fastify';
import { buildGateway } from './app.js';
import type { GatewayConfig } from './config.js';
import { plainLogger } from '../shared/http/logger.js';
import { logProcessWarnings } from '../shared/process-warnings.js';

/** Builds and listens; returns the app so the caller can close it on a signal. */
export async function startGateway(config: GatewayConfig): Promise<FastifyInstance> {
  logProcessWarnings(plainLogger(config.logLevel));
  const { app } = await buildGateway({ config });
  await app.listen({ host: config.host, port: config.port });
  return app;
}
