import type { FastifyServerOptions } from 'fastify';
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

let sharedStdout: { write(line: string): boolean } | undefined;

/** Longest a log line waits in the buffer. */
const FLUSH_INTERVAL_MS = 1_000;
/**
 * Largest write a pipe takes in one piece (PIPE_BUF on Linux): the gateway's worker processes
 * share one stdout, and a longer write could interleave with another worker's.
 */
const ATOMIC_WRITE = 4_096;

/**
 * Buffered, asynchronous writes to stdout, like nginx's `access_log ... buffer= flush=`: lines go
 * out in blocks of whole lines up to 4 KiB, or after a second at the latest, so an access line per
 * request is not a write(2) per request (unbuffered, that halved the proxy's throughput), and
 * every block reaches a pipe in one piece even with several worker processes writing to it. Lines
 * logged during one turn of the event loop reach the destination as few strings: sonic-boom
 * measures its pending buffer on every write, which cost a few per cent of the proxy's throughput
 * with a line per request. One destination per process, so two services in one process
 * (`cli all`) never interleave partial writes. What is pending is written when the process exits.
 */
function stdout(): { write(line: string): boolean } {
  if (!sharedStdout) {
    const destination = pino.destination({ dest: 1, sync: false, minLength: ATOMIC_WRITE - 1, maxWrite: ATOMIC_WRITE });
    let pending: string[] = [];
    let scheduled = false;
    const handOver = () => {
      scheduled = false;
      let block = '';
      let blockBytes = 0;
      for (const line of pending) {
        const bytes = Buffer.byteLength(line);
        if (blockBytes + bytes > ATOMIC_WRITE && blockBytes > 0) {
          destination.write(block);
          block = '';
          blockBytes = 0;
        }
        block += line;
        blockBytes += bytes;
      }
      if (blockBytes > 0) destination.write(block);
      pending = [];
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
