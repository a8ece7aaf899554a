import { buildGateway, type Gateway } from './app.js';
import type { GatewayConfig } from './config.js';
import { plainLogger } from '../shared/http/logger.js';
import { logProcessWarnings } from '../shared/process-warnings.js';

/** Builds and listens; returns the gateway so the caller can drain and close it on a signal. */
export async function startGateway(config: GatewayConfig): Promise<Gateway> {
  logProcessWarnings(plainLogger(config.logLevel));
  const gateway = await buildGateway({ config });
  await gateway.app.listen({ host: config.host, port: config.port });
  return gateway;
}
