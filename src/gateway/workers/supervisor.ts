import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { isWorkerMessage, type WorkerMessage } from './messages.js';
import { MetricsGatherer } from './metrics-gatherer.js';
import { logProcessWarnings } from '../../shared/process-warnings.js';

/**
 * Replacing crashed workers, within reason: more than `limit` unexpected exits within `windowMs`
 * means something is wrong with every worker (the database went away, a bad deploy), and the
 * primary gives up rather than restarting forever.
 */
export class RestartBudget {
  private readonly exits: number[] = [];

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Records an exit; true while a replacement is still within the budget. */
  spend(): boolean {
    const now = this.now();
    this.exits.push(now);
    while (this.exits.length > 0 && this.exits[0]! <= now - this.windowMs) this.exits.shift();
    return this.exits.length <= this.limit;
  }
}

export interface SupervisorOptions {
  workers: number;
  /** The primary's own lines (worker exits and replacements); undefined at LOG_LEVEL=silent. */
  log: Logger | undefined;
  budget?: RestartBudget;
}

/**
 * The primary of GATEWAY_WORKERS > 1: it serves nothing itself. It starts one worker and waits
 * until it listens (that worker migrates the database, creates the signing key and the first
 * administrator), then the others; relays ended sessions and metrics between them; replaces a
 * worker that dies; and on SIGTERM or SIGINT stops them all gracefully. Resolves with the exit
 * code for the process.
 */
export function superviseWorkers({ workers, log, budget = new RestartBudget(5, 60_000) }: SupervisorOptions): Promise<number> {
  logProcessWarnings(log);
  return new Promise((resolve) => {
    let stopping = false;
    let started = false;
    let failedDuringStart = false;
    let exitCode = 0;
    const live = new Set<Worker>();

    const stop = (code: number) => {
      if (stopping) return;
      stopping = true;
      exitCode = code;
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
          if (budget.spend()) {
            log?.warn({ workerPid: worker.process.pid, code, signal }, 'gateway worker exited; starting another');
            void fork();
          } else {
            log?.error({ workerPid: worker.process.pid, code, signal }, 'gateway workers keep exiting; stopping');
            stop(1);
          }
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
