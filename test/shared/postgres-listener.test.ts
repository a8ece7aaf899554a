import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { describe, test } from 'node:test';
import { Backoff } from '../../src/shared/db/backoff.js';
import { PostgresListener, type ListenerClient } from '../../src/shared/db/postgres-listener.js';
import type { Schedule } from '../../src/shared/restart-policy.js';
import { TestClock } from '../helpers/clock.js';

describe('Backoff: the delays between reconnection attempts', () => {
  test('double from the first delay up to the cap, each drawn from the upper half of its step', () => {
    const low = new Backoff({ initialMs: 100, maxMs: 5_000, random: () => 0 });
    assert.deepEqual(
      Array.from({ length: 9 }, () => low.next()),
      [50, 100, 200, 400, 800, 1_600, 2_500, 2_500, 2_500],
    );
    const high = new Backoff({ initialMs: 100, maxMs: 5_000, random: () => 1 });
    assert.deepEqual(
      Array.from({ length: 9 }, () => high.next()),
      [100, 200, 400, 800, 1_600, 3_200, 5_000, 5_000, 5_000],
    );
  });

  test('start again from the first delay once reset, and never overflow however long it fails', () => {
    const backoff = new Backoff({ initialMs: 100, maxMs: 5_000, random: () => 0.5 });
    for (let i = 0; i < 2_000; i++) assert.ok(backoff.next() <= 5_000);
    backoff.reset();
    assert.equal(backoff.next(), 75);
  });
});

/** A pg.Client stand-in: connect answers as the test says; LISTENs and queries are recorded. */
class FakeClient extends EventEmitter implements ListenerClient {
  readonly queries: string[] = [];
  ended = false;
  /** Set to make `query('SELECT 1')` never answer (a connection cut without a word). */
  silent = false;

  constructor(private readonly outcome: 'connects' | Error) {
    super();
  }

  async connect(): Promise<void> {
    if (this.outcome !== 'connects') throw this.outcome;
  }

  query(text: string): Promise<unknown> {
    this.queries.push(text);
    return this.silent ? new Promise(() => {}) : Promise.resolve({});
  }

  async end(): Promise<void> {
    this.ended = true;
  }
}

/** Timers the test runs by hand. */
function manualSchedule() {
  const timers: { run: () => void; delayMs: number; cancelled: boolean }[] = [];
  const schedule: Schedule = (run, delayMs) => {
    const timer = { run, delayMs, cancelled: false };
    timers.push(timer);
    return { cancel: () => void (timer.cancelled = true) };
  };
  const pending = () => timers.filter((timer) => !timer.cancelled);
  return {
    schedule,
    pending,
    /** Runs the only pending timer (and forgets it); returns its delay. */
    async fire(): Promise<number> {
      const [timer, ...others] = pending();
      assert.ok(timer && others.length === 0, `one timer pending, not ${pending().length}`);
      timer.cancelled = true;
      timer.run();
      await new Promise((resolve) => setImmediate(resolve));
      return timer.delayMs;
    },
  };
}

function listenerWith(outcomes: ('connects' | Error)[], options: { heartbeatMs?: number } = {}) {
  const clients: FakeClient[] = [];
  const events: string[] = [];
  const delivered: string[] = [];
  const clock = new TestClock(0);
  const timers = manualSchedule();
  const listener = new PostgresListener({
    openClient: () => {
      const client = new FakeClient(outcomes.shift() ?? 'connects');
      clients.push(client);
      return client;
    },
    channels: new Map([
      ['channel_one', (payload: string) => delivered.push(`one:${payload}`)],
      ['channel_two', (payload: string) => delivered.push(`two:${payload}`)],
    ]),
    onLost: (error) => events.push(`lost: ${error.message}`),
    onRestored: ({ downMs, attempts }) => events.push(`restored after ${downMs} ms, ${attempts} attempts`),
    onAttemptFailed: (error, attempt) => events.push(`attempt ${attempt} failed: ${error.message}`),
    backoff: new Backoff({ initialMs: 100, maxMs: 1_000, random: () => 1 }),
    schedule: timers.schedule,
    now: clock.now,
    heartbeatMs: options.heartbeatMs ?? 0,
  });
  return { listener, clients, events, delivered, clock, timers };
}

describe('PostgresListener: LISTEN on a connection that comes back', () => {
  test('a lost connection is said once, retried with growing capped delays, and said back on the attempt that works', async () => {
    const refused = new Error('connect ECONNREFUSED');
    const { listener, clients, events, delivered, clock, timers } = listenerWith(['connects', refused, refused, refused, refused, refused]);
    await listener.start();
    assert.equal(listener.connected, true);
    assert.deepEqual(clients[0]!.queries, ['LISTEN channel_one', 'LISTEN channel_two']);
    clients[0]!.emit('notification', { channel: 'channel_one', payload: 'a' });
    clients[0]!.emit('notification', { channel: 'other', payload: 'b' });
    assert.deepEqual(delivered, ['one:a']);

    clients[0]!.emit('error', new Error('terminating connection due to administrator command'));
    clients[0]!.emit('end');
    assert.equal(listener.connected, false);
    assert.deepEqual(events, ['lost: terminating connection due to administrator command']);
    assert.equal(clients[0]!.ended, true);

    const delays: number[] = [];
    for (let attempt = 1; attempt <= 5; attempt++) {
      clock.advance(timers.pending()[0]!.delayMs);
      delays.push(await timers.fire());
    }
    assert.deepEqual(delays, [100, 200, 400, 800, 1_000], 'doubling, capped at 1 s');
    clock.advance(timers.pending()[0]!.delayMs);
    assert.equal(await timers.fire(), 1_000);
    assert.equal(listener.connected, true);
    assert.deepEqual(events.slice(1), [
      ...[1, 2, 3, 4, 5].map((attempt) => `attempt ${attempt} failed: connect ECONNREFUSED`),
      'restored after 3500 ms, 6 attempts',
    ]);
    const back = clients.at(-1)!;
    assert.deepEqual(back.queries, ['LISTEN channel_one', 'LISTEN channel_two']);
    assert.deepEqual(timers.pending(), [], 'no attempt left once back');

    // Only the connection in use is heard; the next loss starts from the first delay again.
    clients[0]!.emit('notification', { channel: 'channel_two', payload: 'stale' });
    back.emit('notification', { channel: 'channel_two', payload: 'c' });
    assert.deepEqual(delivered, ['one:a', 'two:c']);
    back.emit('end');
    assert.equal(events.at(-1), 'lost: the listening connection ended');
    assert.equal(timers.pending()[0]!.delayMs, 100);
    await listener.close();
    assert.deepEqual(timers.pending(), [], 'closing cancels the next attempt');
  });

  test('a connection that stops answering is noticed by its heartbeat', async () => {
    const { listener, clients, events, timers } = listenerWith(['connects'], { heartbeatMs: 5_000 });
    await listener.start();
    assert.equal(await timers.fire(), 5_000);
    assert.equal(clients[0]!.queries.at(-1), 'SELECT 1');
    assert.deepEqual(events, [], 'answered');
    clients[0]!.silent = true;
    assert.equal(await timers.fire(), 5_000, 'the next heartbeat');
    assert.equal(await timers.fire(), 5_000, 'its deadline');
    assert.deepEqual(events, ['lost: no answer to a heartbeat within 5000 ms']);
    assert.equal(listener.connected, false);
    await listener.close();
  });

  test('a connection lost between LISTEN and being counted up is an attempt that failed, not a return', async () => {
    const { listener, clients, events, timers } = listenerWith(['connects', 'connects', 'connects']);
    await listener.start();
    clients[0]!.emit('end');
    // The second connection dies while its LISTENs are under way (the attempt opens it at once).
    const fire = timers.fire();
    const second = clients[1]!;
    second.query = (text: string) => {
      second.emit('end');
      return FakeClient.prototype.query.call(second, text);
    };
    await fire;
    assert.equal(listener.connected, false);
    assert.match(events.at(-1)!, /^attempt 1 failed: the listening connection ended$/);
    await timers.fire();
    assert.equal(listener.connected, true);
    assert.equal(events.at(-1), 'restored after 0 ms, 2 attempts');
    await listener.close();
  });

  test('a first connection that fails is the caller’s failure; closing stops everything', async () => {
    const { listener, timers } = listenerWith([new Error('password authentication failed')]);
    await assert.rejects(listener.start(), /password authentication failed/);
    assert.deepEqual(timers.pending(), []);
    await listener.close();
  });
});
