import { randomFillSync } from 'node:crypto';

/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/) for the gateway's spans: reading a
 * client's `traceparent`, making ids, and the sampling decision. Kept to what the gateway needs.
 */

export interface ParentContext {
  readonly traceId: string;
  readonly spanId: string;
  readonly sampled: boolean;
  /** The client's `tracestate`, passed on unchanged to the upstream. */
  readonly traceState: string | undefined;
}

// version-traceid-parentid-flags; a future version may append fields after the flags.
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

/** The caller's trace context, or undefined when absent or invalid (then the gateway starts a trace). */
export function parseTraceparent(header: string | string[] | undefined, state: string | string[] | undefined): ParentContext | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (!value) return undefined;
  const match = TRACEPARENT.exec(value);
  if (!match) return undefined;
  const [, version, traceId, spanId, flags, rest] = match as unknown as [string, string, string, string, string, string | undefined];
  if (version === 'ff' || (version === '00' && rest !== undefined) || traceId === ZERO_TRACE || spanId === ZERO_SPAN) return undefined;
  const traceState = Array.isArray(state) ? state.join(',') : state;
  return {
    traceId,
    spanId,
    sampled: (parseInt(flags, 16) & 1) === 1,
    traceState: traceState && traceState.length <= 512 ? traceState : undefined,
  };
}

export const formatTraceparent = (traceId: string, spanId: string, sampled: boolean): string =>
  `00-${traceId}-${spanId}-${sampled ? '01' : '00'}`;

/** Random ids from a pooled buffer: one randomFillSync per 256 ids instead of one per id. */
const pool = Buffer.alloc(4096);
let offset = pool.length;
function randomHex(bytes: number): string {
  if (offset + bytes > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  offset += bytes;
  return pool.toString('hex', offset - bytes, offset);
}

export function newTraceId(): string {
  const id = randomHex(16);
  return id === ZERO_TRACE ? newTraceId() : id;
}

export function newSpanId(): string {
  const id = randomHex(8);
  return id === ZERO_SPAN ? newSpanId() : id;
}

/**
 * Whether a new trace is recorded, decided by its id (as OpenTelemetry's TraceIdRatioBased
 * sampler does), so every instance that sees the same trace id decides the same way.
 */
export function sampledByRatio(traceId: string, ratio: number): boolean {
  if (ratio >= 1) return true;
  if (ratio <= 0) return false;
  let accumulated = 0;
  for (let i = 0; i < 32; i += 8) accumulated = (accumulated ^ parseInt(traceId.slice(i, i + 8), 16)) >>> 0;
  return accumulated <= Math.floor(ratio * 0xffffffff);
}
