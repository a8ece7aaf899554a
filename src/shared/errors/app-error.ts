import { ERRORS, type ErrorCode } from './catalogue.js';

export interface AppErrorOptions {
  /** Values for `{placeholders}` in the message. */
  params?: Record<string, string | number>;
  /** Goes to the client as `data` (gateway envelope). */
  data?: Record<string, unknown>;
  /** Extra response headers, e.g. Retry-After. */
  headers?: Record<string, string>;
  cause?: unknown;
}

/** An error with a catalogue code; `expose` errors (all 4xx) show their message to the client. */
export class AppError extends Error {
  readonly status: number;
  readonly expose: boolean;

  constructor(
    readonly code: ErrorCode,
    readonly options: AppErrorOptions = {},
  ) {
    super(ERRORS[code].en, { cause: options.cause });
    this.name = 'AppError';
    this.status = ERRORS[code].status;
    this.expose = this.status < 500;
  }
}
