import { spawn, type ChildProcess } from 'node:child_process';
import type { Logger } from 'pino';
import { isServiceReady } from './messages.js';
import { GIVE_UP, realSchedule, RestartPolicy, type Schedule } from '../shared/restart-policy.js';

export interface ServiceChildOptions {
  /** `gateway` or `logs`: the name in the supervisor's lines. */
  name: string;
  /** Arguments after the node executable (execArgv, the CLI's path, the command). */
  args: readonly string[];
  /** The environment of each start (read again at every restart). */
  env: () => NodeJS.ProcessEnv;
  log: Logger | undefined;
  policy?: RestartPolicy;
  schedule?: Schedule;
  /** Called at every (re)start once the service listens. */
  onReady?: (port: number) => void;
}

/**
 * One service process under the supervisor: started with an IPC channel, ready once it reports
 * its port, started again with back-off whenever it exits unasked, stopped with SIGTERM (SIGKILL
 * after a grace period). Its stdout and stderr pass through in whole lines.
 */
export class ServiceChild {
  private child: ChildProcess | undefined;
  private restartTimer: { cancel(): void } | undefined;
  private stopping = false;
  private everReady = false;
  private readonly policy: RestartPolicy;
  private readonly schedule: Schedule;
  private firstStart: { resolve: (port: number) => void; reject: (error: Error) => void } | undefined;
  private exited: (() => void) | undefined;
  private exitCode: number | null = null;
  private exitSignal: NodeJS.Signals | null = null;

  constructor(private readonly options: ServiceChildOptions) {
    this.policy = options.policy ?? new RestartPolicy();
    this.schedule = options.schedule ?? realSchedule;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Starts the service; resolves with its port once it listens, rejects if it exits first. */
  start(): Promise<number> {
    return new Promise((resolve, reject) => {
      this.firstStart = { resolve, reject };
      this.spawn();
    });
  }

  /**
   * SIGTERM, then SIGKILL after `graceMs`; no restart afterwards. Resolves true when the service
   * stopped by itself with status 0 (or was not running).
   */
  async stop(graceMs: number): Promise<boolean> {
    this.stopping = true;
    this.restartTimer?.cancel();
    this.restartTimer = undefined;
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return true;
    const gone = new Promise<void>((resolve) => (this.exited = resolve));
    child.kill('SIGTERM');
    let killed = false;
    const timer = this.schedule(() => {
      killed = true;
      this.options.log?.error({ service: this.options.name, servicePid: child.pid, graceMs }, 'service did not stop in time; killing it');
      child.kill('SIGKILL');
    }, graceMs);
    await gone;
    timer.cancel();
    // Dying of the SIGTERM we sent (a service still starting has no handler yet) is a clean stop.
    return !killed && (this.exitCode === 0 || this.exitSignal === 'SIGTERM');
  }

  private spawn(): void {
    const { name, args, env, log } = this.options;
    // Its own process group: a terminal's Ctrl-C reaches the supervisor only, which then stops the
    // services in order (and does not mistake their exit for a crash). Should the supervisor die,
    // the service sees its IPC channel close and stops (messages.ts). Its output goes straight to
    // ours: with an IPC channel it writes whole lines in blocks a pipe takes in one piece (logger.ts),
    // so the two services' lines never tear and the supervisor copies nothing.
    const child = spawn(process.execPath, args, { env: env(), stdio: ['ignore', 'inherit', 'inherit', 'ipc'], detached: true });
    this.child = child;
    this.policy.started();
    child.on('message', (message: unknown) => {
      if (!isServiceReady(message)) return;
      log?.info({ service: name, servicePid: child.pid, port: message.port }, this.everReady ? 'service restarted' : 'service started');
      this.everReady = true;
      this.options.onReady?.(message.port);
      this.firstStart?.resolve(message.port);
      this.firstStart = undefined;
    });
    child.on('error', (error) => log?.error({ service: name, err: error.message }, 'service could not be started'));
    child.once('exit', (code, signal) => {
      this.exitCode = code;
      this.exitSignal = signal;
      if (this.stopping) {
        log?.info({ service: name, servicePid: child.pid, code, signal }, 'service stopped');
        this.exited?.();
        return;
      }
      if (!this.everReady) {
        // A service that never came up at all (port taken, database unreachable) fails the start.
        this.firstStart?.reject(new Error(`${name} exited during start (${signal ?? `status ${code}`})`));
        this.firstStart = undefined;
        return;
      }
      const delayMs = this.policy.exited();
      if (delayMs === GIVE_UP) {
        log?.error({ service: name, servicePid: child.pid, code, signal }, 'service keeps exiting; not restarting it');
        return;
      }
      log?.warn({ service: name, servicePid: child.pid, code, signal, restartInMs: delayMs }, 'service exited; restarting');
      this.restartTimer = this.schedule(() => {
        this.restartTimer = undefined;
        if (!this.stopping) this.spawn();
      }, delayMs);
    });
  }
}
