import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Gate } from '../../src/shared/gate.js';
import { LogBatches } from '../../src/logs/modules/ingest/pipeline.js';

/**
 * The gate on the service's `_bulk` batches (and, at 1, the SQLite store's lock on its writes): at most
 * its limit run at once, the others wait in the order they came, and work that fails frees its place
 * as work that succeeds.
 */
describe('Gate', () => {
  test('at most the limit at once, the others admitted in order of arrival as places free', async () => {
    const gate = new Gate(2);
    const running = new Set<number>();
    const started: number[] = [];
    let most = 0;
    const finish = new Map<number, () => void>();
    const batch = (n: number, fails = false) =>
      gate.run(async () => {
        running.add(n);
        started.push(n);
        most = Math.max(most, running.size);
        await new Promise<void>((done) => finish.set(n, done));
        running.delete(n);
        if (fails) throw new Error(`batch ${n} failed`);
        return n;
      });
    const turn = () => new Promise((done) => setImmediate(done));
    const results = [batch(1, true), batch(2), batch(3), batch(4), batch(5)];
    await turn();
    assert.deepEqual(started, [1, 2]);
    finish.get(1)!();
    await assert.rejects(results[0]!, /batch 1 failed/);
    await turn();
    assert.deepEqual(started, [1, 2, 3], 'a failed batch frees its place');
    finish.get(3)!();
    await turn();
    assert.deepEqual(started, [1, 2, 3, 4]);
    finish.get(2)!();
    finish.get(4)!();
    await turn();
    finish.get(5)!();
    assert.deepEqual(await Promise.all(results.slice(1)), [2, 3, 4, 5]);
    assert.equal(most, 2);
    // Every place free again: two start at once.
    const again = [batch(6), batch(7)];
    await turn();
    assert.deepEqual(started.slice(-2), [6, 7]);
    finish.get(6)!();
    finish.get(7)!();
    assert.deepEqual(await Promise.all(again), [6, 7]);
  });
});

describe('Gate.enter', () => {
  test('a place held across awaits until its release, which frees it once however often it is called', async () => {
    const gate = new Gate(1);
    const leave = await gate.enter();
    let second = false;
    const waiting = gate.enter().then((release) => {
      second = true;
      return release;
    });
    await new Promise((done) => setImmediate(done));
    assert.equal(second, false, 'the place is held');
    leave();
    leave();
    const release = await waiting;
    assert.equal(second, true);
    let third = false;
    const after = gate.enter().then(() => (third = true));
    await new Promise((done) => setImmediate(done));
    assert.equal(third, false, "a second call of the first release did not free the second holder's place");
    release();
    await after;
  });
});

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
