import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LogBatches } from '../../../src/logs/modules/ingest/pipeline.js';

/**
 * The logs service's pipeline to its store's writer (pipeline.ts LogBatches): one batch decoded at a
 * time, until the store says it is prepared; three at most between decoding and commit.
 */
describe('LogBatches', () => {
  test('the next batch is decoded once the one before is prepared, and a fourth waits for a commit', async () => {
    const batches = new LogBatches();
    const decoding: number[] = [];
    const prepare = new Map<number, () => void>();
    const commit = new Map<number, () => void>();
    const batch = (n: number) =>
      batches.run(async (prepared) => {
        decoding.push(n);
        await new Promise<void>((done) => prepare.set(n, done));
        prepared();
        await new Promise<void>((done) => commit.set(n, done));
        return n;
      });
    const turn = () => new Promise((done) => setImmediate(done));
    const results = [1, 2, 3, 4].map(batch);
    await turn();
    assert.deepEqual(decoding, [1], 'one decoded at a time');
    prepare.get(1)!();
    await turn();
    assert.deepEqual(decoding, [1, 2], 'the next once the first is prepared, while it is written');
    prepare.get(2)!();
    await turn();
    assert.deepEqual(decoding, [1, 2, 3]);
    prepare.get(3)!();
    await turn();
    assert.deepEqual(decoding, [1, 2, 3], 'three between decoding and commit');
    commit.get(1)!();
    await turn();
    assert.deepEqual(decoding, [1, 2, 3, 4]);
    prepare.get(4)!();
    await turn();
    for (const n of [2, 3, 4]) commit.get(n)!();
    assert.deepEqual(await Promise.all(results), [1, 2, 3, 4]);
  });

  test('work that fails before it is prepared frees both places', async () => {
    const batches = new LogBatches();
    await assert.rejects(
      batches.run(async () => {
        throw new Error('not a bulk body');
      }),
      /not a bulk body/,
    );
    const ran = await Promise.all([1, 2, 3].map((n) => batches.run(async (prepared) => (prepared(), n))));
    assert.deepEqual(ran, [1, 2, 3]);
  });
});
