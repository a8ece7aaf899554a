import { once } from 'node:events';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect, type Socket } from 'node:net';

/**
 * Raw HTTP/1.1 on a real socket, for fault tests: bytes no well-behaved client would send, and
 * clients that go away at a chosen moment. Everything goes to 127.0.0.1.
 */

function connected(port: number): Promise<Socket> {
  const socket = connect({ host: '127.0.0.1', port });
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}

export interface RawExchange {
  /** Everything the server sent, as latin1 text. */
  text: string;
  /** Status codes of every response in `text`, in order (pipelined requests get several). */
  statuses: number[];
  /** The server closed the connection (rather than the client giving up at `timeoutMs`). */
  closedByServer: boolean;
}

/** The status line codes in a stream of responses. */
export function statusesOf(text: string): number[] {
  return [...text.matchAll(/HTTP\/1\.[01] (\d{3}) /g)].map((match) => Number(match[1]));
}

/** The JSON body of the last response in `text` (the bytes after its blank line). */
export function lastJsonBody(text: string): unknown {
  const start = text.lastIndexOf('HTTP/1.');
  const body = text.slice(text.indexOf('\r\n\r\n', start) + 4);
  const chunked = /\r\ntransfer-encoding: chunked\r\n/i.test(text.slice(start));
  return JSON.parse(chunked ? body.replace(/^[0-9a-f]+\r\n/i, '').replace(/\r\n0\r\n\r\n$/, '') : body);
}

/**
 * Writes `parts` one after another (each a separate write), then reads until `expectResponses` whole
 * responses arrived (then the client closes), the server closes the connection, or `timeoutMs` runs out.
 */
export async function rawExchange(
  port: number,
  parts: (string | Buffer)[],
  { timeoutMs = 10_000, expectResponses = 1 } = {},
): Promise<RawExchange> {
  const socket = await connected(port);
  let text = '';
  let clientClosed = false;
  let closedByServer = false;
  const done = new Promise<void>((resolve) => {
    const giveUp = () => {
      clientClosed = true;
      socket.destroy();
      resolve();
    };
    const timer = setTimeout(giveUp, timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if (responsesComplete(text, expectResponses)) {
        clearTimeout(timer);
        giveUp();
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      if (!clientClosed) closedByServer = true;
      resolve();
    });
  });
  for (const part of parts) {
    if (socket.destroyed) break;
    await new Promise<void>((resolve) => socket.write(part, () => resolve()));
  }
  await done;
  return { text, statuses: statusesOf(text), closedByServer };
}

/** Whether the first `count` responses in `text` are whole (Content-Length bodies or a final chunk). */
function responsesComplete(text: string, count: number): boolean {
  let offset = 0;
  for (let i = 0; i < count; i += 1) {
    const head = text.indexOf('\r\n\r\n', offset);
    if (head < 0) return false;
    const headers = text.slice(offset, head);
    const length = /\r\ncontent-length: (\d+)/i.exec(headers);
    if (length) {
      offset = head + 4 + Number(length[1]);
      if (text.length < offset) return false;
    } else if (/\r\ntransfer-encoding: chunked/i.test(headers)) {
      const end = text.indexOf('\r\n0\r\n\r\n', head);
      if (end < 0) return false;
      offset = end + 7;
    } else {
      return /^HTTP\/1\.[01] (204|304)/.test(headers);
    }
  }
  return true;
}

/**
 * Sends `head` (request line and headers, with the blank line) and `partialBody`, then closes the
 * connection before the server answers: a client that died mid-upload. Resolves once closed.
 */
export async function sendThenClose(port: number, head: string, partialBody: Buffer | string = ''): Promise<void> {
  const socket = await connected(port);
  socket.on('error', () => {});
  await new Promise<void>((resolve) => socket.write(head, () => resolve()));
  if (partialBody.length > 0) await new Promise<void>((resolve) => socket.write(partialBody, () => resolve()));
  const closed = once(socket, 'close');
  socket.destroy();
  await closed;
}

/** The request head of `method path` with the given headers (Host added), ending with the blank line. */
export function requestHead(method: string, path: string, headers: Record<string, string | number> = {}): string {
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1', ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)];
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/**
 * A GET whose client reads the first chunk of the response body and then destroys the connection
 * (a download cancelled in the browser). Resolves with the status and the size of that chunk; rejects
 * if the response ended before its first chunk was read (the stream was not still going).
 */
export function readFirstChunkThenDestroy(
  port: number,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: IncomingHttpHeaders; firstChunkBytes: number }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method: 'GET', path, headers, agent: false }, (res) => {
      res.once('data', (chunk: Buffer) => {
        const complete = res.complete;
        req.destroy();
        if (complete) reject(new Error('the whole response arrived in its first chunk: the stream was not still going'));
        else resolve({ status: res.statusCode ?? 0, headers: res.headers, firstChunkBytes: chunk.length });
      });
      res.once('end', () => reject(new Error('the response ended before the client could close it')));
    });
    req.on('error', (error) => {
      if (!req.destroyed) reject(error);
    });
    req.end();
  });
}
