import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildLogsService } from '../../../src/logs/app.js';
import { logsMigrations } from '../../../src/logs/db/migrations/index.js';
import { openDatabase } from '../../../src/shared/db/database.js';
import { migrateToLatest, migrationsUpTo } from '../../../src/shared/db/migrator.js';
import { loadLogsConfig } from '../../../src/logs/config.js';
import { loadDashboardsConfig } from '../../../src/logs/modules/dashboards/dashboards.config.js';
import { createLogStore, type LogStore } from '../../../src/logs/modules/store/index.js';
import { ConfigError } from '../../../src/shared/config/env.js';
import { TestClock } from '../../helpers/clock.js';
import { createTestDatabase, DIALECTS } from '../../helpers/databases.js';
import { bearer, LOGS_ADMIN, LOGS_ADMIN_PASSWORD } from '../../helpers/logs.js';

const MINUTE = 60_000;
const NOW = Math.floor(Date.now() / MINUTE) * MINUTE;

function ndjson(count: number): string {
  return (
    Array.from(
      { length: count },
      (_, i) => `{"index":{}}\n${JSON.stringify({ '@timestamp': new Date(NOW).toISOString(), message: `m${i}`, service: 'alpha' })}`,
    ).join('\n') + '\n'
  );
}

/**
 * The real store, wrapped so a test can make its writes fail or take time (on the injected clock):
 * the store's own failure modes (disk full, database gone) cannot be produced on demand here.
 */
function controllableStore(clock: TestClock) {
  const control = { fail: false, takesMs: 0 };
  const wrap = (store: LogStore): LogStore => ({
    search: (request) => store.search(request),
    histogram: (request) => store.histogram(request),
    fields: (tenantId) => store.fields(tenantId),
    distinct: (request) => store.distinct(request),
    fieldStats: (request) => store.fieldStats(request),
    topMessages: (request) => store.topMessages(request),
    groupCounts: (request) => store.groupCounts(request),
    aggregate: (request) => store.aggregate(request),
    numericValues: (request) => store.numericValues(request),
    forgetDocumentIds: (now) => store.forgetDocumentIds(now),
    ping: () => store.ping(),
    removeOlderThan: (tenantId, before) => store.removeOlderThan(tenantId, before),
    async append(tenantId, entries) {
      clock.advance(control.takesMs);
      if (control.fail) throw new Error('disk full');
      return store.append(tenantId, entries);
    },
  });
  return { control, wrap };
}

for (const dialect of DIALECTS) {
  describe(`pipeline status with a failing or slow store [${dialect}]`, () => {
    test('a failed store write makes the source down, slow writes degraded; the OpenAPI document describes the dashboards', async () => {
      const database = await createTestDatabase(dialect);
      const clock = new TestClock(NOW);
      const { control, wrap } = controllableStore(clock);
      const config = loadLogsConfig({
        LOGS_DATABASE_URL: database.url,
        LOGS_ADMIN_PASSWORD,
        LOGS_MFA_REQUIRED_PERMISSIONS: 'none',
        LOG_LEVEL: 'silent',
        LOGS_RETENTION_INTERVAL: '0',
        LOGS_PIPELINE_SLOW_INGEST: '1500ms',
      });
      const service = await buildLogsService({ config, now: clock.now, logStore: (db) => wrap(createLogStore(db.db, db.dialect)) });
      try {
        const login = await service.app.inject({
          method: 'POST',
          url: '/api/login',
          payload: { username: LOGS_ADMIN, password: LOGS_ADMIN_PASSWORD },
        });
        const headers = bearer(login.json().token.access_token);
        const send = (lines: number) =>
          service.app.inject({
            method: 'POST',
            url: '/api/v1/_elastic/_bulk',
            headers: { ...headers, 'content-type': 'application/x-ndjson' },
            payload: ndjson(lines),
          });
        const bulkStatus = async () => {
          const body = (await service.app.inject({ method: 'GET', url: '/api/v1/dashboard/pipeline/status', headers })).json();
          return { overall: body.status, bulk: body.sources.find((s: { source: string }) => s.source === 'bulk') };
        };

        assert.equal((await send(3)).statusCode, 200);
        assert.equal((await bulkStatus()).bulk.status, 'healthy');

        control.fail = true;
        assert.equal((await send(2)).statusCode, 500);
        const failing = await bulkStatus();
        assert.equal(failing.bulk.status, 'down');
        assert.deepEqual(failing.bulk.reasons, ['the last store write failed', '40% of entries rejected in 5 minutes (threshold 5%)']);
        assert.equal(failing.bulk.totals.store_failures, 1);
        assert.equal(failing.bulk.totals.rejected, 2);
        assert.equal(failing.bulk.last_failure_at, new Date(NOW).toISOString());
        assert.equal(failing.overall, 'down');

        // Recovered, but slow: writes of 0, 0 and 5 s average 1.67 s over 5 minutes (threshold 1.5 s).
        control.fail = false;
        control.takesMs = 5000;
        clock.advance(1000);
        assert.equal((await send(1)).statusCode, 200);
        const slow = await bulkStatus();
        assert.equal(slow.bulk.status, 'degraded');
        assert.equal(slow.bulk.last_5m.max_ingest_latency_ms, 5000);
        assert.match(slow.bulk.reasons.join(' '), /average store write/);
        assert.match(slow.bulk.reasons.join(' '), /rejected/, 'the 2 lost entries are rejections too');

        const openapi = (await service.app.inject({ method: 'GET', url: '/openapi.json' })).json();
        for (const path of [
          '/api/v1/dashboard/overview',
          '/api/v1/dashboard/pipeline/status',
          '/api/v1/dashboard/dc/status',
          '/api/v1/dashboard/throughput',
        ]) {
          const operation = openapi.paths[path]?.get;
          assert.ok(operation, path);
          assert.ok(operation.responses['200'].content['application/json'].schema.properties, `${path} documents its 200 body`);
          assert.ok(operation.responses['403'], `${path} documents 403`);
        }
        assert.ok(
          openapi.paths['/api/v1/dashboard/overview'].get.responses['200'].content['application/json'].schema.properties.top_errors,
        );
      } finally {
        await service.app.close();
        await database.drop();
      }
    });
  });
}

describe('dashboards configuration', () => {
  test('sites from LOGS_SITES, the local one from LOGS_SITE_NAME; defaults', () => {
    const defaults = loadDashboardsConfig({});
    assert.deepEqual(defaults.sites, [{ id: 'local', name: 'local' }]);
    assert.equal(defaults.localSiteId, 'local');
    assert.equal(defaults.downAfterMs, 300_000);
    assert.equal(defaults.degradedRejectedPercent, 5);
    assert.equal(defaults.slowIngestMs, 2000);
    assert.deepEqual(loadDashboardsConfig({ LOGS_SITE_NAME: 'jkt-1' }).sites, [{ id: 'jkt-1', name: 'jkt-1' }]);
    const two = loadDashboardsConfig({ LOGS_SITES: 'jkt-1:Jakarta DC 1,sby-1:Surabaya DR', LOGS_SITE_NAME: 'sby-1' });
    assert.deepEqual(two.sites, [
      { id: 'jkt-1', name: 'Jakarta DC 1' },
      { id: 'sby-1', name: 'Surabaya DR' },
    ]);
    assert.equal(two.localSiteId, 'sby-1');
    assert.equal(
      loadDashboardsConfig({ LOGS_SITES: 'jkt-1:Jakarta,sby-1' }).localSiteId,
      'jkt-1',
      'the first site when LOGS_SITE_NAME names none',
    );
    assert.deepEqual(loadLogsConfig({}).dashboards.sites, [{ id: 'local', name: 'local' }]);
  });

  test('a bad site or threshold setting names its variable', () => {
    const cases: [Record<string, string>, string][] = [
      [{ LOGS_SITES: 'jkt 1:Jakarta' }, 'LOGS_SITES'],
      [{ LOGS_SITES: 'a:A,A:B' }, 'LOGS_SITES'],
      [{ LOGS_SITE_NAME: 'no/slash' }, 'LOGS_SITE_NAME'],
      [{ LOGS_PIPELINE_DOWN_AFTER: '1s' }, 'LOGS_PIPELINE_DOWN_AFTER'],
      [{ LOGS_PIPELINE_DEGRADED_REJECTED_PERCENT: '101' }, 'LOGS_PIPELINE_DEGRADED_REJECTED_PERCENT'],
      [{ LOGS_PIPELINE_SLOW_INGEST: 'slow' }, 'LOGS_PIPELINE_SLOW_INGEST'],
      [{ LOGS_SOURCE_COUNTS_FLUSH_INTERVAL: '0' }, 'LOGS_SOURCE_COUNTS_FLUSH_INTERVAL'],
    ];
    for (const [env, variable] of cases) {
      assert.throws(
        () => loadDashboardsConfig(env),
        (error: unknown) => error instanceof ConfigError && error.variable === variable,
        JSON.stringify(env),
      );
    }
  });
});

for (const dialect of DIALECTS) {
  test(`a logs database migrated before the dashboards migration existed still starts [${dialect}]`, async () => {
    const database = await createTestDatabase(dialect);
    try {
      const db = await openDatabase(database.url);
      try {
        await migrateToLatest(db.db, migrationsUpTo(logsMigrations, '0005_infra_metric_points'), 'logs');
        assert.equal((await migrateToLatest(db.db, logsMigrations, 'logs'))[0], '0006_dashboards');
      } finally {
        await db.close();
      }
    } finally {
      await database.drop();
    }
  });
}
