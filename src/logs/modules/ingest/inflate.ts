import { Transform, type TransformCallback } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { AppError } from '../../../shared/errors/app-error.js';

/** Apache httpd's mod_deflate default (DeflateInflateRatioLimit); real log batches inflate 5–30x. */
export const DEFAULT_MAX_INFLATE_RATIO = 200;
/** Below this many inflated bytes the ratio is not checked, so a small, very repetitive batch still passes. */
export const INFLATE_RATIO_FLOOR = 65_536;

export type BoundedGunzip = NodeJS.ReadableStream & {
  receivedEncodedLength?: number;
  /** Stops inflating (the answer went out, e.g. 413 at the body limit, while bytes still arrive). */
  stop(): void;
};

/**
 * Counts what it passes on and fails with 413 once the inflated bytes exceed `maxRatio` times the
 * compressed bytes read so far: a gzip bomb is stopped after a few chunks instead of being inflated
 * up to the body limit.
 */
class InflationBound extends Transform {
  private inflated = 0;
  constructor(
    private readonly compressed: () => number,
    private readonly maxRatio: number,
    private readonly stopInflating: () => void,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.inflated += chunk.length;
    if (this.inflated > INFLATE_RATIO_FLOOR && this.inflated > this.maxRatio * this.compressed()) {
      this.stopInflating();
      callback(new AppError('LOGS_BODY_TOO_LARGE'));
      return;
    }
    callback(null, chunk);
  }
}

/**
 * The decompressed body of a gzip request, bounded by ratio. Errors are the client's (400 for bad
 * gzip, 413 past the ratio); the raw request stream is only unpiped, never destroyed, so the error
 * answer can still be written on its socket.
 */
export function boundedGunzip(payload: NodeJS.ReadableStream, maxRatio: number): BoundedGunzip {
  const gunzip = createGunzip();
  let compressed = 0;
  const stop = () => {
    payload.unpipe(gunzip);
    gunzip.destroy();
  };
  const bound = new InflationBound(() => compressed, maxRatio, stop) as InflationBound & BoundedGunzip;
  bound.receivedEncodedLength = 0;
  bound.stop = () => {
    stop();
    bound.destroy();
  };
  // Fastify stops listening once it has refused a body; a late error must not become an uncaught one.
  bound.on('error', () => {});
  payload.on('data', (chunk: Buffer) => {
    compressed += chunk.length;
    bound.receivedEncodedLength = compressed;
  });
  payload.on('error', (error: Error) => bound.destroy(error));
  gunzip.on('error', (error: Error & { statusCode?: number }) => {
    error.statusCode ??= 400;
    bound.destroy(error);
  });
  payload.pipe(gunzip).pipe(bound);
  return bound;
}
