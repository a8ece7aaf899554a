import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mapInParallel } from '../../src/shared/map-in-parallel.js';

/** Work that finishes when the test says so, recording what runs at once. */
function controlledWork() {
  const running = new Set<number>();
  let most = 0;
  const started: number[] = [];
  const finish = new Map<number, { resolve: (value: string) => void; reject: (error: Error) => void }>();
  const work = (item: number) =>
    new Promise<string>((resolve, reject) => {
      running.add(item);
      started.push(item);
      most = Math.max(most, running.size);
      finish.set(item, {
        resolve: (value) => (running.delete(item), resolve(value)),
        reject: (error) => (running.delete(item), reject(error)),
      });
    });
  return { work, finish, started, most: () => most };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

test('at most `limit` items run at once, and the results keep the items’ order', async () => {
  const { work, finish, started, most } = controlledWork();
  const all = mapInParallel([0, 1, 2, 3, 4, 5], 2, work);
  await turn();
  assert.deepEqual(started, [0, 1]);
  // Finishing out of order: the freed lane takes the next item.
  for (const item of [1, 0, 3, 2, 5, 4]) {
    await eventuallyStarted(started, item);
    finish.get(item)!.resolve(`r${item}`);
    await turn();
  }
  assert.deepEqual(await all, ['r0', 'r1', 'r2', 'r3', 'r4', 'r5']);
  assert.equal(most(), 2);
});

test('the first failure rejects, and no further item starts', async () => {
  const { work, finish, started } = controlledWork();
  const all = mapInParallel([0, 1, 2, 3], 2, work);
  await turn();
  finish.get(0)!.reject(new Error('hour 0 failed'));
  await assert.rejects(all, /hour 0 failed/);
  finish.get(1)!.resolve('late');
  await turn();
  assert.deepEqual(started, [0, 1]);
});

test('no items, or fewer than the limit', async () => {
  assert.deepEqual(await mapInParallel([], 4, async (item: number) => item), []);
  assert.deepEqual(await mapInParallel([1, 2], 8, async (item) => item * 10), [10, 20]);
});

async function eventuallyStarted(started: number[], item: number): Promise<void> {
  for (let attempt = 0; attempt < 10 && !started.includes(item); attempt += 1) await turn();
  assert.ok(started.includes(item), `item ${item} started`);
}
