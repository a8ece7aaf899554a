import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { blocksOfWholeLines, logBlockSize } from '../../src/shared/http/logger.js';

const lines = (...texts: string[]) => Buffer.from(texts.map((text) => `${text}\n`).join(''));
const asText = (blocks: Buffer[]) => blocks.map((block) => block.toString());

describe('log blocks for a shared stdout', () => {
  test('cut only at line ends, each block within the limit, nothing lost or reordered', () => {
    const input = lines('a'.repeat(3), 'b'.repeat(4), 'c'.repeat(2), 'd');
    const blocks = blocksOfWholeLines(input, 10);
    assert.deepEqual(asText(blocks), ['aaa\nbbbb\n', 'cc\nd\n']);
    assert.ok(blocks.every((block) => block.length <= 10 && block[block.length - 1] === 0x0a));
    assert.deepEqual(Buffer.concat(blocks), input);
  });

  test('the limit counts bytes, not characters: a multi-byte line is not split', () => {
    const input = lines('é'.repeat(3), 'x'); // 7 + 2 bytes
    assert.deepEqual(asText(blocksOfWholeLines(input, 8)), ['ééé\n', 'x\n']);
  });

  test('a line longer than the limit goes out whole, on its own', () => {
    const input = lines('ab', 'z'.repeat(20), 'cd');
    assert.deepEqual(asText(blocksOfWholeLines(input, 8)), ['ab\n', `${'z'.repeat(20)}\n`, 'cd\n']);
  });

  test('exactly the limit is one block; nothing is none', () => {
    assert.deepEqual(asText(blocksOfWholeLines(lines('1234567'), 8)), ['1234567\n']);
    assert.deepEqual(blocksOfWholeLines(Buffer.alloc(0), 8), []);
  });

  test('blocks of PIPE_BUF only where siblings share a pipe or socket; larger on a file, a terminal, /dev/null, or alone', () => {
    assert.equal(logBlockSize(true, true), 4_096);
    assert.equal(logBlockSize(true, false), 16_384);
    assert.equal(logBlockSize(false, true), 16_384);
    assert.equal(logBlockSize(false, false), 16_384);
  });
});
