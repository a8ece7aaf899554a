import type { FastifyServerOptions } from 'fastify';

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

/** `stream` lets tests read the log lines. */
export function loggerOptions(level: string, stream?: NodeJS.WritableStream): FastifyServerOptions['logger'] {
  if (level === 'silent') return false;
  return {
    level,
    ...(stream ? { stream } : {}),
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
