import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

/** One pino line a child wrote. */
export interface LogLine {
  msg: string;
  pid: number;
  [field: string]: unknown;
}

export interface WaitOptions {
  /** Only lines from this index of `lines` on count (default 0: lines already written count too). */
  from?: number;
  timeoutMs?: number;
}

export interface LogWatch {
  /** Every JSON line the process wrote so far. */
  readonly lines: LogLine[];
  /** The stdout lines that were not JSON (a torn or interleaved line shows up here). */
  readonly unparsed: string[];
  /** Everything it wrote (stdout and stderr), for failure messages. */
  output(): string;
  /**
   * The first line (from `from` on, already written or still to come) that passes `check`: resolves
   * with it, or rejects when the process exits first or `timeoutMs` (default 60 s) passes.
   */
  waitFor(check: (line: LogLine) => boolean, options?: WaitOptions): Promise<LogLine>;
  /** Resolves with the exit code (or the signal's name) once the process exited. */
  readonly exited: Promise<number | string>;
}

/**
 * Reads a child's pino lines as they come, so a test waits on what the process says it did. The one
 * line watcher of the tests: every helper that starts a service reads its output through it.
 */
export function watchLines(child: ChildProcess): LogWatch {
  const lines: LogLine[] = [];
  const unparsed: string[] = [];
  let output = '';
  const waiters = new Set<{ check: (line: LogLine, index: number) => boolean; resolve: (line: LogLine) => void }>();
  createInterface({ input: child.stdout! }).on('line', (text) => {
    output += `${text}\n`;
    let line: LogLine;
    try {
      line = JSON.parse(text) as LogLine;
    } catch {
      unparsed.push(text); // not a log line (a compiler's output before the service starts)
      return;
    }
    const index = lines.push(line) - 1;
    for (const waiter of waiters) {
      if (!waiter.check(line, index)) continue;
      waiters.delete(waiter);
      waiter.resolve(line);
    }
  });
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  return {
    lines,
    unparsed,
    output: () => output,
    exited,
    waitFor(check, { from = 0, timeoutMs = 60_000 } = {}) {
      const seen = lines.slice(from).find(check);
      if (seen) return Promise.resolve(seen);
      return new Promise<LogLine>((resolve, reject) => {
        const waiter = {
          check: (line: LogLine, index: number) => index >= from && check(line),
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
