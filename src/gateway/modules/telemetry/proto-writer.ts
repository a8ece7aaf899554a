import { varintSize, writeVarintAt } from '../../../shared/encoding/varint.js';

/**
 * Protocol Buffers wire format (https://protobuf.dev/programming-guides/encoding/) written straight
 * into a Buffer that the caller owns (a batch's request body, record-queue.ts): varints, fixed-width
 * numbers and length-delimited fields, with no intermediate strings or objects. The caller makes
 * sure there is room: each record is written against an upper bound of its size, and a write past
 * the end shows as `pos > buf.length` (a typed array ignores writes out of range), which the queue
 * checks before it keeps a record.
 */

const TWO_32 = 4294967296;

export class ProtoWriter {
  constructor(
    public buf: Buffer,
    public pos = 0,
  ) {}

  byte(value: number): void {
    this.buf[this.pos++] = value;
  }

  /** Pre-encoded bytes (a tag and a key, a whole field). */
  raw(bytes: Uint8Array): void {
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  /** A copy of `length` bytes this writer wrote earlier at `from` (a value that a record holds twice). */
  copy(from: number, length: number): void {
    this.buf.copyWithin(this.pos, from, from + length);
    this.pos += length;
  }

  /** A varint of a non-negative integer below 2^53 (uint32, uint64, a positive int64, an enum). */
  varint(value: number): void {
    this.pos = writeVarintAt(this.buf, this.pos, value);
  }

  /** An int64 varint: negative values take ten bytes (two's complement), as protobuf writes them. */
  int64(value: number): void {
    if (value >= 0) return this.varint(value);
    let high = Math.floor(value / TWO_32);
    let low = (value - high * TWO_32) >>> 0;
    high >>>= 0;
    const buf = this.buf;
    let pos = this.pos;
    while (high > 0 || low > 0x7f) {
      buf[pos++] = (low & 0x7f) | 0x80;
      low = ((low >>> 7) | (high << 25)) >>> 0;
      high >>>= 7;
    }
    buf[pos++] = low;
    this.pos = pos;
  }

  /** A 32-bit word, most significant byte first (ids are kept as such words, trace-context.ts). */
  word(value: number): void {
    const buf = this.buf;
    const pos = this.pos;
    buf[pos] = value >>> 24;
    buf[pos + 1] = value >>> 16;
    buf[pos + 2] = value >>> 8;
    buf[pos + 3] = value;
    this.pos = pos + 4;
  }

  fixed32(value: number): void {
    const buf = this.buf;
    const pos = this.pos;
    buf[pos] = value;
    buf[pos + 1] = value >>> 8;
    buf[pos + 2] = value >>> 16;
    buf[pos + 3] = value >>> 24;
    this.pos = pos + 4;
  }

  /** A fixed64 of an unsigned integer below 2^64 given as two 32-bit halves. */
  fixed64(low: number, high: number): void {
    this.fixed32(low);
    this.fixed32(high);
  }

  /**
   * Milliseconds since the epoch (with a fraction, as performance.timeOrigin + performance.now()
   * gives) as a fixed64 of nanoseconds, exactly to the nanosecond the fraction holds and without a
   * BigInt: the low and high 32 bits are computed from the whole milliseconds split at 2^32.
   */
  nanosFromMs(ms: number): void {
    const whole = Math.floor(ms);
    const fraction = Math.floor((ms - whole) * 1e6);
    const wholeHigh = Math.floor(whole / TWO_32);
    const low = (whole - wholeHigh * TWO_32) * 1e6 + fraction; // below 2^53: exact
    const carry = Math.floor(low / TWO_32);
    this.fixed64(low - carry * TWO_32, wholeHigh * 1e6 + carry);
  }

  double(value: number): void {
    this.buf.writeDoubleLE(value, this.pos);
    this.pos += 8;
  }

  /**
   * The UTF-8 bytes of a string (a lone surrogate as U+FFFD), no length prefix (for parts of a
   * field: see begin/end). One call into Buffer.write: fewer instructions than the JavaScript loops
   * over the characters it replaced (docs/benchmarks.md, "Self-watching cost: reading").
   */
  text(text: string): void {
    const room = this.buf.length - this.pos;
    const written = room > 0 ? this.buf.write(text, this.pos, 'utf8') : 0;
    // Buffer.write stops at the end, leaving out a character that does not fit whole: a write that
    // leaves fewer than 4 bytes may have been cut short, so the position goes past the end, which
    // the queue checks. (Records are sized far above what they take, so a whole record never ends there.)
    this.pos += text.length > 0 && room - written < 4 ? room + 1 : written;
  }

  /** A string field: tag, length, UTF-8 bytes. */
  string(tag: number, text: string): void {
    this.buf[this.pos++] = tag;
    const at = this.begin(1);
    this.text(text);
    this.end(at, 1);
  }

  /** Decimal digits of a non-negative integer (an HTTP status in a message), no length prefix. */
  digits(value: number): void {
    if (value >= 10) this.digits(Math.floor(value / 10));
    this.buf[this.pos++] = 0x30 + (value % 10);
  }

  /**
   * Starts a length-delimited field whose length is not known yet: `reserve` bytes are left for it.
   * Returns where the length goes, for end().
   */
  begin(reserve: number): number {
    const at = this.pos;
    this.pos += reserve;
    return at;
  }

  /** Writes the length of what was written since begin(), moving it when its varint is not `reserve` bytes. */
  end(at: number, reserve: number): void {
    const length = this.pos - at - reserve;
    const size = varintSize(length);
    if (size !== reserve) {
      this.buf.copyWithin(at + size, at + reserve, this.pos);
      this.pos += size - reserve;
    }
    writeVarintAt(this.buf, at, length);
  }
}
