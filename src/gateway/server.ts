import { buildGateway, type Gateway } from './app.js';
import type { GatewayConfig } from './config.js';

/** Builds and listens; returns the gateway so the caller can drain and close it on a signal. */
export async function startGateway(config: GatewayConfig): Promise<Gateway> {
  const gateway = await buildGateway({ config });
  await gateway.app.listen({ host: config.host, port: config.port });
  return gateway;
}
