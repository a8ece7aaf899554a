import type { FastifyServerOptions } from 'fastify';
import cluster from 'node:cluster';
import { fstatSync } from 'node:fs';
import pino from 'pino';

/** Paths pino replaces with "[redacted]": passwords, tokens and credentials never reach a log. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.password',
  '*.kata_sandi',
  '*.kata_sandi_lama',
  '*.konfirmasi_kata_sandi',
  '*.token',
  '*.access_token',
  '*.refresh_token',
  '*.id_token',
];

/**
 * `bytes` (newline-terminated lines) cut at line ends into blocks of at most `limit` bytes; a line
 * longer than `limit` is a block of its own.
 */
export function blocksOfWholeLines(bytes: Buffer, limit: number): Buffer[] {
  const blocks: Buffer[] = [];
  for (let start = 0; start < bytes.length;) {
    let end = bytes.length - start <= limit ? bytes.length : bytes.lastIndexOf(0x0a, start + limit - 1) + 1;
    if (end <= start) end = bytes.indexOf(0x0a, start) + 1 || bytes.length;
    blocks.push(bytes.subarray(start, end));
    start = end;
  }
  return blocks;
}

let sharedStdout: { write(line: string): boolean } | undefined;

/** Longest a log line waits in the buffer. */
const FLUSH_INTERVAL_MS = 1_000;
/**
 * Largest block written at once. A process started with an IPC channel shares its stdout with
 * siblings: the gateway's workers (GATEWAY_WORKERS) under their primary, and the gateway and the
 * logs service under `cli all`'s supervisor. A pipe (or a socket) takes at most PIPE_BUF (4 KiB on
 * Linux) in one piece, so a longer write could interleave with a sibling's there. A file, a
 * terminal or /dev/null takes each write whole (Linux serialises writes to a shared file, and a
 * terminal's under one lock), and a process alone has no sibling: they write larger blocks, since
 * each write is a round trip through libuv's thread pool (docs/performance-notes.md, "Logging to
 * stdout"). (Parents log a few short lines, far below 4 KiB a second.)
 */
export function logBlockSize(sharesStdout: boolean, stdoutIsPipe: boolean): number {
  return sharesStdout && stdoutIsPipe ? 4_096 : 16_384;
}

/** Whether stdout is a pipe or a socket (unknown counts as one: the safe choice). */
function stdoutIsPipe(): boolean {
  try {
    const stat = fstatSync(1);
    return stat.isFIFO() || stat.isSocket();
  } catch {
    return true;
  }
}

const BLOCK = logBlockSize(cluster.isWorker || process.send !== undefined, stdoutIsPipe());

/**
 * Buffered, asynchronous writes to stdout, like nginx's `access_log ... buffer= flush=`: lines go
 * out in blocks of whole lines (`BLOCK`), or after a second at the latest, so an access line per
 * request is not a write(2) per request, and every block reaches a pipe in one piece even with
 * several worker processes writing to it. The lines logged during one turn of the event loop are
 * encoded once and cut at line ends, not measured line by line (docs/performance-notes.md, "Logging
 * to stdout"). One destination per process, so two services in one process
 * (`cli all`) never interleave partial writes. What is pending is written when the process exits.
 */
function stdout(): { write(line: string): boolean } {
  if (!sharedStdout) {
    // Buffer mode: sonic-boom then takes the blocks as they are, without measuring text again.
    const destination = pino.destination({ dest: 1, sync: false, minLength: BLOCK - 1, maxWrite: BLOCK, contentMode: 'buffer' });
    const writeBlock = destination.write.bind(destination) as unknown as (block: Buffer) => boolean;
    let pending: string[] = [];
    let scheduled = false;
    const handOver = () => {
      scheduled = false;
      if (pending.length === 0) return;
      const bytes = Buffer.from(pending.join(''));
      pending = [];
      for (const block of blocksOfWholeLines(bytes, BLOCK)) writeBlock(block);
    };
    setInterval(() => destination.flush(), FLUSH_INTERVAL_MS).unref();
    process.on('exit', () => {
      handOver();
      destination.flushSync();
    });
    sharedStdout = {
      write(line: string) {
        pending.push(line);
        if (!scheduled) {
          scheduled = true;
          setImmediate(handOver);
        }
        return true;
      },
    };
  }
  return sharedStdout;
}

/** Where a service's lines go: `stream` (tests read it) or the shared, buffered stdout. */
export function logDestination(stream?: NodeJS.WritableStream): { write(line: string): unknown } {
  return stream ?? stdout();
}

/** `stream` lets tests read the log lines. */
export function loggerOptions(level: string, stream?: NodeJS.WritableStream): FastifyServerOptions['logger'] {
  if (level === 'silent') return false;
  return {
    level,
    stream: stream ?? stdout(),
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    serializers: {
      // The query string can carry values a client should not have put there: log the path only.
      req: (req: { method: string; url: string; id: string; ip?: string }) => ({
        method: req.method,
        path: req.url.split('?')[0],
        id: req.id,
        ip: req.ip,
      }),
    },
  };
}

/**
 * A logger for lines whose fields are fixed and free of secrets, such as the proxy's access lines
 * (service, method, path, query parameter names, status, timings) and the workers' supervisor: no
 * redaction pass, which cost about a tenth of a proxied request's CPU. Same level and destination
 * as the service's logger.
 */
export function plainLogger(level: string, stream?: NodeJS.WritableStream): pino.Logger | undefined {
  if (level === 'silent') return undefined;
  return pino({ level }, (stream as pino.DestinationStream | undefined) ?? stdout());
}
