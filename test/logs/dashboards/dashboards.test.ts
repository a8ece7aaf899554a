import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildLogsService } from '../../../src/logs/app.js';
import { loadLogsConfig } from '../../../src/logs/config.js';
import { createTestDatabase, DIALECTS } from '../../helpers/databases.js';
import { bearer, LOGS_ADMIN, LOGS_ADMIN_PASSWORD, startTestLogs, uniqueName, type TestLogs } from '../../helpers/logs.js';
import { TestClock } from '../../helpers/clock.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** The test clock's "now": the start of the current hour, so minute and 10-minute buckets are predictable. */
const NOW = Math.floor(Date.now() / HOUR) * HOUR;
const iso = (ms: number) => new Date(ms).toISOString();
const q = (params: Record<string, string | number>) =>
  new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)])).toString();

function ndjson(docs: object[]): string {
  return `${docs.map((doc) => `{"index":{}}\n${JSON.stringify(doc)}`).join('\n')}\n`;
}

/** An OTLP/JSON logs request with one resource (service.name) and records [time, severity, message]. */
function otlp(service: string, records: [number, string, string][]) {
  return {
    resourceLogs: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] },
        scopeLogs: [
          {
            logRecords: records.map(([ms, severity, message]) => ({
              timeUnixNano: `${BigInt(ms) * 1_000_000n}`,
              severityText: severity,
              body: { stringValue: message },
            })),
          },
        ],
      },
    ],
  };
}

async function bulk(logs: TestLogs, headers: Record<string, string>, docs: object[] | string) {
  const response = await logs.request({
    method: 'POST',
    url: '/api/v1/_elastic/_bulk',
    headers: { ...headers, 'content-type': 'application/x-ndjson' },
    payload: typeof docs === 'string' ? docs : ndjson(docs),
  });
  assert.equal(response.statusCode, 200, response.body);
  return response.json();
}

async function sendOtlp(logs: TestLogs, headers: Record<string, string>, body: object) {
  const response = await logs.request({ method: 'POST', url: '/v1/logs', headers, payload: body });
  assert.equal(response.statusCode, 200, response.body);
}

async function newTenant(logs: TestLogs): Promise<string> {
  const response = await logs.request({
    method: 'POST',
    url: '/api/tenants',
    headers: await logs.admin(),
    payload: { name: uniqueName('t') },
  });
  assert.equal(response.statusCode, 201, response.body);
  return response.json().id;
}

for (const dialect of DIALECTS) {
  describe(`dashboards [${dialect}]`, () => {
    let logs: TestLogs;
    let admin: Record<string, string>;
    let viewer: Record<string, string>;
    before(async () => {
      // Tokens outlive the clock moves of the threshold tests.
      logs = await startTestLogs(dialect, { LOGS_ACCESS_TOKEN_TTL: '2h' });
      logs.clock.ms = NOW;
      admin = await logs.admin();
      viewer = (await logs.userWith(['dashboard:read'])).headers;
    });
    after(async () => logs.close());

    const get = (url: string, headers: Record<string, string> = viewer) => logs.request({ method: 'GET', url, headers });

    test('every dashboard needs a token (401) and dashboard:read (403)', async () => {
      const reader = (await logs.userWith(['logs:read', 'alerts:read'])).headers;
      for (const url of [
        '/api/v1/dashboard/overview',
        '/api/v1/dashboard/pipeline/status',
        '/api/v1/dashboard/dc/status',
        '/api/v1/dashboard/throughput',
      ]) {
        const anonymous = await logs.request({ method: 'GET', url });
        assert.equal(anonymous.statusCode, 401, url);
        assert.deepEqual(anonymous.json(), { error: 'missing bearer token' });
        const bad = await logs.request({ method: 'GET', url, headers: bearer('not-a-token') });
        assert.equal(bad.statusCode, 401, url);
        const denied = await get(url, reader);
        assert.equal(denied.statusCode, 403, url);
        assert.deepEqual(denied.json(), { error: 'permission denied' });
        assert.equal((await get(url)).statusCode, 200, url);
      }
    });

    test('overview: volume, error rate, top services and error messages from bulk and OTLP data; tenant isolation', async () => {
      const tenant = await newTenant(logs);
      const headers = { ...admin, 'x-tenant-id': tenant };
      const at = (minutesAgo: number) => iso(NOW - minutesAgo * MINUTE);
      const docs = [
        ...Array.from({ length: 6 }, (_, i) => ({ '@timestamp': at(50 - i), message: `served ${i}`, level: 'info', service: 'alpha' })),
        { '@timestamp': at(40), message: 'db timeout', level: 'ERROR', service: 'alpha' },
        { '@timestamp': at(35), message: 'db timeout', level: 'error', service: 'alpha' },
        { '@timestamp': at(30), message: 'disk full', level: 'fatal', service: 'beta' },
        { '@timestamp': at(29), message: 'slow', level: 'warn', service: 'beta' },
        { '@timestamp': at(28), message: 'slow', level: 'warn', service: 'beta' },
        { '@timestamp': at(5), message: 'db timeout', level: 'error' },
      ];
      assert.equal((await bulk(logs, headers, docs)).errors, false);
      await sendOtlp(
        logs,
        headers,
        otlp('checkout', [
          [NOW - 15 * MINUTE, 'ERROR', 'payment declined'],
          [NOW - 14 * MINUTE, 'INFO', 'paid'],
        ]),
      );
      // Outside the range asked for below: not counted.
      assert.equal(
        (await bulk(logs, headers, [{ '@timestamp': iso(NOW - 2 * HOUR), message: 'old', level: 'error', service: 'alpha' }])).errors,
        false,
      );

      const response = await get(
        `/api/v1/dashboard/overview?${q({ from: iso(NOW - HOUR), to: iso(NOW), interval: '10m', top: 3 })}`,
        headers,
      );
      assert.equal(response.statusCode, 200, response.body);
      const body = response.json();
      assert.deepEqual(body.range, { from: iso(NOW - HOUR), to: iso(NOW) });
      assert.equal(body.interval, '10m');
      assert.equal(body.volume.total, 14);
      assert.equal(body.volume.series.length, 6);
      assert.deepEqual(
        body.volume.series.map((b: { count: number }) => b.count),
        [0, 6, 2, 3, 2, 1],
      );
      assert.deepEqual(
        body.volume.series.map((b: { errors: number }) => b.errors),
        [0, 0, 2, 1, 1, 1],
      );
      assert.equal(body.volume.series[3].ts, iso(NOW - 30 * MINUTE));
      assert.equal(body.errors.total, 5);
      assert.equal(body.errors.rate, Number((5 / 14).toFixed(6)));
      assert.deepEqual(body.errors.by_level, { error: 4, fatal: 1 });
      assert.deepEqual(
        body.top_services.map((s: { service: string; count: number; errors: number }) => [s.service, s.count, s.errors]),
        [
          ['alpha', 8, 2],
          ['beta', 3, 1],
          ['checkout', 2, 1],
        ],
      );
      assert.equal(body.top_services[0].error_rate, 0.25);
      assert.deepEqual(
        body.top_errors.map((e: { message: string; count: number }) => [e.message, e.count]),
        [
          ['db timeout', 3],
          ['disk full', 1],
          ['payment declined', 1],
        ],
      );
      assert.deepEqual(body.top_errors[0].services, ['alpha']);
      assert.equal(body.top_errors[0].last_seen, at(5));
      assert.deepEqual(body.alerts, { available: true, active_total: 0, by_severity: {} });

      // Default range: the last 24 hours, so the 2-hour-old error counts too; 6 of 15 entries are errors.
      const defaults = (await get('/api/v1/dashboard/overview', headers)).json();
      assert.equal(defaults.volume.total, 15);
      assert.equal(defaults.errors.total, 6);
      assert.equal(defaults.range.to, iso(NOW));
      assert.equal(defaults.top_services.length, 4);
      assert.deepEqual(defaults.top_services[3], {
        service: '(none)',
        count: 1,
        share: Number((1 / 15).toFixed(6)),
        errors: 1,
        error_rate: 1,
      });

      // The viewer's own tenant (default) sees none of it.
      const own = (await get(`/api/v1/dashboard/overview?${q({ from: iso(NOW - HOUR), to: iso(NOW) })}`)).json();
      assert.ok(!own.top_services.some((s: { service: string }) => s.service === 'checkout' || s.service === 'beta'));
      assert.ok(!own.top_errors.some((e: { message: string }) => e.message === 'disk full'));
    });

    test('bad query parameters are 400 and change nothing', async () => {
      const bad = [
        '/api/v1/dashboard/overview?from=yesterday',
        `/api/v1/dashboard/overview?${q({ from: iso(NOW), to: iso(NOW - HOUR) })}`,
        '/api/v1/dashboard/overview?top=0',
        '/api/v1/dashboard/overview?top=many',
        '/api/v1/dashboard/overview?interval=fast',
        `/api/v1/dashboard/overview?${q({ from: iso(NOW - 30 * 86_400_000), to: iso(NOW), interval: '1s' })}`,
        '/api/v1/dashboard/dc/status?to=never',
        '/api/v1/dashboard/throughput?interval=30s',
        '/api/v1/dashboard/throughput?interval=90s',
        '/api/v1/dashboard/throughput?interval=99999999999999999999d',
        '/api/v1/dashboard/overview?interval=99999999999999999999d',
        '/api/v1/dashboard/throughput?services=51',
        `/api/v1/dashboard/throughput?${q({ from: iso(NOW), to: iso(NOW) })}`,
      ];
      for (const url of bad) {
        const response = await get(url);
        assert.equal(response.statusCode, 400, `${url}: ${response.body}`);
        assert.equal(response.json().error, 'invalid json body');
      }
    });

    test('pipeline status: per source counts and rates, gateway recognised, thresholds degraded and down', async () => {
      const tenant = await newTenant(logs);
      const headers = { ...admin, 'x-tenant-id': tenant };
      const status = async () => {
        const response = await get('/api/v1/dashboard/pipeline/status', headers);
        assert.equal(response.statusCode, 200, response.body);
        const body = response.json();
        return { ...body, by: Object.fromEntries(body.sources.map((s: { source: string }) => [s.source, s])) };
      };

      const idle = await status();
      assert.equal(idle.status, 'healthy');
      assert.equal(idle.store.status, 'up');
      assert.equal(idle.backlog, 0);
      assert.deepEqual(
        idle.sources.map((s: { source: string }) => s.source),
        ['otlp', 'bulk', 'gateway'],
      );
      assert.equal(idle.by.bulk.active, false);
      assert.equal(idle.by.bulk.last_ingest_at, null);
      assert.equal(idle.thresholds.down_after_ms, 300_000);

      await bulk(
        logs,
        headers,
        Array.from({ length: 12 }, (_, i) => ({ '@timestamp': iso(NOW - i * 1000), message: `m${i}`, service: 'alpha' })),
      );
      await sendOtlp(
        logs,
        headers,
        otlp('gerbang-gateway', [
          [NOW, 'INFO', 'GET /api 200'],
          [NOW, 'INFO', 'GET /api 200'],
          [NOW, 'WARN', 'GET /x 404'],
        ]),
      );
      await sendOtlp(
        logs,
        headers,
        otlp('checkout', [
          [NOW, 'INFO', 'paid'],
          [NOW, 'INFO', 'paid'],
        ]),
      );

      const busy = await status();
      assert.equal(busy.status, 'healthy');
      assert.equal(busy.by.bulk.totals.accepted, 12);
      assert.equal(busy.by.bulk.totals.received, 12);
      assert.equal(busy.by.bulk.rates.stored_per_second_1m, 0.2);
      assert.equal(busy.by.bulk.rates.stored_per_second_5m, 0.04);
      assert.equal(busy.by.bulk.last_ingest_at, iso(NOW));
      assert.equal(busy.by.bulk.backlog, 0);
      assert.equal(busy.by.gateway.totals.accepted, 3);
      assert.equal(busy.by.otlp.totals.accepted, 2);
      assert.ok(busy.sources.every((s: { status: string }) => s.status === 'healthy'));

      // One malformed line of the next bulk batch: 1 of 14 received in 5 minutes rejected (7% > 5%).
      logs.clock.advance(2 * MINUTE);
      await bulk(logs, headers, `{"index":{}}\n${JSON.stringify({ '@timestamp': iso(NOW), message: 'ok' })}\n{"index":{}}\nnot json\n`);
      const degraded = await status();
      assert.equal(degraded.by.bulk.status, 'degraded');
      assert.equal(degraded.by.bulk.totals.rejected, 1);
      assert.equal(degraded.by.bulk.last_5m.rejected_ratio, Number((1 / 14).toFixed(6)));
      assert.match(degraded.by.bulk.reasons[0], /rejected/);
      assert.equal(degraded.by.bulk.rates.stored_per_second_1m, Number((1 / 60).toFixed(3)));
      assert.equal(degraded.status, 'degraded');

      // Nothing for more than 5 minutes from sources that were active: down.
      logs.clock.advance(3 * MINUTE + 1000);
      const quiet = await status();
      assert.equal(quiet.by.gateway.status, 'down');
      assert.match(quiet.by.gateway.reasons[0], /nothing stored/);
      assert.equal(quiet.by.otlp.status, 'down');
      assert.equal(quiet.by.bulk.status, 'degraded', 'its last batch was 3 minutes ago, its rejection still in the window');
      assert.equal(quiet.by.bulk.rates.stored_per_second_1m, 0);
      assert.equal(quiet.status, 'down');

      await sendOtlp(logs, headers, otlp('gerbang-gateway', [[NOW, 'INFO', 'back']]));
      const back = await status();
      assert.equal(back.by.gateway.status, 'healthy');
      assert.equal(back.by.gateway.totals.accepted, 4);

      // Another tenant's pipeline is its own.
      const mine = (await get('/api/v1/dashboard/pipeline/status')).json();
      assert.equal(mine.sources.find((s: { source: string }) => s.source === 'gateway').totals.accepted, 0);
      logs.clock.ms = NOW;
    });

    test("pipeline status: batches of the gateway's ingest account count as gateway whatever their service name", async () => {
      const account = await logs.provisionIngestAccount('gateway');
      const basic = { authorization: `Basic ${Buffer.from(`${account.username}:${account.password}`).toString('base64')}` };
      const before = (await get('/api/v1/dashboard/pipeline/status', admin)).json();
      const count = (body: { sources: { source: string; totals: { accepted: number } }[] }, source: string) =>
        body.sources.find((s) => s.source === source)!.totals.accepted;
      await sendOtlp(
        logs,
        basic,
        otlp('renamed-gateway', [
          [NOW, 'INFO', 'GET / 200'],
          [NOW, 'INFO', 'GET / 200'],
        ]),
      );
      const after = (await get('/api/v1/dashboard/pipeline/status', admin)).json();
      assert.equal(count(after, 'gateway'), count(before, 'gateway') + 2);
      assert.equal(count(after, 'otlp'), count(before, 'otlp'));
    });

    test('dc status: a single-site install shows one site with all data', async () => {
      const tenant = await newTenant(logs);
      const headers = { ...admin, 'x-tenant-id': tenant };
      await bulk(logs, headers, [
        { '@timestamp': iso(NOW - MINUTE), message: 'a', service: 'api', dc: 'jkt-1' },
        { '@timestamp': iso(NOW - 2 * MINUTE), message: 'b', service: 'api', cloud: { region: 'ap-southeast-3' } },
        { '@timestamp': iso(NOW - 20 * MINUTE), message: 'c', service: 'worker' },
      ]);
      const response = await get('/api/v1/dashboard/dc/status', headers);
      assert.equal(response.statusCode, 200, response.body);
      const body = response.json();
      assert.equal(body.local_site, 'local');
      assert.equal(body.sites.length, 1);
      const [site] = body.sites;
      assert.deepEqual([site.id, site.local, site.store.status, site.volume, site.last_seen], ['local', true, 'up', 3, iso(NOW - MINUTE)]);
      assert.deepEqual(
        site.services.map((s: { service: string; count: number; status: string }) => [s.service, s.count, s.status]),
        [
          ['api', 2, 'up'],
          ['worker', 1, 'stale'],
        ],
      );
      assert.equal(site.status, 'degraded');
      assert.deepEqual(body.unassigned, []);
    });

    test('throughput: per source by ingestion minute and per service, empty buckets included', async () => {
      const tenant = await newTenant(logs);
      const headers = { ...admin, 'x-tenant-id': tenant };
      logs.clock.ms = NOW + 10_000;
      await bulk(
        logs,
        headers,
        Array.from({ length: 6 }, (_, i) => ({ '@timestamp': iso(NOW - 3 * MINUTE + i), message: 'x', service: i < 4 ? 'alpha' : 'beta' })),
      );
      await sendOtlp(
        logs,
        headers,
        otlp('checkout', [
          [NOW - 3 * MINUTE, 'INFO', 'a'],
          [NOW - 3 * MINUTE, 'INFO', 'b'],
          [NOW - MINUTE, 'INFO', 'c'],
        ]),
      );
      await sendOtlp(
        logs,
        headers,
        otlp('gerbang-gateway', [
          [NOW - MINUTE, 'INFO', 'g1'],
          [NOW - MINUTE, 'INFO', 'g2'],
        ]),
      );
      logs.clock.advance(2 * MINUTE);
      await bulk(
        logs,
        headers,
        Array.from({ length: 3 }, () => ({ '@timestamp': iso(NOW + 2 * MINUTE), message: 'y', service: 'alpha' })),
      );

      const url = `/api/v1/dashboard/throughput?${q({ from: iso(NOW - 5 * MINUTE), to: iso(NOW + 5 * MINUTE), interval: '1m' })}`;
      const response = await get(url, headers);
      assert.equal(response.statusCode, 200, response.body);
      const body = response.json();
      assert.equal(body.interval_ms, MINUTE);
      const source = (name: string) => body.sources.find((s: { source: string }) => s.source === name);
      for (const s of body.sources) assert.equal(s.series.length, 10);
      assert.deepEqual(
        source('bulk').series.map((p: { count: number }) => p.count),
        [0, 0, 0, 0, 0, 6, 0, 3, 0, 0],
      );
      assert.equal(source('bulk').series[5].ts, iso(NOW));
      assert.equal(source('bulk').series[5].eps, 0.1);
      assert.equal(source('bulk').total, 9);
      assert.equal(source('otlp').total, 3);
      assert.equal(source('gateway').total, 2);
      const service = (name: string) => body.services.find((s: { service: string }) => s.service === name);
      assert.deepEqual(
        service('alpha').series.map((p: { count: number }) => p.count),
        [0, 0, 4, 0, 0, 0, 0, 3, 0, 0],
      );
      assert.equal(service('checkout').total, 3);
      assert.deepEqual(
        body.services.map((s: { service: string }) => s.service),
        ['alpha', 'checkout', 'beta', 'gerbang-gateway'],
      );

      const top = (
        await get(`/api/v1/dashboard/throughput?${q({ from: iso(NOW - 5 * MINUTE), to: iso(NOW + 5 * MINUTE), services: 1 })}`, headers)
      ).json();
      assert.equal(top.interval, '1m', 'auto interval is at least a minute');
      assert.deepEqual(
        top.services.map((s: { service: string; total: number }) => [s.service, s.total]),
        [
          ['alpha', 7],
          ['(other)', 7],
        ],
      );

      // Tenant isolation: the viewer's tenant has none of these.
      const own = (await get(url)).json();
      assert.ok(!own.services.some((s: { service: string }) => ['alpha', 'beta', 'checkout'].includes(s.service)));
      assert.ok(own.sources.filter((s: { source: string }) => s.source !== 'gateway').every((s: { total: number }) => s.total === 0));
      logs.clock.ms = NOW;
    });
  });

  describe(`dashboards with sites, and source counts across a restart [${dialect}]`, () => {
    test('dc status groups services by dc / cloud.region; per-source counts survive a restart', async () => {
      const database = await createTestDatabase(dialect);
      const clock = new TestClock(NOW);
      const config = loadLogsConfig({
        LOGS_DATABASE_URL: database.url,
        LOGS_ADMIN_PASSWORD,
        LOGS_MFA_REQUIRED_PERMISSIONS: 'none',
        LOG_LEVEL: 'silent',
        LOGS_RETENTION_INTERVAL: '0',
        LOGS_SITES: 'jkt-1:Jakarta DC 1, sby-1:Surabaya DR, mks-1:Makassar',
        LOGS_SITE_NAME: 'jkt-1',
      });
      const start = async () => {
        const service = await buildLogsService({
          config,
          now: clock.now,
          activeAlertsBySeverity: async (tenantId): Promise<Record<string, number>> =>
            tenantId === 'default' ? { critical: 2, warning: 1, info: 0 } : { critical: 99 },
        });
        const login = await service.app.inject({
          method: 'POST',
          url: '/api/login',
          payload: { username: LOGS_ADMIN, password: LOGS_ADMIN_PASSWORD },
        });
        return { service, headers: bearer(login.json().token.access_token) };
      };
      let { service, headers } = await start();
      try {
        const docs = [
          { '@timestamp': iso(NOW - MINUTE), message: 'a', service: 'api', dc: 'JKT-1' },
          { '@timestamp': iso(NOW - MINUTE), message: 'b', service: 'api', dc: 'jkt-1' },
          { '@timestamp': iso(NOW - 2 * MINUTE), message: 'c', service: 'worker' },
          { '@timestamp': iso(NOW - 10 * MINUTE), message: 'd', service: 'billing', cloud: { region: 'sby-1' } },
          { '@timestamp': iso(NOW - 3 * MINUTE), message: 'e', service: 'odd', dc: 'xyz-9' },
        ];
        const stored = await service.app.inject({ method: 'POST', url: '/api/v1/_elastic/_bulk', headers, payload: ndjson(docs) });
        assert.equal(stored.json().errors, false);

        const body = (await service.app.inject({ method: 'GET', url: '/api/v1/dashboard/dc/status', headers })).json();
        assert.equal(body.local_site, 'jkt-1');
        const site = (id: string) => body.sites.find((s: { id: string }) => s.id === id);
        assert.deepEqual(
          body.sites.map((s: { id: string; name: string }) => [s.id, s.name]),
          [
            ['jkt-1', 'Jakarta DC 1'],
            ['sby-1', 'Surabaya DR'],
            ['mks-1', 'Makassar'],
          ],
        );
        assert.equal(site('jkt-1').local, true);
        assert.equal(site('jkt-1').store.status, 'up');
        assert.equal(site('jkt-1').status, 'healthy');
        assert.deepEqual(
          site('jkt-1').services.map((s: { service: string; count: number }) => [s.service, s.count]),
          [
            ['api', 2],
            ['worker', 1],
          ],
        );
        assert.equal(site('jkt-1').volume, 3);
        assert.equal(site('sby-1').store.status, 'unknown');
        assert.equal(site('sby-1').status, 'down', 'its only service is stale');
        assert.deepEqual(
          site('sby-1').services.map((s: { service: string; status: string }) => [s.service, s.status]),
          [['billing', 'stale']],
        );
        assert.equal(site('mks-1').status, 'unknown');
        assert.equal(site('mks-1').volume, 0);
        assert.deepEqual(
          body.unassigned.map((u: { dc: string; volume: number }) => [u.dc, u.volume]),
          [['xyz-9', 1]],
        );

        const overview = (await service.app.inject({ method: 'GET', url: '/api/v1/dashboard/overview', headers })).json();
        assert.deepEqual(overview.alerts, { available: true, active_total: 3, by_severity: { critical: 2, warning: 1 } });

        // Restart on the same database: the per-source minute counts are still there.
        await service.app.close();
        ({ service, headers } = await start());
        const throughput = (
          await service.app.inject({
            method: 'GET',
            url: `/api/v1/dashboard/throughput?${q({ from: iso(NOW - 5 * MINUTE), to: iso(NOW + 5 * MINUTE) })}`,
            headers,
          })
        ).json();
        const bulkSource = throughput.sources.find((s: { source: string }) => s.source === 'bulk');
        assert.equal(bulkSource.total, 5);
        assert.equal(bulkSource.series[5].count, 5);
      } finally {
        await service.app.close();
        await database.drop();
      }
    });
  });
}
