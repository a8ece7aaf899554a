import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Counter, Registry } from 'prom-client';
import { MetricsGatherer, type MetricsAnswer } from '../../../src/gateway/workers/metrics-gatherer.js';

/** One worker's metrics: `count` proxied requests. */
async function workerMetrics(count: number) {
  const registry = new Registry();
  new Counter({ name: 'gateway_proxy_requests_total', help: 'h', labelNames: ['service'] as const, registers: [registry] }).inc(
    { service: 'master-data' },
    count,
  );
  return registry.getMetricsAsJSON();
}

/** A gatherer over fake workers ("a", "b", ...) with a timeout the test fires itself. */
function setUp() {
  const asked: [string, number][] = [];
  const timers: { fire: () => void; cancelled: boolean }[] = [];
  const gatherer = new MetricsGatherer<string>(
    (worker, collectId) => asked.push([worker, collectId]),
    (onTimeout) => {
      const timer = { fire: onTimeout, cancelled: false };
      timers.push(timer);
      return () => void (timer.cancelled = true);
    },
  );
  const answers: MetricsAnswer[] = [];
  const answered = () =>
    new Promise<MetricsAnswer>((resolve) =>
      gatherer.collect(['a', 'b'], (reply) => {
        answers.push(reply);
        resolve(reply);
      }),
    );
  return { gatherer, asked, timers, answers, answered };
}

describe('metrics summed over the workers (primary side)', () => {
  test('every worker is asked; the answer is the sum, once all have answered', async () => {
    const { gatherer, asked, timers, answers, answered } = setUp();
    const answer = answered();
    assert.deepEqual(asked, [
      ['a', 0],
      ['b', 0],
    ]);
    gatherer.received('a', 0, await workerMetrics(7), undefined);
    gatherer.received('a', 0, await workerMetrics(7), undefined); // a repeat counts once
    assert.equal(answers.length, 0, 'still waiting for b');
    gatherer.received('b', 0, await workerMetrics(5), undefined);
    const reply = await answer;
    assert.ok('text' in reply);
    assert.match(reply.text, /^gateway_proxy_requests_total\{service="master-data"\} 12$/m);
    assert.equal(timers[0]!.cancelled, true);
  });

  test('a worker that does not answer in time fails the scrape instead of shrinking the sum', async () => {
    const { gatherer, timers, answered } = setUp();
    const answer = answered();
    gatherer.received('a', 0, await workerMetrics(7), undefined);
    timers[0]!.fire();
    assert.deepEqual(await answer, { error: '1 worker(s) did not answer in time' });
    gatherer.received('b', 0, await workerMetrics(5), undefined); // too late: ignored
  });

  test('a worker that cannot read its metrics fails the scrape; a worker that exits is left out', async () => {
    const failing = setUp();
    const failed = failing.answered();
    failing.gatherer.received('b', 0, undefined, 'registry broke');
    assert.deepEqual(await failed, { error: 'registry broke' });

    const exiting = setUp();
    const answer = exiting.answered();
    exiting.gatherer.received('a', 0, await workerMetrics(7), undefined);
    exiting.gatherer.workerGone('b');
    const reply = await answer;
    assert.ok('text' in reply);
    assert.match(reply.text, /^gateway_proxy_requests_total\{service="master-data"\} 7$/m);
  });
});
