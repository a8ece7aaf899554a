import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { isWorkerMessage, type WorkerMessage } from './messages.js';
import { MetricsGatherer } from './metrics-gatherer.js';
import { logProcessWarnings } from '../../shared/process-warnings.js';
import { GIVE_UP, realSchedule, RestartPolicy, type Schedule } from '../../shared/restart-policy.js';

/**
 * The workers' restart policy (shared/restart-policy.ts, as for `all`'s services): back-off from
 * 0.5 s to 30 s; more than 5 unexpected exits within a minute means something is wrong with every
 * worker (the database went away, a bad deploy), and the primary gives up rather than restarting
 * forever.
 */
export const workerRestartPolicy = (now: () => number = Date.now) => new RestartPolicy({ giveUp: { exits: 5, windowMs: 60_000 }, now });

export interface WorkerPrimaryOptions {
  workers: number;
  /** The primary's own lines (worker exits and replacements); undefined at LOG_LEVEL=silent. */
  log: Logger | undefined;
  policy?: RestartPolicy;
  schedule?: Schedule;
}

/**
 * The primary of GATEWAY_WORKERS > 1: it serves nothing itself. It starts one worker and waits
 * until it listens (that worker migrates the database, creates the signing key and the first
 * administrator), then the others; relays ended sessions and metrics between them; replaces a
 * worker that dies, with back-off (workerRestartPolicy); and on SIGTERM or SIGINT stops them all
 * gracefully. Resolves with the exit code for the process.
 */
export function runWorkerPrimary({
  workers,
  log,
  policy = workerRestartPolicy(),
  schedule = realSchedule,
}: WorkerPrimaryOptions): Promise<number> {
  logProcessWarnings(log);
  return new Promise((resolve) => {
    let stopping = false;
    let started = false;
    let failedDuringStart = false;
    let exitCode = 0;
    const live = new Set<Worker>();
    const restarts = new Set<{ cancel(): void }>();

    const stop = (code: number) => {
      if (stopping) return;
      stopping = true;
      exitCode = code;
      for (const restart of restarts) restart.cancel();
      if (live.size === 0) resolve(exitCode);
      for (const worker of live) worker.process.kill('SIGTERM');
    };

    const send = (worker: Worker, message: WorkerMessage) => {
      if (worker.isConnected()) worker.send(message);
    };

    const metrics = new MetricsGatherer<Worker>((worker, collectId) => send(worker, { type: 'gerbang:metrics-collect', collectId }));

    const onMessage = (from: Worker, message: WorkerMessage) => {
      switch (message.type) {
        case 'gerbang:sessions-ended':
          for (const worker of live) if (worker !== from) send(worker, message);
          return;
        case 'gerbang:metrics-request':
          metrics.collect(
            [...live].filter((worker) => worker.isConnected()),
            (reply) => send(from, { type: 'gerbang:metrics-response', requestId: message.requestId, ...reply }),
          );
          return;
        case 'gerbang:metrics-part':
          metrics.received(from, message.collectId, message.metrics, message.error);
          return;
        default:
      }
    };

    const fork = (): Promise<boolean> => {
      const worker = cluster.fork();
      policy.started();
      live.add(worker);
      worker.on('message', (message: unknown) => {
        if (isWorkerMessage(message)) onMessage(worker, message);
      });
      return new Promise((listening) => {
        worker.once('listening', () => listening(true));
        worker.once('exit', (code, signal) => {
          live.delete(worker);
          metrics.workerGone(worker);
          listening(false);
          if (stopping) {
            // A worker still starting has no SIGTERM handler yet: dying of ours is a clean stop too.
            if (code !== 0 && signal !== 'SIGTERM') exitCode = 1;
            if (live.size === 0) resolve(exitCode);
            return;
          }
          if (!started) {
            failedDuringStart = true; // the start fails (below)
            return;
          }
          const delayMs = policy.exited();
          if (delayMs === GIVE_UP) {
            log?.error({ workerPid: worker.process.pid, code, signal }, 'gateway workers keep exiting; stopping');
            stop(1);
            return;
          }
          log?.warn({ workerPid: worker.process.pid, code, signal, restartInMs: delayMs }, 'gateway worker exited; starting another');
          const restart = schedule(() => {
            restarts.delete(restart);
            if (!stopping) void fork();
          }, delayMs);
          restarts.add(restart);
        });
      });
    };

    process.on('SIGTERM', () => stop(0));
    process.on('SIGINT', () => stop(0));

    void (async () => {
      // The first worker prepares the database alone; the others start on a prepared one.
      const first = await fork();
      const rest = first ? await Promise.all(Array.from({ length: workers - 1 }, fork)) : [];
      if (stopping) return;
      if (!first || rest.includes(false) || failedDuringStart) {
        log?.error('a gateway worker failed to start');
        stop(1);
        return;
      }
      started = true;
      log?.info({ workers }, 'gateway workers listening');
    })();
  });
}
