import type { IncomingHttpHeaders } from 'node:http';
import { ACCESS_COOKIE } from '../auth/access-cookie.js';
import { dict } from '../../../shared/dict.js';

/** RFC 9110 7.6.1 hop-by-hop fields (and `Proxy-*`, handled by prefix): never forwarded either way. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'te',
  'transfer-encoding',
  'upgrade',
  'trailer',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'http2-settings',
]);

/**
 * Request fields the gateway sets itself, so a client cannot forge them. `Expect` was answered by
 * our own server (100 Continue) already.
 */
const GATEWAY_SET = new Set([
  'host',
  'expect',
  'authorization',
  'x-user-id',
  'x-request-id',
  'x-forwarded-for',
  'x-forwarded-proto',
  'x-forwarded-host',
]);
/** Client statements about the path to us: kept only when the proxy in front is trusted. */
const FORWARDING = new Set(['forwarded', 'x-real-ip', 'x-forwarded-port', 'x-forwarded-prefix']);

/** The gateway's own session cookie stays at the gateway: upstreams get the token in Authorization. */
function withoutGatewayCookie(value: string | string[]): string | undefined {
  const pairs = (Array.isArray(value) ? value.join('; ') : value).split(';').map((pair) => pair.trim());
  const kept = pairs.filter((pair) => pair !== '' && !pair.startsWith(`${ACCESS_COOKIE}=`));
  return kept.length > 0 ? kept.join('; ') : undefined;
}

function connectionNamed(value: string | string[] | undefined): Set<string> | undefined {
  if (value === undefined) return undefined;
  const text = Array.isArray(value) ? value.join(',') : value;
  return new Set(
    text
      .split(',')
      .map((token) => token.trim().toLowerCase())
      .filter(Boolean),
  );
}

/** What happens to a request field on its way upstream, by lower-case name. */
const Rule = {
  Drop: 1,
  /** Kept only when the proxy in front is trusted. */
  Forwarding: 2,
  Cookie: 3,
} as const;
type Rule = (typeof Rule)[keyof typeof Rule];

/**
 * The request rules above as one table, looked up once per field (fields not in it are copied,
 * unless a `Proxy-*` prefix or the request's Connection header names them).
 */
const REQUEST_RULES = new Map<string, Rule>([
  ...[...HOP_BY_HOP, ...GATEWAY_SET].map((name) => [name, Rule.Drop] as const),
  ...[...FORWARDING].map((name) => [name, Rule.Forwarding] as const),
  ['cookie', Rule.Cookie],
]);

export interface ForwardedFacts {
  authorization: string;
  requestId: string;
  userId: string;
  forwardedFor: string;
  forwardedProto: string;
  forwardedHost: string | undefined;
  trustForwarding: boolean;
  /** `traceparent` (and `tracestate`) of the gateway's span for this call. */
  trace?: Record<string, string> | undefined;
}

/** The headers that go upstream: the client's, less Host and hop-by-hop, plus the gateway's own. */
export function upstreamRequestHeaders(incoming: IncomingHttpHeaders, facts: ForwardedFacts): Record<string, string | string[]> {
  const connection = incoming.connection;
  // Nearly every client says `keep-alive`, a field dropped anyway: nothing else named.
  const named = connection === undefined || connection === 'keep-alive' ? undefined : connectionNamed(connection);
  const out = dict<string | string[]>();
  for (const name in incoming) {
    const value = incoming[name];
    if (value === undefined) continue;
    const rule = REQUEST_RULES.get(name);
    if (rule === undefined) {
      if (name.startsWith('proxy-') || (named !== undefined && named.has(name))) continue;
      out[name] = value;
    } else if (rule === Rule.Forwarding) {
      if (facts.trustForwarding && (named === undefined || !named.has(name))) out[name] = value;
    } else if (rule === Rule.Cookie) {
      if (named !== undefined && named.has(name)) continue;
      const cookie = withoutGatewayCookie(value);
      if (cookie !== undefined) out.cookie = cookie;
    }
  }
  out.authorization = facts.authorization;
  out['x-request-id'] = facts.requestId;
  out['x-user-id'] = facts.userId;
  out['x-forwarded-for'] = facts.forwardedFor;
  out['x-forwarded-proto'] = facts.forwardedProto;
  if (facts.forwardedHost !== undefined) out['x-forwarded-host'] = facts.forwardedHost;
  // W3C trace context of the gateway's client span, when tracing is on (replaces a client's own).
  if (facts.trace) Object.assign(out, facts.trace);
  return out;
}

/**
 * The upstream's response headers as undici hands them over (name, value, name, value, ...), less
 * hop-by-hop ones, as a flat list for `res.writeHead` (keeps repeated fields such as Set-Cookie).
 * Decoded as latin1, the way Node writes them back, so every byte arrives unchanged. `defaults`
 * (lower-case name, value, ...) are added when the upstream sent no field of that name.
 */
export function clientResponseHeaders(raw: readonly (Buffer | string)[], defaults: readonly string[]): string[] {
  const out: string[] = [];
  let named: Set<string> | undefined;
  let present = 0; // bit i: defaults[2i] was sent
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toString('latin1');
    const lower = name.toLowerCase();
    if (lower === 'connection') {
      const value = raw[i + 1]!.toString('latin1');
      // Nearly every upstream says `keep-alive` (or `close`): both hop-by-hop already.
      if (/^\s*(keep-alive|close)\s*$/i.test(value)) continue;
      for (const token of connectionNamed(value)!) if (!HOP_BY_HOP.has(token)) (named ??= new Set()).add(token);
      continue;
    }
    if (HOP_BY_HOP.has(lower) || lower.startsWith('proxy-')) continue;
    for (let d = 0; d < defaults.length; d += 2) if (defaults[d] === lower) present |= 1 << (d / 2);
    out.push(name, raw[i + 1]!.toString('latin1'));
  }
  if (named !== undefined) {
    // Fields the upstream's Connection header named are hop-by-hop too (rare beyond keep-alive).
    for (let i = out.length - 2; i >= 0; i -= 2) if (named.has(out[i]!.toLowerCase())) out.splice(i, 2);
  }
  for (let d = 0; d < defaults.length; d += 2) if ((present & (1 << (d / 2))) === 0) out.push(defaults[d]!, defaults[d + 1]!);
  return out;
}

/** A 204 must not carry Content-Length (RFC 9110 8.6): dropped from a flat header list, whatever the upstream said. */
export function withoutBodyFraming(headers: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < headers.length; i += 2) if (headers[i]!.toLowerCase() !== 'content-length') out.push(headers[i]!, headers[i + 1]!);
  return out;
}
