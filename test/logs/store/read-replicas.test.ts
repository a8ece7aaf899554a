import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { buildLogsService, type LogsService } from '../../../src/logs/app.js';
import { loadLogsConfig } from '../../../src/logs/config.js';
import { openStoreReads } from '../../../src/logs/modules/store/index.js';
import { replicaLagMs } from '../../../src/logs/modules/store/postgres/read-replicas.js';
import { openDatabase } from '../../../src/shared/db/database.js';
import { eventually } from '../../helpers/eventually.js';
import { bearer, LOGS_ADMIN, LOGS_ADMIN_PASSWORD } from '../../helpers/logs.js';
import { startPostgresCluster, type PostgresCluster } from '../../helpers/postgres-cluster.js';
import { closedPort } from '../../helpers/upstream.js';

/** Read replicas of the log store (docs/scaling.md, "Read replicas"), against a real streaming hot standby. */

const SECRET = 'Replica-S3cret';

describe('LOGS_DATABASE_READ_URL and its settings', () => {
  const postgres = { LOGS_DATABASE_URL: 'postgres://logs@db.internal/logs' };

  test('one URL or several separated by commas, on PostgreSQL; defaults: no replica, 10s of lag, checked every 2s', () => {
    assert.deepEqual(loadLogsConfig(postgres).readReplicas, { urls: [], maxLagMs: 10_000, checkIntervalMs: 2_000 });
    const config = loadLogsConfig({
      ...postgres,
      LOGS_DATABASE_READ_URL: `postgres://logs:${SECRET}@replica-1/logs, postgresql://logs@replica-2:5433/logs`,
      LOGS_READ_REPLICA_MAX_LAG: '30s',
      LOGS_READ_REPLICA_CHECK_INTERVAL: '500ms',
    });
    assert.deepEqual(config.readReplicas, {
      urls: [`postgres://logs:${SECRET}@replica-1/logs`, 'postgresql://logs@replica-2:5433/logs'],
      maxLagMs: 30_000,
      checkIntervalMs: 500,
    });
  });

  test('refused at start on SQLite, and a URL that is not postgres:// is refused without being repeated', () => {
    assert.throws(
      () => loadLogsConfig({ LOGS_DATABASE_READ_URL: 'postgres://logs@replica-1/logs' }),
      /LOGS_DATABASE_READ_URL needs LOGS_DATABASE_URL on PostgreSQL: SQLite has no read replicas/,
    );
    for (const value of [`postgres://logs@replica-1/logs,mysql://logs:${SECRET}@replica-2/logs`, `logs:${SECRET}@replica-2`]) {
      assert.throws(
        () => loadLogsConfig({ ...postgres, LOGS_DATABASE_READ_URL: value }),
        (error: Error) => {
          assert.match(error.message, /LOGS_DATABASE_READ_URL must be postgres:\/\/ URLs separated by commas; URL \d of \d is not one/);
          assert.doesNotMatch(error.message, new RegExp(SECRET));
          return true;
        },
      );
    }
    assert.throws(
      () => loadLogsConfig({ ...postgres, LOGS_READ_REPLICA_MAX_LAG: '50ms' }),
      /LOGS_READ_REPLICA_MAX_LAG must be at least 100ms/,
    );
    assert.throws(
      () => loadLogsConfig({ ...postgres, LOGS_READ_REPLICA_CHECK_INTERVAL: '0' }),
      /LOGS_READ_REPLICA_CHECK_INTERVAL must be from 10ms to 1m/,
    );
  });
});

describe('replica lag from what a check saw', () => {
  const GB = 1n << 30n;
  const history = [
    { at: 1_000, lsn: 10n * GB },
    { at: 3_000, lsn: 11n * GB },
    { at: 5_000, lsn: 12n * GB },
  ];

  test('0 once the replica replayed what the primary had written when asked', () => {
    assert.equal(replicaLagMs({ replayed: 12n * GB, history, now: 5_010, sinceLastReplayedCommitMs: 3_600_000 }), 0);
  });

  test('an idle primary (its last commit long ago) does not make a replica look late: the WAL points bound the lag', () => {
    assert.equal(replicaLagMs({ replayed: 11n * GB + 5n, history, now: 5_010, sinceLastReplayedCommitMs: 3_600_000 }), 2_010);
  });

  test('a busy primary: the time since the last commit the replica replayed is the closer bound', () => {
    assert.equal(replicaLagMs({ replayed: 11n * GB + 5n, history, now: 5_010, sinceLastReplayedCommitMs: 40 }), 40);
  });

  test('behind every point kept: at least as old as the oldest', () => {
    assert.equal(replicaLagMs({ replayed: 9n * GB, history, now: 5_010, sinceLastReplayedCommitMs: undefined }), 4_010);
  });
});

describe('log store reads on a hot standby', () => {
  let cluster: PostgresCluster;
  before(async () => {
    cluster = await startPostgresCluster();
  });
  after(async () => cluster?.remove());

  /** The logs service on `database` of the primary, reading from the standby's copy of it. */
  async function startService(database: string, env: Record<string, string>) {
    await cluster.createDatabase(database);
    const config = loadLogsConfig({
      LOGS_DATABASE_URL: cluster.primaryUrl(database),
      LOGS_DATABASE_READ_URL: cluster.standbyUrl(database),
      LOGS_READ_REPLICA_CHECK_INTERVAL: '100ms',
      LOGS_ADMIN_PASSWORD: LOGS_ADMIN_PASSWORD,
      LOGS_MFA_REQUIRED_PERMISSIONS: 'none',
      LOG_LEVEL: 'silent',
      LOGS_RETENTION_INTERVAL: '0',
      LOGS_ALERTS_EVAL_INTERVAL: '0',
      LOGS_SELF_METRICS_INTERVAL: '0',
      ...env,
    });
    const service: LogsService = await buildLogsService({ config });
    const request = service.app.inject.bind(service.app);
    const login = await request({ method: 'POST', url: '/api/login', payload: { username: LOGS_ADMIN, password: LOGS_ADMIN_PASSWORD } });
    assert.equal(login.statusCode, 200, login.body);
    const headers = bearer(login.json().token.access_token);
    const hour = { from: new Date(Date.now() - 3_600_000).toISOString(), to: new Date(Date.now() + 60_000).toISOString() };
    return {
      service,
      /** Ingests one event (a write: it can only succeed on the primary, a standby is read-only). */
      async ingest(message: string) {
        const body = `{"index":{}}\n${JSON.stringify({ '@timestamp': new Date().toISOString(), message, level: 'info' })}\n`;
        const response = await request({ method: 'POST', url: '/api/v1/_elastic/_bulk', headers, payload: body });
        assert.equal(response.statusCode, 200, response.body);
        assert.equal(response.json().errors, false);
      },
      /** How many events a search for `word` finds. */
      async found(word: string): Promise<number> {
        const response = await request({
          method: 'POST',
          url: '/api/v1/logs/list/paginate',
          headers,
          payload: { timeRange: hour, query: word, trackTotal: true },
        });
        assert.equal(response.statusCode, 200, response.body);
        return response.json().total as number;
      },
      /** A series of /metrics for replica 1, or undefined when it has no value. */
      async metric(name: string): Promise<number | undefined> {
        const text = (await request({ method: 'GET', url: '/metrics' })).body;
        const line = text.split('\n').find((each) => each.startsWith(`${name}{replica="1"} `));
        return line === undefined ? undefined : Number(line.split(' ')[1]);
      },
      async waitUp(value: 0 | 1): Promise<void> {
        await eventually(async () => assert.equal(await this.metric('logs_read_replica_up'), value));
      },
    };
  }

  test('searches are answered by the standby (an event it has not replayed yet is not found), writes go to the primary', async () => {
    const logs = await startService('replicas_answer', { LOGS_READ_REPLICA_MAX_LAG: '1h' });
    try {
      await logs.waitUp(1);
      await logs.ingest('first replicated event');
      await cluster.waitForReplay();
      const scans = await cluster.standbyTableScans('replicas_answer');
      assert.equal(await logs.found('first'), 1);
      // The standby's statistics count the search's table reads (within the seconds PostgreSQL takes to report them).
      await eventually(async () => assert.ok((await cluster.standbyTableScans('replicas_answer')) > scans), 30_000, 200);

      // What a reader may not see yet: acknowledged on the primary, not replayed on the standby.
      await cluster.pauseReplay();
      try {
        await logs.ingest('second replicated event');
        assert.equal(await logs.found('second'), 0);
        assert.equal(await logs.found('first'), 1);
        assert.equal(await logs.metric('logs_read_replica_up'), 1);
      } finally {
        await cluster.resumeReplay();
      }
      await cluster.waitForReplay();
      assert.equal(await logs.found('second'), 1);
    } finally {
      await logs.service.app.close();
    }
  });

  test('a replica lagging past LOGS_READ_REPLICA_MAX_LAG is left out (the primary answers) and taken back once it caught up', async () => {
    const logs = await startService('replicas_lag', { LOGS_READ_REPLICA_MAX_LAG: '500ms' });
    try {
      await logs.waitUp(1);
      assert.equal(await logs.metric('logs_read_replica_lag_seconds'), 0);
      await cluster.pauseReplay();
      try {
        // The primary keeps writing while the standby replays nothing: its lag grows past the bound.
        let written = 0;
        await eventually(async () => {
          await logs.ingest(`lagging event ${(written += 1)}`);
          assert.equal(await logs.metric('logs_read_replica_up'), 0);
        });
        assert.ok((await logs.metric('logs_read_replica_lag_seconds'))! > 0.5);
        assert.ok((await logs.metric('logs_read_replica_lag_bytes'))! > 0);
        // Left out: the primary answers, with every event.
        assert.equal(await logs.found('lagging'), written);
      } finally {
        await cluster.resumeReplay();
      }
      await logs.waitUp(1);
      assert.ok((await logs.metric('logs_read_replica_lag_seconds'))! <= 0.25);
    } finally {
      await logs.service.app.close();
    }
  });

  test('a stopped replica is left out and searches go on on the primary; it is taken back once started', async () => {
    const logs = await startService('replicas_stop', {});
    try {
      await logs.ingest('stopping event');
      await cluster.waitForReplay();
      await logs.waitUp(1);
      assert.equal(await logs.found('stopping'), 1);
      await cluster.stopStandby();
      try {
        await logs.waitUp(0);
        assert.equal(await logs.metric('logs_read_replica_lag_seconds'), undefined);
        assert.equal(await logs.found('stopping'), 1);
        await logs.ingest('stopping again');
        assert.equal(await logs.found('stopping'), 2);
      } finally {
        await cluster.startStandby();
      }
      await logs.waitUp(1);
      await cluster.waitForReplay();
      assert.equal(await logs.found('stopping'), 2);
    } finally {
      await logs.service.app.close();
    }
  });

  test('a replica left out or taken back is logged by its place in the list, never by its URL', async () => {
    const database = 'replicas_log';
    await cluster.createDatabase(database);
    await cluster.waitForReplay();
    const primary = await openDatabase(cluster.primaryUrl(database));
    const lines: { level: string; details: Record<string, unknown>; message: string }[] = [];
    const log = {
      info: (details: object, message: string) => lines.push({ level: 'info', details: { ...details }, message }),
      warn: (details: object, message: string) => lines.push({ level: 'warn', details: { ...details }, message }),
    };
    const absent = `postgres://postgres:${SECRET}@127.0.0.1:${await closedPort()}/${database}`;
    const reads = await openStoreReads(cluster.primaryUrl(database), primary.db, {
      timeoutMs: 10_000,
      workers: 2,
      // Taken back at half the bound: a loaded machine's slower checks must not keep it out.
      replicas: { urls: [cluster.standbyUrl(database), absent], maxLagMs: 1_000, checkIntervalMs: 50 },
      log,
    });
    const count = async () => Number((await sql<{ n: string }>`SELECT count(*)::text AS n FROM ticks`.execute(reads.db)).rows[0]!.n);
    try {
      assert.deepEqual(
        lines.map(({ level, details }) => [level, details.replica, details.reason]).sort((a, b) => Number(a[1]) - Number(b[1])),
        [
          ['info', 1, undefined],
          ['warn', 2, 'unreachable'],
        ],
      );
      await sql`CREATE TABLE ticks (n int)`.execute(primary.db);
      await cluster.waitForReplay();
      await cluster.pauseReplay();
      let ticks = 0;
      try {
        await eventually(async () => {
          await sql`INSERT INTO ticks VALUES (${(ticks += 1)})`.execute(primary.db);
          assert.ok(lines.some(({ details }) => details.replica === 1 && details.reason === 'lag'));
        });
        // Left out: the primary answers, with every row.
        assert.equal(await count(), ticks);
      } finally {
        await cluster.resumeReplay();
      }
      const leftOut = lines.length;
      await eventually(async () =>
        assert.deepEqual(
          lines.slice(leftOut).map(({ level, details }) => [level, details.replica]),
          [['info', 1]],
          // What the checks last saw, should the replica not come back.
          `replica states: ${JSON.stringify(reads.replicas!.states())}`,
        ),
      );
      await cluster.waitForReplay();
      assert.equal(await count(), ticks);
      assert.deepEqual(
        reads.replicas!.states().map(({ replica, up }) => [replica, up]),
        [
          [1, true],
          [2, false],
        ],
      );
      const logged = JSON.stringify(lines);
      assert.doesNotMatch(logged, new RegExp(SECRET));
      assert.doesNotMatch(logged, /127\.0\.0\.1|postgres:\/\//);
    } finally {
      await reads.close();
      await primary.close();
    }
  });
});
