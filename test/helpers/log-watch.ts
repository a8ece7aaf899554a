import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

export type LogLine = Record<string, unknown> & { msg?: string };

export interface LogWatch {
  /** Every JSON line the process wrote so far. */
  readonly lines: LogLine[];
  /** Everything it wrote (stdout and stderr), for failure messages. */
  output(): string;
  /**
   * The first line (already written, or from now on) that passes `check`: resolves with it, or
   * rejects when the process exits first or `timeoutMs` passes.
   */
  waitFor(check: (line: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  /** Resolves with the exit code (or the signal's name) once the process exited. */
  readonly exited: Promise<number | string>;
}

/** Reads a child's pino lines as they come, so a test waits on what the process says it did. */
export function watchLines(child: ChildProcess): LogWatch {
  const lines: LogLine[] = [];
  let output = '';
  const waiters = new Set<{ check: (line: LogLine) => boolean; resolve: (line: LogLine) => void }>();
  createInterface({ input: child.stdout! }).on('line', (text) => {
    output += `${text}\n`;
    let line: LogLine;
    try {
      line = JSON.parse(text) as LogLine;
    } catch {
      return;
    }
    lines.push(line);
    for (const waiter of waiters) {
      if (!waiter.check(line)) continue;
      waiters.delete(waiter);
      waiter.resolve(line);
    }
  });
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  return {
    lines,
    output: () => output,
    exited,
    waitFor(check, timeoutMs = 30_000) {
      const seen = lines.find(check);
      if (seen) return Promise.resolve(seen);
      return new Promise<LogLine>((resolve, reject) => {
        const waiter = {
          check,
          resolve: (line: LogLine) => {
            clearTimeout(timer);
            resolve(line);
          },
        };
        const fail = (why: string) => {
          waiters.delete(waiter);
          reject(new Error(`${why} before the expected log line:\n${output.slice(-4000)}`));
        };
        const timer = setTimeout(() => fail(`${timeoutMs} ms passed`), timeoutMs);
        waiters.add(waiter);
        void exited.then((code) => {
          if (!waiters.has(waiter)) return;
          clearTimeout(timer);
          fail(`the process exited (${code})`);
        });
      });
    },
  };
}
