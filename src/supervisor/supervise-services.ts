import type { Logger } from 'pino';
import { ServiceChild } from './service-child.js';
import { SUPERVISED_ENV } from './messages.js';
import type { RestartPolicy, Schedule } from '../shared/restart-policy.js';
import { logProcessWarnings } from '../shared/process-warnings.js';

export interface SupervisedService {
  /** `logs`, `gateway`: the CLI command that runs it. */
  name: string;
  /** Its port variable, pinned to the port it first bound (so `0` keeps one port across restarts). */
  portVariable: string;
  /** Its environment; `ports` holds the ports of the services started before it. */
  env: (ports: ReadonlyMap<string, number>) => NodeJS.ProcessEnv;
  /** Node's options for this service alone, before the CLI's own (so that an operator's flag wins). */
  nodeOptions?: readonly string[];
}

export interface SuperviseOptions {
  /** Started in this order, each once the one before listens; stopped in the reverse order. */
  services: readonly SupervisedService[];
  /** How to run the CLI: node's own flags (tsx under tests) and the CLI's path. */
  cliArgs: readonly string[];
  log: Logger | undefined;
  /** How long a service may take to stop after SIGTERM before it is killed: more than its own drain (killAfterMs). */
  graceMs: number;
  policy?: () => RestartPolicy;
  schedule?: Schedule;
}

/**
 * `gerbang all`: each service in a process of its own, so a crash of one never takes the other
 * with it. A service that exits unasked is started again with back-off (shared/restart-policy.ts,
 * never giving up) while the other keeps serving; SIGTERM or SIGINT stops them in reverse order (the gateway first, so its
 * last telemetry reaches the logs service). Resolves with the supervisor's exit status: 0 after a
 * clean stop, 1 if a service failed to start or had to be killed.
 */
export function superviseServices({ services, cliArgs, log, graceMs, policy, schedule }: SuperviseOptions): Promise<number> {
  logProcessWarnings(log);
  const ports = new Map<string, number>();
  const children: ServiceChild[] = [];
  let stopping: Promise<number> | undefined;

  const stopAll = (status: number) => {
    stopping ??= (async () => {
      let clean = status === 0;
      for (const child of [...children].reverse()) clean = (await child.stop(graceMs)) && clean;
      return clean ? 0 : 1;
    })();
    return stopping;
  };

  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      log?.info({ signal }, 'stopping services');
      void stopAll(0).then(resolve);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);

    void (async () => {
      for (const service of services) {
        if (stopping) return;
        const child = new ServiceChild({
          name: service.name,
          args: [...(service.nodeOptions ?? []), ...cliArgs, service.name],
          env: () => {
            const pinned = ports.get(service.name);
            return {
              ...service.env(ports),
              [SUPERVISED_ENV]: '1',
              ...(pinned !== undefined ? { [service.portVariable]: String(pinned) } : {}),
            };
          },
          log,
          ...(policy ? { policy: policy() } : {}),
          ...(schedule ? { schedule } : {}),
          onReady: (port) => void ports.set(service.name, port),
        });
        children.push(child);
        try {
          await child.start();
        } catch (error) {
          log?.error({ service: service.name, err: (error as Error).message }, 'a service failed to start; stopping');
          resolve(await stopAll(1));
          return;
        }
      }
      log?.info({ services: Object.fromEntries(ports) }, 'services listening');
    })();
  });
}
