import assert from 'node:assert/strict';
import { EventEmitter, once } from 'node:events';
import { describe, test } from 'node:test';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import { Lifecycle, type Ticker } from '../../src/shared/lifecycle.js';

/** A ticker the test fires by hand: no timers, no sleeps. */
class HandTicker {
  readonly events = new EventEmitter();
  readonly #ticks = new Map<number, () => void>();
  readonly ticker: Ticker = (tick, intervalMs) => {
    this.#ticks.set(intervalMs, tick);
    return { stop: () => void (this.#ticks.delete(intervalMs), this.events.emit('stopped', intervalMs)) };
  };
  /** Fires the ticker of that interval; false if none is running. */
  fire(intervalMs: number): boolean {
    const tick = this.#ticks.get(intervalMs);
    tick?.();
    return tick !== undefined;
  }
}

/** A promise the test settles. */
function deferred() {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

/** Every promise callback already queued has run (a turn of the event loop, not a wait for time). */
const settled = () => new Promise<void>((resolve) => setImmediate(resolve));

function recordingLog(app: { log: FastifyBaseLogger }) {
  const errors = new EventEmitter();
  const logged: Record<string, unknown>[] = [];
  const log = Object.assign(Object.create(app.log) as FastifyBaseLogger, {
    error: (details: Record<string, unknown>, msg: string) => {
      logged.push({ ...details, msg });
      errors.emit('error-line', details);
    },
  });
  return { log, logged, errors };
}

describe('Lifecycle', () => {
  test('parts close with the app in the order they were added; a failing part is logged and the rest still close', async () => {
    const app = Fastify();
    const { log, logged } = recordingLog(app);
    const lifecycle = new Lifecycle(app, log);
    const closed: string[] = [];
    lifecycle.add('jobs', async () => void closed.push('jobs'));
    lifecycle.add('flaky', () => {
      throw new Error('cannot close');
    });
    lifecycle.add('database', () => void closed.push('database'));
    await app.close();
    assert.deepEqual(closed, ['jobs', 'database']);
    assert.equal(logged.length, 1);
    assert.equal(logged[0]!.part, 'flaky');
  });

  test('parts start in the order added, once, on start() and not before; a job runs only once started', async () => {
    const app = Fastify();
    const hand = new HandTicker();
    const lifecycle = new Lifecycle(app, app.log, hand.ticker);
    const started: string[] = [];
    let runs = 0;
    lifecycle.add('first', { start: () => void started.push('first') });
    lifecycle.every({ name: 'job', intervalMs: 10, run: async () => void (runs += 1) });
    lifecycle.add('last', { start: () => void started.push('last') });
    assert.equal(hand.fire(10), false, 'no ticks before start');
    lifecycle.start();
    lifecycle.start();
    assert.deepEqual(started, ['first', 'last']);
    assert.equal(hand.fire(10), true);
    await settled();
    assert.equal(runs, 1);
    await app.close();
    assert.equal(hand.fire(10), false, 'no ticks after close');
  });

  test('a job never starts a run while its last run is still going', async () => {
    const app = Fastify();
    const hand = new HandTicker();
    const lifecycle = new Lifecycle(app, app.log, hand.ticker);
    const runs: ReturnType<typeof deferred>[] = [];
    lifecycle.every({
      name: 'slow',
      intervalMs: 10,
      run: () => {
        const run = deferred();
        runs.push(run);
        return run.promise;
      },
    });
    lifecycle.start();
    hand.fire(10);
    hand.fire(10);
    hand.fire(10);
    await settled();
    assert.equal(runs.length, 1, 'ticks during a run are skipped');
    runs[0]!.resolve();
    await settled();
    hand.fire(10);
    assert.equal(runs.length, 2, 'the next tick after it ended runs again');
    runs[1]!.resolve();
    await app.close();
  });

  test('closing waits for the run in flight, then the job’s own close, before the next part closes', async () => {
    const app = Fastify();
    const hand = new HandTicker();
    const lifecycle = new Lifecycle(app, app.log, hand.ticker);
    const order: string[] = [];
    const sweep = deferred();
    lifecycle.every({
      name: 'retention sweep',
      intervalMs: 10,
      run: async () => {
        order.push('sweep started');
        await sweep.promise;
        order.push('sweep done');
      },
      close: async () => void order.push('last flush'),
    });
    lifecycle.add('database', () => void order.push('database closed'));
    lifecycle.start();
    hand.fire(10);
    const stopped = once(hand.events, 'stopped');
    const closing = app.close();
    await stopped;
    await settled();
    assert.deepEqual(order, ['sweep started'], 'the database stays open while the sweep runs');
    sweep.resolve();
    await closing;
    assert.deepEqual(order, ['sweep started', 'sweep done', 'last flush', 'database closed']);
  });

  test('a failing run is logged with the job’s name, and the next tick runs again', async () => {
    const app = Fastify();
    const hand = new HandTicker();
    const { log, logged, errors } = recordingLog(app);
    const lifecycle = new Lifecycle(app, log, hand.ticker);
    let runs = 0;
    lifecycle.every({
      name: 'source counts upkeep',
      intervalMs: 10,
      run: async () => {
        runs += 1;
        if (runs === 1) throw new Error('database busy');
      },
    });
    lifecycle.start();
    const failed = once(errors, 'error-line');
    hand.fire(10);
    await failed;
    assert.equal(logged[0]!.msg, 'source counts upkeep failed');
    assert.equal(logged[0]!.job, 'source counts upkeep');
    assert.equal((logged[0]!.err as Error).message, 'database busy');
    hand.fire(10);
    await settled();
    assert.equal(runs, 2);
    assert.equal(logged.length, 1);
    await app.close();
  });

  test('runAtStart runs at once; an interval of 0 never runs but still closes; once() runs at start and is awaited at close', async () => {
    const app = Fastify();
    const hand = new HandTicker();
    const lifecycle = new Lifecycle(app, app.log, hand.ticker);
    const order: string[] = [];
    const resume = deferred();
    lifecycle.every({ name: 'sample', intervalMs: 10, runAtStart: true, run: async () => void order.push('sample') });
    lifecycle.every({
      name: 'off',
      intervalMs: 0,
      run: async () => void order.push('off ran'),
      close: () => void order.push('off closed'),
    });
    lifecycle.once('resume', async () => {
      await resume.promise;
      order.push('resumed');
    });
    lifecycle.add('database', () => void order.push('database closed'));
    lifecycle.start();
    assert.equal(hand.fire(0), false, 'no ticker for an interval of 0');
    const closing = app.close();
    await settled();
    assert.deepEqual(order, ['sample', 'off closed']);
    resume.resolve();
    await closing;
    assert.deepEqual(order, ['sample', 'off closed', 'resumed', 'database closed']);
  });
});
