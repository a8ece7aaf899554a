import type { Logger } from 'pino';

/** Where node's warnings go: a service's log once it has one; until then they wait. */
let sink: ((warning: Error) => void) | undefined;
const waiting: Error[] = [];

/** Node's own rendering, `(node:PID) Name: message`, for a command that never gets a service log. */
function nodeFormat(warning: Error): string {
  return `(node:${process.pid}) ${warning.name}: ${warning.message}\n`;
}

/**
 * Takes node's process warnings (ExperimentalWarning, DeprecationWarning, MaxListenersExceededWarning,
 * the project's own `process.emitWarning` calls) from node's printer, which writes
 * `(node:PID) Warning: ...` lines to stderr: a service logs them as JSON instead
 * (logProcessWarnings), so every line it writes is JSON. Called first thing by the CLI; warnings
 * before a service's log exists wait for it, and a command without one (migrate, backup) prints
 * them as node would when it exits. Node's bootstrap warnings (of its own command-line flags)
 * come before any code runs and stay node's.
 */
export function captureProcessWarnings(): void {
  process.removeAllListeners('warning');
  process.on('warning', (warning) => (sink ? sink(warning) : waiting.push(warning)));
  process.once('exit', () => {
    for (const warning of waiting.splice(0)) process.stderr.write(nodeFormat(warning));
  });
}

/** From now on node's warnings are `warn` lines of `log` (none when the log is silent: undefined). */
export function logProcessWarnings(log: Logger | undefined): void {
  sink = (warning) =>
    log?.warn(
      {
        warning: {
          name: warning.name,
          message: warning.message,
          ...('code' in warning && typeof warning.code === 'string' ? { code: warning.code } : {}),
        },
      },
      `node warning: ${warning.name}`,
    );
  for (const warning of waiting.splice(0)) sink(warning);
}
