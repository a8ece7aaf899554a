import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DIALECTS } from '../helpers/databases.js';
import { eventually } from '../helpers/eventually.js';
import { startTestGateway } from '../helpers/gateway.js';
import { startTestLogs, uniqueName, type TestLogs } from '../helpers/logs.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';

/** Both services' Prometheus metrics (docs/metrics.md): process series, and the logs service's counters moving. */

/** The value of one series of a Prometheus text exposition; 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const wanted = Object.entries(labels).every(([key, value]) => line.includes(`${key}="${value}"`));
    if (wanted) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return 0;
}

const PROCESS_SERIES = [
  'process_cpu_user_seconds_total',
  'process_resident_memory_bytes',
  'nodejs_eventloop_lag_seconds',
  'nodejs_heap_size_used_bytes',
];

for (const dialect of DIALECTS) {
  describe(`metrics [${dialect}]`, () => {
    let logs: TestLogs;
    before(async () => {
      logs = await startTestLogs(dialect, { LOGS_ALERTS_EVAL_INTERVAL: '0', LOGS_WEBHOOK_ALLOWED_HOSTS: '127.0.0.1' });
    });
    after(async () => logs.close());
    const scrape = async () => {
      const response = await logs.request({ method: 'GET', url: '/metrics' });
      assert.equal(response.statusCode, 200);
      assert.match(String(response.headers['content-type']), /^text\/plain; version=0\.0\.4/);
      return response.body;
    };

    test('the logs service: process series, store size, and counters that move with ingestion, queries and alerts', async () => {
      const before = await scrape();
      for (const series of PROCESS_SERIES) assert.ok(before.includes(`\n${series}`) || before.startsWith(series), series);
      assert.ok(sample(before, 'logs_store_size_bytes') > 0);

      const admin = await logs.admin();
      const marker = uniqueName('metrics').toLowerCase();
      const body =
        Array.from({ length: 3 }, (_, i) => `{"index":{}}\n${JSON.stringify({ message: `${marker} ${i}` })}\n`).join('') + 'not json\n';
      const bulk = await logs.request({
        method: 'POST',
        url: '/api/v1/_elastic/_bulk',
        headers: { ...admin, 'content-type': 'application/x-ndjson' },
        payload: body,
      });
      assert.equal(bulk.statusCode, 200);
      for (let i = 0; i < 2; i += 1) {
        const search = await logs.request({
          method: 'POST',
          url: '/api/v1/logs/list/paginate',
          headers: admin,
          payload: { query: marker },
        });
        assert.equal(search.statusCode, 200);
      }

      const receiver = await startWebhookReceiver();
      try {
        const rule = await logs.request({
          method: 'POST',
          url: '/api/v1/alerts/rules',
          headers: admin,
          payload: {
            name: uniqueName('rule'),
            query: 'nothing-matches-this',
            window: '5m',
            condition: { type: 'absent' },
            severity: 'high',
            webhook: { url: receiver.url, secret: 'a-very-secret-key-123' },
          },
        });
        assert.equal(rule.statusCode, 201, rule.body);
        assert.ok((await logs.alerts.evaluateRule(rule.json().id)).opened);
        await receiver.waitFor(1);

        const afterwards = await eventually(async () => {
          const text = await scrape();
          assert.equal(sample(text, 'logs_webhook_deliveries_total', { outcome: 'delivered' }), 1);
          return text;
        });
        const delta = (name: string, labels: Record<string, string>) => sample(afterwards, name, labels) - sample(before, name, labels);
        assert.equal(delta('logs_ingest_entries_total', { source: 'bulk', tenant: 'default', outcome: 'stored' }), 3);
        assert.equal(delta('logs_ingest_entries_total', { source: 'bulk', tenant: 'default', outcome: 'rejected' }), 1);
        assert.equal(delta('logs_ingest_batches_total', { source: 'bulk', tenant: 'default' }), 1);
        assert.equal(sample(afterwards, 'logs_ingest_in_flight_entries', { source: 'bulk' }), 0);
        assert.equal(
          delta('logs_http_request_duration_seconds_count', { route: '/api/v1/logs/list/paginate', method: 'POST', status: '200' }),
          2,
        );
        assert.ok(!afterwards.includes(marker), 'raw URLs and bodies never become labels');
        assert.equal(delta('logs_alert_evaluations_total', { outcome: 'holds' }), 1);
        assert.equal(sample(afterwards, 'logs_alerts_firing', { severity: 'high' }), 1);
      } finally {
        await receiver.close();
      }
    });
  });
}

describe('metrics behind a token, and the gateway', () => {
  test('LOGS_METRICS_TOKEN: 401 without it, 200 with it', async () => {
    const logs = await startTestLogs('sqlite', { LOGS_METRICS_TOKEN: 'scrape-secret-0123456789' });
    try {
      const refused = await logs.request({ method: 'GET', url: '/metrics' });
      assert.equal(refused.statusCode, 401);
      assert.deepEqual(refused.json(), { error: 'invalid token' });
      const allowed = await logs.request({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer scrape-secret-0123456789' } });
      assert.equal(allowed.statusCode, 200);
    } finally {
      await logs.close();
    }
  });

  test('the gateway has the process and runtime series beside its proxy metrics', async () => {
    const gateway = await startTestGateway('sqlite');
    try {
      const response = await gateway.request({ method: 'GET', url: '/metrics' });
      assert.equal(response.statusCode, 200);
      for (const series of PROCESS_SERIES) assert.ok(response.body.includes(`\n${series}`), series);
    } finally {
      await gateway.close();
    }
  });
});
