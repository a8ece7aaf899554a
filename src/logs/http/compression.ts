// Compression of what the logs service answers (docs/console.md, "Build and serving"): the console's
// hashed assets and the API's JSON, brotli or gzip as the client's Accept-Encoding asks, with
// node:zlib (no dependency). Small answers are sent as they are: compressing them saves nothing.
import { promisify } from 'node:util';
import { brotliCompress, brotliCompressSync, constants, gzip, gzipSync } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';

export type Encoding = 'br' | 'gzip';

/** Below this many bytes an answer is sent uncompressed. */
export const MIN_COMPRESSED_BYTES = 1024;

const brotliAsync = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/**
 * The encoding to answer with: brotli when the client accepts it, else gzip, else none. A coding
 * with `q=0` is refused; `*` accepts both (RFC 9110, 12.5.3).
 */
export function chosenEncoding(acceptEncoding: string | string[] | undefined): Encoding | null {
  if (acceptEncoding === undefined) return null;
  const weights = new Map<string, number>();
  for (const part of String(acceptEncoding).split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (!name) continue;
    const q = params.map((param) => /^\s*q=([0-9.]+)\s*$/.exec(param)?.[1]).find((value) => value !== undefined);
    weights.set(name, q === undefined ? 1 : Number(q));
  }
  const accepts = (name: Encoding) => (weights.get(name) ?? weights.get('*') ?? 0) > 0;
  if (accepts('br')) return 'br';
  if (accepts('gzip')) return 'gzip';
  return null;
}

/** Compressed once (hashed assets never change): brotli at its best, gzip at 9. */
export function compressAsset(body: Buffer, encoding: Encoding): Buffer {
  return encoding === 'br'
    ? brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } })
    : gzipSync(body, { level: 9 });
}

/**
 * onSend: a JSON answer of at least MIN_COMPRESSED_BYTES is compressed when the client accepts it
 * (brotli at quality 4 and gzip at 6: fast, most of the gain for JSON), off the event loop (zlib's
 * thread pool). Streams (exports) and other types are left alone.
 */
export async function compressJson(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
  if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload;
  if (reply.hasHeader('content-encoding')) return payload;
  const type = String(reply.getHeader('content-type') ?? '');
  if (!type.startsWith('application/json')) return payload;
  const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
  reply.header('vary', 'accept-encoding');
  if (body.length < MIN_COMPRESSED_BYTES) return payload;
  const encoding = chosenEncoding(request.headers['accept-encoding']);
  if (encoding === null) return payload;
  const compressed =
    encoding === 'br'
      ? await brotliAsync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 4, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } })
      : await gzipAsync(body, { level: 6 });
  reply.header('content-encoding', encoding);
  reply.removeHeader('content-length');
  return compressed;
}
