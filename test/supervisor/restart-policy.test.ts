import assert from 'node:assert/strict';
import { EventEmitter, once } from 'node:events';
import { describe, test } from 'node:test';
import { GIVE_UP, RestartPolicy, type Schedule } from '../../src/shared/restart-policy.js';
import { workerRestartPolicy } from '../../src/gateway/workers/primary.js';
import { ServiceChild } from '../../src/supervisor/service-child.js';
import { SUPERVISED_ENV } from '../../src/supervisor/messages.js';

describe('the restart policy of both supervisors', () => {
  test('0.5 s after a crash, doubling to at most 30 s while it keeps crashing; back to 0.5 s after a minute of running', () => {
    let now = 0;
    const policy = new RestartPolicy({ now: () => now });
    const delays: number[] = [];
    for (let i = 0; i < 9; i += 1) {
      policy.started();
      now += 100; // crashes soon after each start
      const delay = policy.exited();
      assert.ok(delay !== GIVE_UP);
      delays.push(delay);
      now += delay;
    }
    assert.deepEqual(delays, [500, 1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000]);
    policy.started();
    now += 60_000; // a stable minute
    assert.equal(policy.exited(), 500);
    policy.started();
    now += 100;
    assert.equal(policy.exited(), 1_000, 'and doubling again from there');
  });

  test("`all`'s services are never given up on; the gateway's workers are, past 5 crashes within a minute", () => {
    let now = 0;
    const services = new RestartPolicy({ now: () => now });
    const workers = workerRestartPolicy(() => now);
    const crashes = (policy: RestartPolicy, count: number) =>
      Array.from({ length: count }, () => {
        policy.started();
        now += 1_000;
        return policy.exited();
      });
    assert.deepEqual(crashes(workers, 6), [500, 1_000, 2_000, 4_000, 8_000, GIVE_UP], 'a sixth crash within the minute');
    workers.started();
    now += 60_000;
    assert.equal(workers.exited(), 500, 'after a minute of running: the earlier crashes have left the window, the back-off starts again');
    assert.ok(!crashes(services, 20).includes(GIVE_UP));
  });
});

/** A service that reports ready, then crashes at once: a real process, as the supervisor runs one. */
const CRASHING = ['-e', "process.send({ type: 'gerbang:service-ready', port: 1 }, () => process.exit(3))"];

describe('a crash loop under the supervisor', () => {
  test("each restart waits the policy's back-off (timers injected), and a stop cancels the pending restart", async () => {
    const scheduled = new EventEmitter();
    const requested: { delayMs: number; run: () => void; cancelled: boolean }[] = [];
    const schedule: Schedule = (run, delayMs) => {
      const entry = { delayMs, run, cancelled: false };
      requested.push(entry);
      scheduled.emit('scheduled');
      return { cancel: () => void (entry.cancelled = true) };
    };
    let now = 0;
    const child = new ServiceChild({
      name: 'crasher',
      args: CRASHING,
      env: () => ({ ...process.env, [SUPERVISED_ENV]: '1' }),
      log: undefined,
      policy: new RestartPolicy({ now: () => now }),
      schedule,
    });
    const pids = new Set<number>();
    assert.equal(await child.start(), 1);
    for (let crash = 0; crash < 5; crash += 1) {
      pids.add(child.pid!);
      if (requested.length === crash) await once(scheduled, 'scheduled');
      const restart = requested[crash]!;
      now += restart.delayMs;
      restart.run(); // the timer fires: a new process
    }
    assert.deepEqual(
      requested.map((r) => r.delayMs),
      [500, 1_000, 2_000, 4_000, 8_000],
    );
    assert.equal(pids.size, 5, 'a new process each time');
    if (requested.length === 5) await once(scheduled, 'scheduled');
    assert.equal(await child.stop(1_000), true);
    assert.equal(requested[5]!.cancelled, true, 'no restart after the stop');
  });
});
