import cluster from 'node:cluster';

/** A supervised service tells the supervisor it listens (and on which port) over the IPC channel. */
export interface ServiceReadyMessage {
  type: 'gerbang:service-ready';
  port: number;
}

export function isServiceReady(message: unknown): message is ServiceReadyMessage {
  return (
    typeof message === 'object' &&
    message !== null &&
    (message as { type?: unknown }).type === 'gerbang:service-ready' &&
    typeof (message as { port?: unknown }).port === 'number'
  );
}

/** Set in the environment of the services `gerbang all` starts. */
export const SUPERVISED_ENV = 'GERBANG_SUPERVISED';

/** True in a service process started by the supervisor (not in the gateway's own cluster workers). */
export function underSupervisor(): boolean {
  return process.env[SUPERVISED_ENV] === '1' && cluster.isPrimary && typeof process.send === 'function';
}

/**
 * In a supervised service: reports the listening port, and stops the service gracefully (as on
 * SIGTERM) if the supervisor goes away, so a killed supervisor leaves no orphan behind.
 */
export function reportReady(port: number): void {
  if (!underSupervisor()) return;
  process.send!({ type: 'gerbang:service-ready', port } satisfies ServiceReadyMessage);
}

export function stopWhenSupervisorGone(): void {
  if (!underSupervisor()) return;
  process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'));
}
