import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

/**
 * The real CLI (`node --import tsx src/cli.ts <args>`), run to its end, or killed after `timeoutMs`
 * (status null): a service that should have refused to start must not hang the test.
 */
export function runCli(
  args: string[],
  env: Record<string, string>,
  timeoutMs = 120_000,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
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

export interface LogLine {
  msg: string;
  [field: string]: unknown;
}

export interface CliProcess {
  readonly child: ChildProcess;
  readonly lines: LogLine[];
  /** What it wrote on stderr so far. */
  stderr(): string;
  /** The first JSON line (from index `from` on) that passes `check`; rejects if the process exits first. */
  next(check: (line: LogLine) => boolean, from?: number): Promise<LogLine>;
  readonly exited: Promise<number | null>;
}

/** A long-running CLI command (`all`, `gateway`, `logs`) whose stdout is read as JSON log lines. */
export function startCli(args: string[], env: Record<string, string>): CliProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
    env: { ...process.env, HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: LogLine[] = [];
  let stderr = '';
  const waiters = new Set<() => void>();
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  createInterface({ input: child.stdout! }).on('line', (text) => {
    try {
      lines.push(JSON.parse(text) as LogLine);
    } catch {
      return;
    }
    for (const wake of [...waiters]) wake();
  });
  const next = (check: (line: LogLine) => boolean, from = 0): Promise<LogLine> => {
    const found = () => lines.slice(from).find(check);
    return Promise.race([
      new Promise<LogLine>((resolve) => {
        const wake = () => {
          const line = found();
          if (line) {
            waiters.delete(wake);
            resolve(line);
          }
        };
        waiters.add(wake);
        wake();
      }),
      exited.then((code) => Promise.reject(new Error(`${args.join(' ')} exited with ${code}: ${stderr}`))),
    ]);
  };
  return { child, lines, stderr: () => stderr, next, exited };
}
