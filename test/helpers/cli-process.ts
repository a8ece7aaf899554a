import { spawn, type ChildProcess } from 'node:child_process';
import { watchLines, type LogWatch } from './log-watch.js';
import { nodeArgs } from './node-args.js';

/**
 * The real CLI (`src/cli.ts <args>`, as helpers/node-args.ts runs it), run to its end, or killed after `timeoutMs`
 * (status null): a service that should have refused to start must not hang the test.
 */
export function runCli(
  args: string[],
  env: Record<string, string>,
  timeoutMs = 120_000,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...nodeArgs('src/cli.ts'), ...args], {
    env: { ...process.env, LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: timeoutMs,
    killSignal: 'SIGKILL',
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.once('close', (status) => resolve({ status, stdout, stderr })));
}

export interface CliProcess extends LogWatch {
  readonly child: ChildProcess;
}

/** A long-running CLI command (`all`, `gateway`, `logs`) whose stdout is read as JSON log lines. */
export function startCli(args: string[], env: Record<string, string>): CliProcess {
  const child = spawn(process.execPath, [...nodeArgs('src/cli.ts'), ...args], {
    env: { ...process.env, HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return { child, ...watchLines(child) };
}
