import type { IncomingMessage } from 'node:http';
import proxyAddr from '@fastify/proxy-addr';
import { parseCookie } from 'cookie';
import type { TokenRequest } from '../auth/authenticate.js';
import { dict } from '../../../shared/dict.js';

/** Whether the hop at `address` (0 = the direct peer) may speak for the client. */
export type TrustRule = (address: string, hop: number) => boolean;

/**
 * GATEWAY_TRUST_PROXY read exactly as Fastify reads its `trustProxy` (same library, same rules:
 * a hop count alone trusts no peer), so the proxy, which takes requests before Fastify, sees the
 * same client address, protocol and host as the gateway's own routes.
 */
export function trustRule(trustProxy: boolean | number | string): TrustRule {
  if (trustProxy === true) return () => true;
  if (trustProxy === false || typeof trustProxy === 'number') return () => false;
  return proxyAddr.compile(trustProxy.split(',').map((value) => value.trim()));
}

const lastEntry = (value: string | string[]): string => {
  const text = Array.isArray(value) ? value[value.length - 1]! : value;
  const comma = text.lastIndexOf(',');
  return (comma === -1 ? text : text.slice(comma + 1)).trim();
};

/**
 * A raw request as the token check and the forwarding headers see it; each fact computed on first
 * use. The peer (address, TLS) is recorded when the request arrives: once a request body has been
 * consumed (undici destroys it after sending; so does `pipeline` when an upload fails), Node sets
 * `raw.socket` to null, and the access line is written after that. Nothing here reads the socket later.
 */
export class ClientFacts implements TokenRequest {
  private parsedCookies: Record<string, string | undefined> | undefined;
  /** The direct peer's address ('' if the socket had none, e.g. already closed). */
  readonly peerAddress: string;
  /** Whether the client's connection to us is TLS. */
  readonly encrypted: boolean;

  constructor(
    readonly raw: IncomingMessage,
    private readonly trust: TrustRule,
  ) {
    const socket = raw.socket as (IncomingMessage['socket'] & { encrypted?: boolean }) | null;
    this.peerAddress = socket?.remoteAddress ?? '';
    this.encrypted = socket?.encrypted === true;
  }

  get method(): string {
    return this.raw.method ?? 'GET';
  }

  get headers() {
    return this.raw.headers;
  }

  get cookies(): Readonly<Record<string, string | undefined>> {
    const header = this.raw.headers.cookie;
    return (this.parsedCookies ??= header ? parseCookie(header) : dict());
  }

  /** The direct peer, or the client a trusted proxy in front names. */
  get ip(): string | undefined {
    // An untrusted peer is the client (what proxy-addr answers too, without parsing X-Forwarded-For).
    if (!this.peerTrusted) return this.peerAddress || undefined;
    // proxy-addr reads only `headers` and `socket.remoteAddress`: given the recorded peer, never the live socket.
    const addresses = proxyAddr.all(
      { headers: this.raw.headers, socket: { remoteAddress: this.peerAddress } } as unknown as IncomingMessage,
      this.trust,
    );
    return addresses[addresses.length - 1] || undefined;
  }

  private get peerTrusted(): boolean {
    return this.peerAddress !== '' && this.trust(this.peerAddress, 0);
  }

  get protocol(): string {
    const forwarded = this.raw.headers['x-forwarded-proto'];
    if (forwarded && this.peerTrusted) return lastEntry(forwarded);
    return this.encrypted ? 'https' : 'http';
  }

  get host(): string {
    const forwarded = this.raw.headers['x-forwarded-host'];
    if (forwarded && this.peerTrusted) return lastEntry(forwarded);
    return this.raw.headers.host ?? '';
  }
}
