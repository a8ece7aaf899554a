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

/**
 * Ids are kept as 32-bit words, most significant byte first (a trace id is four, a span id two):
 * a span holds them as small integers, not strings or buffers, and they are written into the
 * protobuf records as the bytes they are (otlp-records.ts). Hex only for the `traceparent` header.
 */

/** Random words from a pool: one randomFillSync per 1,024 words; the words are read as they lie (any byte order is random). */
const pool = new Int32Array(1024);
let offset = pool.length;
export function randomWord(): number {
  if (offset === pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  return pool[offset++]!;
}

/** Word `index` of a hex id (as parseTraceparent gives it). */
export const hexWord = (hex: string, index: number): number => parseInt(hex.slice(index * 8, index * 8 + 8), 16) | 0;

const HEX = Array.from({ length: 256 }, (_, byte) =>
  byte
    .toString(16)
    .padStart(2, '0')
    .split('')
    .map((c) => c.charCodeAt(0)),
);
const header = Buffer.from('00-00000000000000000000000000000000-0000000000000000-00', 'latin1');
const putWord = (at: number, word: number) => {
  for (let shift = 24, i = at; shift >= 0; shift -= 8, i += 2) {
    const digits = HEX[(word >>> shift) & 0xff]!;
    header[i] = digits[0]!;
    header[i + 1] = digits[1]!;
  }
};

/** The `traceparent` header of a span, from its ids as words. */
export function traceparentOf(ids: { t0: number; t1: number; t2: number; t3: number; s0: number; s1: number; sampled: boolean }): string {
  putWord(3, ids.t0);
  putWord(11, ids.t1);
  putWord(19, ids.t2);
  putWord(27, ids.t3);
  putWord(36, ids.s0);
  putWord(44, ids.s1);
  header[54] = ids.sampled ? 0x31 : 0x30;
  return header.toString('latin1');
}

/**
 * A sampling ratio as OpenTelemetry's consistent probability sampling states it
 * (https://opentelemetry.io/docs/specs/otel/trace/tracestate-probability-sampling/): a trace is
 * recorded when the randomness in the last 56 bits of its id is at least a rejection threshold, and
 * a recorded span says so in its trace state (`ot=th:<hex>`), from which a backend counts it as
 * 1 / ratio spans (its adjusted count): the APM views' rates stay right under sampling. The threshold
 * is kept to four hex digits (a ratio in steps of 1/65,536), so the decision compares 16 bits.
 */
export interface Sampling {
  /** The threshold's top 16 bits: 0 records every trace, 65,536 none. */
  readonly threshold: number;
  /** The trace state of a span recorded by this ratio (`ot=th:...`); undefined at ratio 1 (adjusted count 1). */
  readonly traceState: string | undefined;
}

export function samplingOf(ratio: number): Sampling {
  const threshold = Math.min(65_536, Math.max(0, Math.round((1 - ratio) * 65_536)));
  const hex = threshold.toString(16).padStart(4, '0').replace(/0+$/, '');
  return { threshold, traceState: threshold === 0 || threshold === 65_536 ? undefined : `ot=th:${hex}` };
}

/** Whether a new trace is recorded: bits 55-40 of its id's last 56 (the top 16 of its randomness) against the threshold. */
export const sampledByWords = (t2: number, sampling: Sampling): boolean => ((t2 >>> 8) & 0xffff) >= sampling.threshold;

/** sampledByWords of a hex trace id. */
export const sampledByRatio = (traceId: string, ratio: number): boolean => sampledByWords(hexWord(traceId, 2), samplingOf(ratio));
