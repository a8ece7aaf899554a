import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Gate } from '../../src/shared/gate.js';

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
