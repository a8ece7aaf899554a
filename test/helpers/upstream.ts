import { createHash } from 'node:crypto';
import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';

/** What an upstream saw of one request. */
export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
  body: Buffer;
}

export interface TestUpstream {
  url: string;
  port: number;
  seen: SeenRequest[];
  close(): Promise<void>;
}

/**
 * A real HTTP server on 127.0.0.1 that records what it receives. `handle` answers; when it
 * returns false the request body has not been read and is recorded as empty.
 */
export async function startUpstream(
  handle: (req: IncomingMessage, res: ServerResponse, seen: SeenRequest) => void | Promise<void>,
): Promise<TestUpstream> {
  const seen: SeenRequest[] = [];
  const server: Server = createServer((req, res) => {
    const entry: SeenRequest = {
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      rawHeaders: req.rawHeaders,
      body: Buffer.alloc(0),
    };
    seen.push(entry);
    void handle(req, res, entry);
  });
  server.keepAliveTimeout = 10_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Reads a whole body (for small bodies in tests). */
export async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Length and SHA-256 of a stream, without keeping it. */
export async function digestStream(stream: Readable): Promise<{ length: number; sha256: string }> {
  const hash = createHash('sha256');
  let length = 0;
  for await (const chunk of stream) {
    hash.update(chunk as Buffer);
    length += (chunk as Buffer).length;
  }
  return { length, sha256: hash.digest('hex') };
}

/** A port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
  body: Buffer;
  /** The connection closed before the body was complete. */
  aborted: boolean;
}

/**
 * A request with the path sent exactly as written (no URL normalisation, unlike fetch), over a
 * fresh connection. `body` may be a stream.
 */
export function rawRequest(
  port: number,
  method: string,
  path: string,
  options: {
    headers?: Record<string, string | string[]>;
    body?: Buffer | string | Readable;
    consume?: (res: IncomingMessage) => Promise<Buffer>;
  } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers: options.headers, agent: false }, (res) => {
      let aborted = false;
      res.on('aborted', () => (aborted = true));
      const consume = options.consume ?? readAll;
      consume(res).then(
        (body) =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            rawHeaders: res.rawHeaders,
            body,
            aborted: aborted || !res.complete,
          }),
        () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, rawHeaders: res.rawHeaders, body: Buffer.alloc(0), aborted: true }),
      );
    });
    req.on('error', reject);
    const body = options.body;
    if (body === undefined) req.end();
    else if (typeof body === 'string' || Buffer.isBuffer(body)) req.end(body);
    else body.pipe(req);
  });
}
