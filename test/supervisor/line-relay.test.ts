import assert from 'node:assert/strict';
import { once } from 'node:events';
import { PassThrough, Writable } from 'node:stream';
import { describe, test } from 'node:test';
import { relayLines } from '../../src/supervisor/line-relay.js';

describe('the supervisor relays its services\' output in whole lines', () => {
  test('a line cut across chunks is written once whole; what is left at the end gets its newline', async () => {
    const writes: string[] = [];
    const out = new Writable({ write: (chunk: Buffer, _enc, done) => void (writes.push(chunk.toString()), done()) });
    const child = new PassThrough();
    relayLines(child, out);
    child.write('{"msg":"one"}\n{"msg":"tw');
    child.write('o"}\n{"msg":"th');
    child.write('ree"}');
    child.end();
    await once(child, 'end');
    assert.deepEqual(writes, ['{"msg":"one"}\n', '{"msg":"two"}\n', '{"msg":"three"}\n']);
    assert.ok(writes.every((w) => w.endsWith('\n') && w.split('\n').slice(0, -1).every((line) => JSON.parse(line))));
  });
});
