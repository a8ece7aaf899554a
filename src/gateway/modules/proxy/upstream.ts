import { lookup as dnsLookup, type LookupOptions } from 'node:dns';
import type { EventEmitter } from 'node:events';
import type { Readable, Writable } from 'node:stream';
import { rootCertificates } from 'node:tls';
import { Pool, type Dispatcher } from 'undici';
import type { CircuitBreaker } from './circuit-breaker.js';
import type { UpstreamConfig } from './proxy-config.js';

/** How an upstream call failed, for the status code and the metrics. */
export type UpstreamFailure = 'refused' | 'dns' | 'reset' | 'timeout' | 'tls' | 'other' | 'circuit_open';

export class UpstreamError extends Error {
  constructor(
    readonly kind: UpstreamFailure,
    cause: unknown,
  ) {
    super(`upstream ${kind}`, { cause });
    this.name = 'UpstreamError';
  }
}

const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'ECONNABORTED', 'EHOSTUNREACH', 'ENETUNREACH']);
/** OpenSSL's verification failures that carry neither a `CERT_` nor an `ERR_TLS` prefix. */
const TLS_VERIFY_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
]);

export function classifyUpstreamError(error: unknown): UpstreamFailure {
  const code = (error as { code?: string } | null)?.code ?? '';
  if (code === 'ECONNREFUSED') return 'refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'dns';
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'ETIMEDOUT')
    return 'timeout';
  if (RESET_CODES.has(code)) return 'reset';
  if (code.startsWith('ERR_TLS') || code.startsWith('CERT_') || code.includes('SSL') || TLS_VERIFY_CODES.has(code)) return 'tls';
  return 'other';
}

export interface UpstreamRequest {
  method: string;
  /** Path below the upstream's prefix, with the raw query string. */
  path: string;
  headers: Record<string, string | string[]>;
  /** The body: streamed, or whole (a small body that arrived with the headers). */
  body: Readable | Buffer | undefined;
  /** Emits 'abort' when the client went away. */
  signal: (EventEmitter & { aborted: boolean }) | undefined;
}

const DESCRIPTION_LIMIT = 20 * 1_048_576;

/**
 * RFC 6761 6.4: names under `.invalid` never resolve, and resolvers should answer so at once
 * without asking a DNS server; glibc asks anyway. An upstream configured with such a name fails as
 * a DNS failure (502) without a query leaving the machine.
 */
export const reservedNameLookup = ((hostname: string, options: LookupOptions, callback: (...args: unknown[]) => void) => {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  if (name === 'invalid' || name.endsWith('.invalid')) {
    return process.nextTick(() => callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname })));
  }
  return dnsLookup(hostname, options, callback as never);
}) as unknown as typeof dnsLookup;

/**
 * Statuses that never have a body (RFC 9110 15.3.5, 15.4.5). The client's answer is complete with
 * their headers; whatever an upstream sends after them (a Content-Length and bytes, which undici
 * reports as an error) is not relayed, and undici drops that upstream connection.
 */
const BODYLESS_STATUSES = new Set([204, 304]);

/** One upstream service: a keep-alive connection pool and the call with its timeouts and retry rule. */
export interface UpstreamDeps {
  config: UpstreamConfig;
  /** Keep-alive connections to the upstream at most. */
  connections: number;
  /** Idempotent requests retried after a connection failure. */
  retries: number;
  breaker: CircuitBreaker;
  /** Extra trusted authorities (PEM) for an HTTPS upstream, added to Node's roots. */
  caCertificates?: string | undefined;
}

/**
 * One attempt of a relayed call, as undici's dispatch handler: the answer's headers go to
 * `onHeaders`, its body to the writable that returns, with back-pressure. A class, so that the
 * handler's methods are made once, not as closures per request (the proxy's hot path).
 */
class RelayAttempt implements Dispatcher.DispatchHandler {
  private target: Writable | undefined = undefined;
  private resume: (() => void) | undefined = undefined;
  private abortUpstream: ((error?: Error) => void) | undefined = undefined;
  private bodyless = false;
  private readonly onClientAbort = (): void => this.abortUpstream?.(new Error('client went away'));

  constructor(
    private readonly request: UpstreamRequest,
    private readonly onAnswer: (status: number, rawHeaders: Buffer[]) => Writable,
    private readonly state: { answered: boolean },
    private readonly resolve: () => void,
    private readonly reject: (error: Error) => void,
  ) {
    request.signal?.on('abort', this.onClientAbort);
  }

  private settle(error?: Error): void {
    this.request.signal?.removeListener('abort', this.onClientAbort);
    if (error) this.reject(error);
    else this.resolve();
  }

  onConnect(abort: (error?: Error) => void): void {
    this.abortUpstream = abort;
    if (this.request.signal?.aborted) abort(new Error('client went away'));
  }

  onHeaders(status: number, rawHeaders: Buffer[], resume: () => void): boolean {
    if (status < 200) return true; // 1xx: the final answer follows
    this.state.answered = true;
    const target = (this.target = this.onAnswer(status, rawHeaders));
    if (BODYLESS_STATUSES.has(status)) {
      this.bodyless = true;
      target.end();
      return true;
    }
    this.resume = resume;
    target.on('drain', resume);
    return true;
  }

  onData(chunk: Buffer): boolean {
    return this.bodyless || this.target!.write(chunk);
  }

  onComplete(): void {
    if (this.resume) this.target?.removeListener('drain', this.resume);
    if (!this.bodyless) this.target?.end();
    this.settle();
  }

  onError(error: Error): void {
    if (this.resume) this.target?.removeListener('drain', this.resume);
    // A body after a 204/304 (undici: length mismatch): the client's answer is already complete.
    this.settle(this.bodyless ? undefined : error);
  }
}

export class Upstream {
  private readonly pool: Pool;
  readonly config: UpstreamConfig;
  private readonly retries: number;
  private readonly breaker: CircuitBreaker;

  constructor({ config, connections, retries, breaker, caCertificates }: UpstreamDeps) {
    this.config = config;
    this.retries = retries;
    this.breaker = breaker;
    this.pool = new Pool(config.origin, {
      connect: { lookup: reservedNameLookup, ...(caCertificates ? { ca: [...rootCertificates, caCertificates] } : {}) },
      connections,
      pipelining: 1,
      keepAliveTimeout: 4_000,
      connectTimeout: Math.min(config.timeoutMs, 10_000),
      headersTimeout: config.timeoutMs,
      bodyTimeout: config.timeoutMs,
    });
  }

  /**
   * Sends the request and relays the answer: `onHeaders` gets the status and raw headers when they
   * arrive and returns the writable the body goes to (written with back-pressure). A dispatch
   * handler rather than `request`/`stream`: no intermediate body stream and no async-resource
   * bookkeeping per request, which the profile showed. Resolves when the body is relayed.
   * A body-less GET or HEAD is tried again after a connection error before any response (it cannot
   * have had an effect); nothing else is.
   */
  async relay(request: UpstreamRequest, onHeaders: (status: number, rawHeaders: Buffer[]) => Writable): Promise<void> {
    const retryable = request.body === undefined && (request.method === 'GET' || request.method === 'HEAD');
    const verdict = this.breaker.enter();
    if (!verdict) throw new UpstreamError('circuit_open', undefined);
    try {
      for (let attempt = 0; ; attempt += 1) {
        const state = { answered: false };
        try {
          await this.dispatchOnce(request, onHeaders, state);
          verdict.succeeded();
          return;
        } catch (error) {
          if (state.answered) verdict.succeeded();
          if (state.answered || request.signal?.aborted) throw error;
          const kind = classifyUpstreamError(error);
          if (retryable && attempt < this.retries && (kind === 'refused' || kind === 'reset')) continue;
          // A request body that broke (client gone, size limit) says nothing about the upstream.
          if (kind !== 'other') verdict.failed();
          throw new UpstreamError(kind, error);
        }
      }
    } finally {
      // Whatever ended the call without a verdict (the client left, 'other'): a trial frees its slot.
      verdict.released();
    }
  }

  private dispatchOnce(
    request: UpstreamRequest,
    onHeaders: (status: number, rawHeaders: Buffer[]) => Writable,
    state: { answered: boolean },
  ): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pool.dispatch(
        {
          method: request.method,
          path: this.config.pathPrefix + request.path,
          headers: request.headers,
          body: request.body ?? null,
        },
        new RelayAttempt(request, onHeaders, state, resolve, reject),
      );
    });
  }

  /** A GET the gateway makes itself (the service's API description). */
  async fetchJson(path: string, timeoutMs: number): Promise<{ status: number; json: unknown }> {
    const response = await this.pool.request({
      method: 'GET',
      path: this.config.pathPrefix + path,
      headers: { accept: 'application/json' },
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    // A description is JSON and not huge; anything else is not read.
    const declared = Number(response.headers['content-length'] ?? 0);
    if (response.statusCode !== 200 || declared > DESCRIPTION_LIMIT) {
      await response.body.dump();
      return { status: response.statusCode === 200 ? 413 : response.statusCode, json: undefined };
    }
    let size = 0;
    const chunks: Buffer[] = [];
    for await (const chunk of response.body) {
      size += (chunk as Buffer).length;
      if (size > DESCRIPTION_LIMIT) {
        response.body.destroy();
        return { status: 413, json: undefined };
      }
      chunks.push(chunk as Buffer);
    }
    return { status: 200, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
