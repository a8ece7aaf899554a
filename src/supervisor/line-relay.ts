import type { Readable, Writable } from 'node:stream';

/**
 * Copies a child's output to ours in whole lines: a chunk is written up to its last newline and the
 * rest waits for the next one, so two children's lines never tear each other on the shared stdout.
 * What is left when the child's stream ends is written with a newline.
 */
export function relayLines(from: Readable, to: Writable): void {
  let pending: Buffer | undefined;
  from.on('data', (chunk: Buffer) => {
    const data = pending ? Buffer.concat([pending, chunk]) : chunk;
    const end = data.lastIndexOf(0x0a) + 1;
    if (end > 0) to.write(data.subarray(0, end));
    pending = end < data.length ? data.subarray(end) : undefined;
    // A child that never ends a line must not grow our memory without bound.
    if (pending && pending.length > 1_048_576) {
      to.write(Buffer.concat([pending, Buffer.from('\n')]));
      pending = undefined;
    }
  });
  from.on('end', () => {
    if (pending) to.write(Buffer.concat([pending, Buffer.from('\n')]));
    pending = undefined;
  });
}
