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

let sharedStdout: ReturnType<typeof pino.destination> | undefined;

/**
 * Asynchronous writes to stdout: lines that come while a write is in flight go out together, so an
 * access line per request is not a write(2) per request (that halved the proxy's throughput). One
 * destination per process, so two services in one process (`cli all`) never interleave partial
 * writes. pino flushes what is pending when the process exits.
 */
function stdout() {
  sharedStdout ??= pino.destination({ dest: 1, sync: false });
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
 * A logger for access lines, whose fields are fixed and free of secrets (service, method, path,
 * query parameter names, status, timings): no redaction pass, which cost about a tenth of a
 * proxied request's CPU. Same level and destination as the service's logger.
 */
export function accessLogger(level: string, stream?: NodeJS.WritableStream): pino.Logger | undefined {
  if (level === 'silent') return undefined;
  return pino({ level }, (stream as pino.DestinationStream | undefined) ?? stdout());
}
