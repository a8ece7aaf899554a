import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { buildLogsService, type LogsService } from '../../../src/logs/app.js';
import { loadLogsConfig } from '../../../src/logs/config.js';
import {
  createLogStore,
  openStoreReads,
  QueryTimeoutError,
  type LogStore,
  type StoreReads,
} from '../../../src/logs/modules/store/index.js';
import { DIALECTS } from '../../helpers/databases.js';
import { eventually } from '../../helpers/eventually.js';
import { bearer, LOGS_ADMIN, LOGS_ADMIN_PASSWORD, startTestLogs, type TestLogs } from '../../helpers/logs.js';

const HOUR = 3_600_000;
/** An hour a little in the past (kept by the default retention). */
const T0 = Math.floor(Date.now() / HOUR) * HOUR - 3 * HOUR;
const iso = (ms: number) => new Date(ms).toISOString();
const RANGE = { from: iso(T0), to: iso(T0 + HOUR) };
const TIMEOUT_BODY = { error: 'query took too long: narrow the time range or the query' };
/** Enough entries that sorting the hour by an attribute takes hundreds of milliseconds on either dialect. */
const ENTRIES = 100_000;
/** The expensive search of the issue: every entry of the hour, sorted by an attribute and counted exactly. */
const EXPENSIVE = { timeRange: RANGE, sort: { field: 'user', order: 'asc' }, trackTotal: true };
/** A cheap one: the first minute, one entry. */
const CHEAP = { timeRange: { from: iso(T0), to: iso(T0 + 60_000) }, limit: 1 };

function ndjson(docs: object[]): string {
  return `${docs.map((doc) => `{"index":{}}\n${JSON.stringify(doc)}`).join('\n')}\n`;
}

/** `count` entries spread over the hour, written through the store (the API would take minutes). */
async function fill(store: LogStore, count: number): Promise<void> {
  for (let start = 0; start < count; start += 5_000) {
    const batch = Array.from({ length: Math.min(5_000, count - start) }, (_, offset) => {
      const k = start + offset;
      return {
        timestamp: T0 + Math.floor((k * HOUR) / count),
        message: `request ${k % 97} took ${k % 1000} ms`,
        level: k % 7 === 0 ? 'error' : 'info',
        service: `svc${k % 5}`,
        attributes: { user: `u${(k * 7919) % 9973}` },
      };
    });
    await store.append('default', batch);
  }
}

test('LOGS_WRITE_TIMEOUT is a duration of at least 100ms', () => {
  assert.equal(loadLogsConfig({}).writeTimeoutMs, 30_000);
  assert.equal(loadLogsConfig({ LOGS_WRITE_TIMEOUT: '2s' }).writeTimeoutMs, 2_000);
  assert.throws(() => loadLogsConfig({ LOGS_WRITE_TIMEOUT: '0' }), /LOGS_WRITE_TIMEOUT must be at least 100ms/);
  assert.throws(() => loadLogsConfig({ LOGS_WRITE_TIMEOUT: 'soon' }), /LOGS_WRITE_TIMEOUT must be a duration/);
});

test('LOGS_SEARCH_TIMEOUT and LOGS_SEARCH_WORKERS are validated at start', () => {
  assert.deepEqual(loadLogsConfig({}).search, { timeoutMs: 30_000, workers: 2 });
  assert.throws(() => loadLogsConfig({ LOGS_SEARCH_TIMEOUT: '0' }), /LOGS_SEARCH_TIMEOUT must be at least 1ms/);
  assert.throws(() => loadLogsConfig({ LOGS_SEARCH_TIMEOUT: 'soon' }), /LOGS_SEARCH_TIMEOUT must be a duration/);
  assert.throws(() => loadLogsConfig({ LOGS_SEARCH_WORKERS: '0' }), /LOGS_SEARCH_WORKERS must be an integer from 1 to 64/);
});

for (const dialect of DIALECTS) {
  describe(`search time budget [${dialect}]`, () => {
    describe('with a 1ms budget', () => {
      let logs: TestLogs;
      let headers: Record<string, string>;
      before(async () => {
        logs = await startTestLogs(dialect, { LOGS_SEARCH_TIMEOUT: '1ms' });
        headers = await logs.admin();
        await fill(logs.store, 20_000);
      });
      after(async () => logs.close());

      test('a read past LOGS_SEARCH_TIMEOUT answers 503 {"error": ...} and the service keeps serving', async () => {
        const search = await logs.request({ method: 'POST', url: '/api/v1/logs/list/paginate', headers, payload: EXPENSIVE });
        assert.equal(search.statusCode, 503);
        assert.deepEqual(search.json(), TIMEOUT_BODY);
        const histogram = await logs.request({
          method: 'POST',
          url: '/api/v1/logs/histogram',
          headers,
          payload: { timeRange: RANGE, groupBy: 'user' },
        });
        assert.equal(histogram.statusCode, 503);
        assert.deepEqual(histogram.json(), TIMEOUT_BODY);
        const distinct = await logs.request({ method: 'GET', url: '/api/v1/logs/fields/user/distinct', headers });
        assert.equal(distinct.statusCode, 503);
        assert.deepEqual(distinct.json(), TIMEOUT_BODY);
        // The dashboards' own scans of the entries run on the read side within the same budget.
        const sites = await logs.request({
          method: 'GET',
          url: '/api/v1/dashboard/dc/status',
          query: { from: RANGE.from, to: RANGE.to },
          headers,
        });
        assert.equal(sites.statusCode, 503);
        assert.deepEqual(sites.json(), TIMEOUT_BODY);

        const health = await logs.request({ method: 'GET', url: '/healthz' });
        assert.equal(health.statusCode, 200);
        const ingest = await logs.request({
          method: 'POST',
          url: '/api/v1/_elastic/_bulk',
          headers,
          payload: ndjson([{ '@timestamp': iso(T0 + 1000), message: 'still ingesting' }]),
        });
        assert.equal(ingest.statusCode, 200);
        assert.equal(ingest.json().errors, false);
      });
    });

    describe(`on ${ENTRIES} entries`, () => {
      let logs: TestLogs;
      let headers: Record<string, string>;
      before(async () => {
        logs = await startTestLogs(dialect, { LOGS_SEARCH_TIMEOUT: '60s', LOGS_SEARCH_WORKERS: '2' });
        headers = await logs.admin();
        await fill(logs.store, ENTRIES);
      });
      after(async () => logs.close());

      test('while expensive searches run, /healthz and an ingestion request are answered before the searches waiting for a worker', async () => {
        const finished: string[] = [];
        const track = <T>(label: string, work: Promise<T>) => work.then((result) => (finished.push(label), result));
        // More searches than workers: the last ones wait in the queue.
        const searches = Array.from({ length: 4 }, (_, i) =>
          track(`search ${i}`, logs.request({ method: 'POST', url: '/api/v1/logs/list/paginate', headers, payload: EXPENSIVE })),
        );
        const health = track('healthz', logs.request({ method: 'GET', url: '/healthz' }));
        const ingest = track(
          'ingest',
          logs.request({
            method: 'POST',
            url: '/api/v1/_elastic/_bulk',
            headers,
            payload: ndjson([{ '@timestamp': iso(T0 + 2000), message: 'ingested meanwhile' }]),
          }),
        );

        assert.equal((await health).statusCode, 200);
        assert.equal((await ingest).json().errors, false);
        for (const response of await Promise.all(searches)) {
          assert.equal(response.statusCode, 200);
          assert.ok(response.json().total >= ENTRIES);
        }
        // Before the searches that waited for a worker: ingestion and health checks never queue behind
        // searches (a search that runs fast may end before them: on PostgreSQL the hour's sort takes
        // about as long as a batch under a loaded CI machine).
        const last = Math.min(finished.indexOf('search 2'), finished.indexOf('search 3'));
        for (const label of ['healthz', 'ingest']) assert.ok(finished.indexOf(label) < last, `completion order: ${finished.join(', ')}`);
      });

      test('a storm beyond the pool: each search gets its answer or the timeout error, none a 500', async () => {
        // A second service on the same database with a budget shorter than the expensive search.
        const config = loadLogsConfig({
          LOGS_DATABASE_URL: logs.url,
          LOGS_ADMIN_PASSWORD,
          LOGS_MFA_REQUIRED_PERMISSIONS: 'none',
          LOG_LEVEL: 'silent',
          LOGS_RETENTION_INTERVAL: '0',
          LOGS_ALERTS_EVAL_INTERVAL: '0',
          LOGS_SELF_METRICS_INTERVAL: '0',
          LOGS_SEARCH_TIMEOUT: '50ms',
          LOGS_SEARCH_WORKERS: '2',
        });
        const short: LogsService = await buildLogsService({ config });
        try {
          const login = await short.app.inject({
            method: 'POST',
            url: '/api/login',
            payload: { username: LOGS_ADMIN, password: LOGS_ADMIN_PASSWORD },
          });
          const auth = bearer(login.json().token.access_token);
          const storm = await Promise.all(
            Array.from({ length: 6 }, () =>
              short.app.inject({ method: 'POST', url: '/api/v1/logs/list/paginate', headers: auth, payload: EXPENSIVE }),
            ),
          );
          for (const response of storm) {
            assert.ok(response.statusCode === 200 || response.statusCode === 503, `status ${response.statusCode}: ${response.body}`);
            if (response.statusCode === 503) assert.deepEqual(response.json(), TIMEOUT_BODY);
          }
          assert.ok(
            storm.some((response) => response.statusCode === 503),
            'six searches of the whole hour on two workers cannot all finish in 50ms',
          );
          assert.equal((await short.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
          // Once the stopped statements have ended, searches work again on the same service.
          await eventually(async () => {
            const cheap = await short.app.inject({ method: 'POST', url: '/api/v1/logs/list/paginate', headers: auth, payload: CHEAP });
            assert.equal(cheap.statusCode, 200);
            assert.equal(cheap.json().data.length, 1);
          });
        } finally {
          await short.app.close();
        }
      });

      test('after a timeout the statement is stopped and the next read on the same pool works', async () => {
        // 200ms: PostgreSQL's statement_timeout on this pool; SQLite's workers only know the store's budget.
        const reads: StoreReads = await openStoreReads(logs.url, logs.database.db, { timeoutMs: 200, workers: 1 });
        try {
          const hurried = createLogStore(logs.database.db, dialect, { reads: reads.db, readTimeoutMs: 20 });
          const patient = createLogStore(logs.database.db, dialect, { reads: reads.db, readTimeoutMs: 60_000 });
          const expensive = {
            tenantId: 'default',
            from: T0,
            to: T0 + HOUR - 1,
            sort: { field: 'user', order: 'asc' as const },
            page: 1,
            limit: 50,
          };
          const cheapRequest = { tenantId: 'default', from: T0, to: T0 + 59_999, page: 1, limit: 1 };
          if (dialect === 'sqlite') {
            await assert.rejects(hurried.search(expensive), QueryTimeoutError);
          } else {
            // A statement that cannot finish: another session holds the table.
            const locker = new pg.Client(logs.url);
            await locker.connect();
            try {
              await locker.query('BEGIN');
              await locker.query('LOCK TABLE log_blocks IN ACCESS EXCLUSIVE MODE');
              await assert.rejects(hurried.search(cheapRequest), QueryTimeoutError);
              // The server cancels the statement itself at statement_timeout (57014): the same error.
              await assert.rejects(patient.search(cheapRequest), QueryTimeoutError);
            } finally {
              await locker.query('ROLLBACK');
              await locker.end();
            }
          }
          const cheap = await patient.search(cheapRequest);
          assert.equal(cheap.entries.length, 1);
          if (dialect === 'sqlite') {
            // The timed-out worker's thread ends (once its native statement returns); one warm worker remains.
            await eventually(async () => assert.deepEqual(reads.pool!.threads, { live: 1, dying: 0, queued: 0 }));
          }
        } finally {
          await reads.close();
        }
      });
    });
  });
}
