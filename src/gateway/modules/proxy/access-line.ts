import { hostname } from 'node:os';
import pino from 'pino';
import { logDestination } from '../../../shared/http/logger.js';

/** What the access line of one proxied request says (no query values, no headers, no token). */
export interface AccessFields {
  reqId: string;
  service: string;
  method: string;
  path: string;
  /** Names of the query parameters (`a,b`), never their values. */
  query: string | undefined;
  status: number;
  upstreamMs: number | undefined;
  totalMs: number;
  failure: string | undefined;
}

export type AccessLine = (fields: AccessFields) => void;

/** Characters a JSON string must escape (and the lone surrogates JSON.stringify writes as escapes). */
// eslint-disable-next-line no-control-regex -- control characters are exactly what must be escaped
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** A JSON string literal: most values (paths, ids, service names) need no escaping at all. */
const quoted = (text: string): string => (NEEDS_ESCAPE.test(text) ? JSON.stringify(text) : `"${text}"`);

/**
 * The proxy's access line, in exactly the shape pino writes it (`level`, `time`, `pid`, `hostname`,
 * the fields in order, `msg: "proxied"`), formatted by hand into one string: pino's generic path
 * (its level and serializer machinery, a JSON.stringify per value) was about a twentieth of a
 * proxied request's CPU (docs/benchmarks.md, "Proxy: issue 43"). The line goes to the same
 * destination as the service's other lines (logger.ts: buffered, one write per event-loop turn in
 * blocks of whole lines). Undefined when the level leaves info lines out.
 */
export function accessLine(level: string, stream?: NodeJS.WritableStream): AccessLine | undefined {
  if (level === 'silent') return undefined;
  const threshold = pino.levels.values[level];
  if (threshold === undefined || threshold > pino.levels.values.info!) return undefined;
  const destination = logDestination(stream);
  // What pino puts after the time: its default `base` (pid and hostname).
  const base = `,"pid":${process.pid},"hostname":${quoted(hostname())}`;
  return (f) => {
    let line = `{"level":30,"time":${Date.now()}${base},"reqId":${quoted(f.reqId)},"service":${quoted(f.service)},"method":${quoted(f.method)},"path":${quoted(f.path)}`;
    if (f.query !== undefined) line += `,"query":${quoted(f.query)}`;
    line += `,"status":${f.status}`;
    if (f.upstreamMs !== undefined) line += `,"upstreamMs":${f.upstreamMs}`;
    line += `,"totalMs":${f.totalMs}`;
    if (f.failure !== undefined) line += `,"failure":${quoted(f.failure)}`;
    destination.write(`${line},"msg":"proxied"}\n`);
  };
}
