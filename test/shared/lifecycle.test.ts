import assert from 'node:assert/strict';
import { EventEmitter, once } from 'node:events';
import { test } from 'node:test';
import Fastify from 'fastify';
import { Lifecycle } from '../../src/shared/lifecycle.js';

/** What runs beside the routes closes with the app, in the order it was added, whatever fails. */
test('parts close with the app in the order they were added; a failing part is logged and the rest still close', async () => {
  const app = Fastify();
  const logged: unknown[] = [];
  const log = Object.assign(Object.create(app.log) as typeof app.log, { error: (details: unknown) => void logged.push(details) });
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
  assert.equal((logged[0] as { part: string }).part, 'flaky');
});

test('a job run every interval stops with the app and has its last word before the next part closes', async () => {
  const app = Fastify();
  const lifecycle = new Lifecycle(app, app.log);
  const ticks = new EventEmitter();
  const order: string[] = [];
  lifecycle.every(
    'counter',
    1,
    async () => void ticks.emit('tick'),
    async () => void order.push('final flush'),
  );
  lifecycle.add('database', () => void order.push('database'));
  await once(ticks, 'tick');
  await app.close();
  assert.deepEqual(order, ['final flush', 'database']);
});
