import assert from 'node:assert/strict';
import { EventEmitter, once } from 'node:events';
import { after, before, test } from 'node:test';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import pg from 'pg';
import { PostgresElection, soleInstance } from '../../src/shared/leader-election.js';
import { Lifecycle, type Ticker } from '../../src/shared/lifecycle.js';
import { createTestDatabase, describeOnPostgres, type TestDatabase } from '../helpers/databases.js';

const KEY = 4242n;

/** Every promise callback already queued has run (a turn of the event loop, not a wait for time). */
const settled = () => new Promise<void>((resolve) => setImmediate(resolve));
const JOB_MS = 10;

/** A ticker the test fires by hand: which jobs tick, without timers or sleeps. */
class HandTicker {
  readonly #ticks = new Map<number, () => void>();
  readonly ticker: Ticker = (tick, intervalMs) => {
    this.#ticks.set(intervalMs, tick);
    return { stop: () => void this.#ticks.delete(intervalMs) };
  };
  /** Fires the ticker of that interval; false if none is running. */
  fire(intervalMs: number): boolean {
    const tick = this.#ticks.get(intervalMs);
    tick?.();
    return tick !== undefined;
  }
}

/** One instance: a Lifecycle with an elected job, a job of every instance, and its election's lines. */
function instance(name: string, url: string, retryMs: number) {
  const app: FastifyInstance = Fastify();
  const hand = new HandTicker();
  const events = new EventEmitter();
  const lines: { level: string; msg: string; election?: unknown }[] = [];
  const line = (level: string) => (details: Record<string, unknown>, msg: string) => {
    lines.push({ level, msg, election: details.election });
    events.emit('line', msg);
  };
  const log = Object.assign(Object.create(app.log) as FastifyBaseLogger, { info: line('info'), warn: line('warn'), error: line('error') });
  const election = new PostgresElection({ connectionString: url, lockKey: KEY, name: `election test ${name}`, log, retryMs });
  const lifecycle = new Lifecycle(app, log, hand.ticker, election);
  election.onChange((leading) => events.emit(leading ? 'gained' : 'lost'));
  const runs = { elected: 0, everywhere: 0 };
  let release: (() => void) | undefined;
  lifecycle.every({
    name: 'elected job',
    intervalMs: JOB_MS,
    elected: true,
    run: () =>
      new Promise<void>((resolve) => {
        runs.elected += 1;
        release = resolve;
      }),
  });
  lifecycle.every({ name: 'every instance', intervalMs: 2 * JOB_MS, run: async () => void (runs.everywhere += 1) });
  const steps: string[] = [];
  lifecycle.whileLeading('leading part', { lead: () => void steps.push('lead'), stepDown: () => void steps.push('step down') });
  return {
    app,
    election,
    hand,
    events,
    lines,
    runs,
    steps,
    lifecycle,
    /** Ends the elected job's run in flight. */
    finishRun: () => release?.(),
    async start() {
      await election.start();
      lifecycle.start();
    },
  };
}

/** The backend that holds the election connection of `name` is terminated, as a failover or an operator would. */
async function cutConnection(url: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rowCount } = await client.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1`, [
      `gerbang election test ${name}`,
    ]);
    assert.equal(rowCount, 1);
  } finally {
    await client.end();
  }
}

test('without an election (SQLite, one instance) every elected job runs, and the lifecycle says it leads', async () => {
  const app = Fastify();
  const hand = new HandTicker();
  const lifecycle = new Lifecycle(app, app.log, hand.ticker, soleInstance);
  let runs = 0;
  lifecycle.every({ name: 'elected', intervalMs: JOB_MS, elected: true, run: async () => void (runs += 1) });
  lifecycle.start();
  assert.equal(lifecycle.leading, true);
  assert.equal(hand.fire(JOB_MS), true);
  await settled();
  assert.equal(runs, 1);
  await app.close();
  assert.equal(hand.fire(JOB_MS), false);
});

describeOnPostgres('leader election on one PostgreSQL database', () => {
  let database: TestDatabase;
  before(async () => {
    database = await createTestDatabase('postgres');
  });
  after(async () => {
    await database.drop();
  });

  test(
    'one of two instances leads; the other takes over when the leader loses its connection, and again when it closes',
    { timeout: 30_000 },
    async () => {
      // A retries far less often than B: once A's connection is cut, B (not A, reconnecting) takes
      // the lock, whatever the machine's load; a lock taken back by A would be as correct, but
      // would not show the takeover.
      const a = instance('A', database.url, 1_500);
      const b = instance('B', database.url, 50);
      // An election's retry timer does not keep a process alive (a service's listening socket does):
      // while the test waits for one, this does.
      const alive = setInterval(() => undefined, 1_000);
      try {
        await a.start();
        await b.start();
        assert.deepEqual([a.election.leading, b.election.leading], [true, false]);
        assert.deepEqual([a.lifecycle.leading, b.lifecycle.leading], [true, false]);
        assert.deepEqual(
          a.lines.map((line) => [line.level, line.msg, line.election]),
          [['info', 'leadership gained', 'election test A']],
        );
        assert.equal(b.lines.length, 0, 'an instance that does not lead says nothing while it waits');
        // The elected job ticks on the leader only; the other job on both.
        assert.deepEqual([a.hand.fire(JOB_MS), b.hand.fire(JOB_MS)], [true, false]);
        assert.deepEqual([a.hand.fire(2 * JOB_MS), b.hand.fire(2 * JOB_MS)], [true, true]);
        assert.deepEqual([a.steps, b.steps], [['lead'], []]);

        // A's connection is cut while its elected job runs: A stops leading at once, its ticks stop and
        // the leading parts step down once the run in flight has finished; B takes the lock.
        const lost = once(a.events, 'lost');
        const gained = once(b.events, 'gained');
        await cutConnection(database.url, 'A');
        await lost;
        await settled();
        assert.equal(a.election.leading, false);
        assert.equal(a.hand.fire(JOB_MS), false, 'no more ticks of the elected job once the lead is lost');
        assert.equal(a.hand.fire(2 * JOB_MS), true, 'the job of every instance goes on');
        assert.deepEqual(a.steps, ['lead'], 'the stepping down waits for the run in flight');
        a.finishRun();
        await gained;
        assert.equal(b.election.leading, true);
        await settled();
        assert.deepEqual(a.steps, ['lead', 'step down']);
        assert.deepEqual(b.steps, ['lead']);
        assert.equal(b.hand.fire(JOB_MS), true);
        b.finishRun();
        const warned = a.lines.find((line) => line.msg === 'leadership lost');
        assert.equal(warned?.level, 'warn');

        // A reconnects and waits: B holds the lock. B closes: A takes over.
        const regained = once(a.events, 'gained');
        await b.app.close();
        assert.equal(b.election.leading, false);
        assert.deepEqual(
          b.lines.map((line) => line.msg),
          ['leadership gained', 'leadership given up'],
        );
        await regained;
        assert.equal(a.election.leading, true);
        assert.equal(a.hand.fire(JOB_MS), true, 'the elected job ticks again on A');
        a.finishRun();
        assert.deepEqual(a.steps, ['lead', 'step down', 'lead']);
      } finally {
        clearInterval(alive);
        a.finishRun();
        b.finishRun();
        await a.app.close();
        await b.app.close();
      }
    },
  );

  test('a database that cannot be reached: the instance does not lead, says so once, and keeps trying', { timeout: 30_000 }, async () => {
    const unreachable = new URL(database.url);
    unreachable.port = '1'; // nothing listens there
    const warnings: string[] = [];
    const app = Fastify();
    const log = Object.assign(Object.create(app.log) as FastifyBaseLogger, {
      warn: (_details: object, msg: string) => void warnings.push(msg),
      info: () => undefined,
    });
    const election = new PostgresElection({
      connectionString: unreachable.toString(),
      lockKey: KEY + 1n,
      name: 'election test C',
      log,
      retryMs: 100,
    });
    try {
      await election.start();
      assert.equal(election.leading, false);
      assert.deepEqual(warnings, ['leader election: no connection to the database; retrying']);
    } finally {
      await election.close();
      await app.close();
    }
  });
});
