import { readdirSync, readFileSync } from 'node:fs';
import { eventually } from './eventually.js';

/**
 * What a fault test reads of a real process (Linux /proc): its open file descriptors and resident
 * memory. A fault that leaks shows up here as a count that does not come back down.
 */
export interface ProcessFootprint {
  fds: number;
  rssBytes: number;
}

export function footprint(pid: number): ProcessFootprint {
  const fds = readdirSync(`/proc/${pid}/fd`).length;
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const rssKb = Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1] ?? 0);
  return { fds, rssBytes: rssKb * 1024 };
}

/**
 * Waits until the process's descriptors are back to `baseline` (plus `fdSlack` for pooled
 * keep-alive sockets) and its memory within `rssSlackBytes` of it; throws with both readings if
 * they do not come back within `timeoutMs`.
 */
export async function settlesBack(
  pid: number,
  baseline: ProcessFootprint,
  { fdSlack = 4, rssSlackBytes = 64 * 1_048_576, timeoutMs = 15_000 } = {},
): Promise<ProcessFootprint> {
  return eventually(
    async () => {
      const now = footprint(pid);
      if (now.fds > baseline.fds + fdSlack || now.rssBytes > baseline.rssBytes + rssSlackBytes) {
        throw new Error(`process ${pid} did not settle: fds ${baseline.fds} -> ${now.fds}, rss ${baseline.rssBytes} -> ${now.rssBytes}`);
      }
      return now;
    },
    timeoutMs,
    100,
  );
}

/** The JSON lines a process printed (pino's log lines), skipping anything else. */
export function jsonLines(output: string): Record<string, unknown>[] {
  return output.split('\n').flatMap((line) => {
    try {
      return [JSON.parse(line) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}
