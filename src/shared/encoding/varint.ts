/**
 * LEB128 varints of non-negative integers below 2^53: protobuf's (the gateway's OTLP records,
 * gateway/modules/telemetry/proto-writer.ts) and the log store's postings (logs/modules/store/postgres/postings.ts).
 */

const TWO_32 = 4294967296;

/** Bytes a varint of a non-negative integer (below 2^53) takes. */
export function varintSize(value: number): number {
  if (value < 0x80) return 1;
  if (value < 0x4000) return 2;
  if (value < 0x200000) return 3;
  if (value < 0x10000000) return 4;
  let size = 4;
  for (let rest = Math.floor(value / 0x10000000); rest > 0; rest = Math.floor(rest / 0x80)) size += 1;
  return size;
}

/** Writes a varint of a non-negative integer (below 2^53) at `pos`; returns the position after it. */
export function writeVarintAt(buf: Uint8Array, pos: number, value: number): number {
  while (value > 0x7f) {
    buf[pos++] = (value & 0x7f) | 0x80;
    value = value >= TWO_32 ? Math.floor(value / 0x80) : value >>> 7;
  }
  buf[pos++] = value;
  return pos;
}
