import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect, type AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createTestDatabase, DIALECTS } from '../../helpers/databases.js';
import { eventually } from '../../helpers/eventually.js';
import { startTestGateway } from '../../helpers/gateway.js';
import { LOGS_ADMIN, LOGS_ADMIN_PASSWORD, startTestLogs, uniqueName, type TestLogs } from '../../helpers/logs.js';
import { killHard, startLogsProcess } from '../../helpers/logs-process.js';
import { closedPort } from '../../helpers/upstream.js';
import { startWebhookReceiver } from '../../helpers/webhook-receiver.js';

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
      logs = await startTestLogs(dialect, {
        LOGS_ALERTS_EVAL_INTERVAL: '0',
        LOGS_WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
        LOGS_WEBHOOK_ATTEMPTS: '3',
        LOGS_WEBHOOK_BACKOFF: '10ms',
      });
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

    test('webhook retries: every attempt after the first counts in logs_webhook_retries_total, each with its outcome', async () => {
      const receiver = await startWebhookReceiver();
      try {
        receiver.state.respond = (index) => (index < 2 ? 500 : 204);
        const before = await scrape();
        const rule = await logs.request({
          method: 'POST',
          url: '/api/v1/alerts/rules',
          headers: await logs.admin(),
          payload: {
            name: uniqueName('rule'),
            query: 'nothing-matches-this-either',
            window: '5m',
            condition: { type: 'absent' },
            severity: 'low',
            webhook: { url: receiver.url },
          },
        });
        assert.equal(rule.statusCode, 201, rule.body);
        assert.ok((await logs.alerts.evaluateRule(rule.json().id)).opened);
        await logs.alertNotifier.idle();
        assert.equal(receiver.received.length, 3, 'two failures, then delivered');

        const afterwards = await scrape();
        const delta = (name: string, labels: Record<string, string> = {}) =>
          sample(afterwards, name, labels) - sample(before, name, labels);
        assert.equal(delta('logs_webhook_retries_total'), 2);
        assert.equal(delta('logs_webhook_deliveries_total', { outcome: 'failed' }), 2);
        assert.equal(delta('logs_webhook_deliveries_total', { outcome: 'delivered' }), 1);
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

  test('a request whose client leaves before the answer counts in logs_http_requests_abandoned_total', async () => {
    const logs = await startTestLogs('sqlite');
    try {
      const admin = await logs.admin();
      await logs.app.listen({ host: '127.0.0.1', port: 0 });
      const { port } = logs.app.server.address() as AddressInfo;
      const labels = { route: '/api/v1/_elastic/_bulk', method: 'POST' };
      const scrape = async () => (await logs.request({ method: 'GET', url: '/metrics' })).body;
      assert.equal(sample(await scrape(), 'logs_http_requests_abandoned_total', labels), 0);
      // A shipper that stops half-way through its upload: the headers and part of the body, then the connection closes.
      const socket = connect({ host: '127.0.0.1', port });
      socket.on('error', () => {});
      const routed = new Promise((resolve) => logs.app.server.once('request', resolve));
      socket.write(
        `POST /api/v1/_elastic/_bulk HTTP/1.1\r\nHost: x\r\nAuthorization: ${admin.authorization}\r\n` +
          'Content-Type: application/x-ndjson\r\nContent-Length: 1000\r\n\r\n{"index":{}}\n',
      );
      await routed;
      socket.destroy();
      await eventually(async () => assert.equal(sample(await scrape(), 'logs_http_requests_abandoned_total', labels), 1));
      // It has no status and no duration: nothing in the latency histogram.
      assert.ok(!(await scrape()).includes('route="/api/v1/_elastic/_bulk",method="POST",status='));
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

  test("the gateway's own routes (login, users, docs) are measured by route pattern, never by raw path", async () => {
    const gateway = await startTestGateway('sqlite');
    try {
      const scrape = async () => (await gateway.request({ method: 'GET', url: '/metrics' })).body;
      const before = await scrape();
      const token = await gateway.login();
      const wrong = await gateway.request({
        method: 'POST',
        url: '/api/v1/auth/login',
        payload: { no_pegawai: 'admin', kata_sandi: 'Wrong#Passw0rd' },
      });
      assert.equal(wrong.statusCode, 401);
      const { id } = await gateway.createUser();
      assert.equal(
        (await gateway.request({ method: 'GET', url: `/api/v1/pengguna/${id}`, headers: { authorization: token } })).statusCode,
        200,
      );
      assert.equal((await gateway.request({ method: 'GET', url: '/api/v1/docs.json?probe=1' })).statusCode, 200);
      for (let i = 0; i < 3; i += 1) await gateway.request({ method: 'GET', url: '/readyz' });

      const afterwards = await scrape();
      const delta = (labels: Record<string, string>) =>
        sample(afterwards, 'gateway_http_request_duration_seconds_count', labels) -
        sample(before, 'gateway_http_request_duration_seconds_count', labels);
      assert.equal(delta({ route: '/api/v1/auth/login', method: 'POST', status: '200' }), 2, 'ours and createUser’s');
      assert.equal(delta({ route: '/api/v1/auth/login', method: 'POST', status: '401' }), 1);
      assert.equal(delta({ route: '/api/v1/pengguna', method: 'POST', status: '201' }), 1);
      assert.equal(delta({ route: '/api/v1/pengguna/:id', method: 'GET', status: '200' }), 1);
      assert.equal(delta({ route: '/api/v1/docs.json', method: 'GET', status: '200' }), 1);
      assert.ok(!afterwards.includes(id), 'ids never become labels');
      assert.ok(!afterwards.includes('probe=1'), 'queries never become labels');
      assert.ok(!afterwards.includes('route="/readyz"'), 'the probes are not measured');
    } finally {
      await gateway.close();
    }
  });

  test('gateway_ready and logs_ready follow /readyz: 1 while the database answers, 0 once it does not', async () => {
    const gateway = await startTestGateway('sqlite');
    const logs = await startTestLogs('sqlite');
    try {
      const gatewayScrape = async () => (await gateway.request({ method: 'GET', url: '/metrics' })).body;
      const logsScrape = async () => (await logs.request({ method: 'GET', url: '/metrics' })).body;
      assert.match(await gatewayScrape(), /^gateway_ready 1$/m);
      assert.match(await logsScrape(), /^logs_ready 1$/m);
      await gateway.database.close();
      assert.equal((await gateway.request({ method: 'GET', url: '/readyz' })).statusCode, 503);
      assert.match(await gatewayScrape(), /^gateway_ready 0$/m);
    } finally {
      await gateway.close().catch(() => {});
      await logs.close();
    }
  });
});

/** Every JSON log line the process writes from now on, parsed, in `into`. */
function collectLogLines(child: ChildProcess, into: Record<string, unknown>[]): void {
  let pending = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    pending += chunk.toString();
    const lines = pending.split('\n');
    pending = lines.pop()!;
    for (const text of lines) if (text.startsWith('{')) into.push(JSON.parse(text) as Record<string, unknown>);
  });
}

for (const dialect of DIALECTS) {
  describe(`the retention sweep's log line and counter [${dialect}]`, () => {
    const cleanup: (() => Promise<void>)[] = [];
    after(async () => {
      for (const step of cleanup.reverse()) await step();
    });

    test('a sweep removes a tenant’s entries older than its retention, logs one line with what it removed, and the counter moves', async () => {
      const database = await createTestDatabase(dialect);
      cleanup.push(() => database.drop());
      const port = await closedPort();
      const base = `http://127.0.0.1:${port}`;
      const child = await startLogsProcess(database.url, port, { LOGS_RETENTION_INTERVAL: '200ms' });
      cleanup.push(() => killHard(child));

      const login = await fetch(`${base}/api/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: LOGS_ADMIN, password: LOGS_ADMIN_PASSWORD }),
      });
      const admin = { authorization: `Bearer ${((await login.json()) as { token: { access_token: string } }).token.access_token}` };
      const created = await fetch(`${base}/api/tenants`, {
        method: 'POST',
        headers: { ...admin, 'content-type': 'application/json' },
        body: JSON.stringify({ name: uniqueName('swept'), retention_days: 7 }),
      });
      assert.equal(created.status, 201, await created.clone().text());
      const tenant = ((await created.json()) as { id: string }).id;

      const lines: Record<string, unknown>[] = [];
      collectLogLines(child, lines);
      const day = 86_400_000;
      // Three entries in one hour 40 days ago (one partition on PostgreSQL: one sweep removes all
      // three or none of them), and one of today.
      const old = Math.floor((Date.now() - 40 * day) / 3_600_000) * 3_600_000;
      const docs = [
        ...[1, 2, 3].map((second) => ({ '@timestamp': new Date(old + second * 1000).toISOString(), message: 'old' })),
        { '@timestamp': new Date().toISOString(), message: 'today' },
      ];
      const bulk = await fetch(`${base}/api/v1/_elastic/_bulk`, {
        method: 'POST',
        headers: { ...admin, 'x-tenant-id': tenant, 'content-type': 'application/x-ndjson' },
        body: docs.map((doc) => `{"index":{}}\n${JSON.stringify(doc)}\n`).join(''),
      });
      assert.equal(((await bulk.json()) as { errors: boolean }).errors, false);

      // The sweep runs on its own timer (LOGS_RETENTION_INTERVAL): its counter, then its line.
      await eventually(async () =>
        assert.equal(sample(await (await fetch(`${base}/metrics`)).text(), 'logs_retention_removed_total', { tenant }), 3),
      );
      const removedHere = (line: Record<string, unknown>) =>
        line.msg === 'retention sweep done' && ((line.removed as Record<string, number>)[tenant] ?? 0) > 0;
      const line = await eventually(async () => {
        const found = lines.filter(removedHere);
        assert.equal(found.length, 1, 'one line of the sweep that removed them');
        return found[0]!;
      });
      assert.equal((line.removed as Record<string, number>)[tenant], 3);
      assert.equal(line.level, 30, 'info');
      assert.ok(typeof line.total === 'number' && line.total >= 3);
      assert.ok(typeof line.ms === 'number');

      const kept = await fetch(`${base}/api/v1/logs/list/paginate`, {
        method: 'POST',
        headers: { ...admin, 'x-tenant-id': tenant, 'content-type': 'application/json' },
        body: JSON.stringify({
          timeRange: { from: new Date(Date.now() - 60 * day).toISOString(), to: new Date(Date.now() + day).toISOString() },
        }),
      });
      assert.deepEqual(
        ((await kept.json()) as { data: { message: string }[] }).data.map((entry) => entry.message),
        ['today'],
      );
    });
  });
}

/** `a_{b,c}_d` -> a_b_d, a_c_d (docs/metrics.md writes families of series so). */
function expand(name: string): string[] {
  const match = /\{([^}]*)\}/.exec(name);
  if (!match) return [name];
  return match[1]!.split(',').flatMap((part) => expand(name.replace(match[0], part)));
}

/** The series docs/metrics.md names: the process and runtime ones of both services, and each service's table with its types. */
function documentedSeries() {
  const text = readFileSync('docs/metrics.md', 'utf8');
  const section = (title: string) => text.split(/^## /m).find((part) => part.startsWith(title))!;
  const table = (title: string) =>
    new Map([...section(title).matchAll(/^\| `([a-z0-9_]+)` \| (counter|gauge|histogram) \|/gm)].map((row) => [row[1]!, row[2]!] as const));
  const runtime = [...section('Both services').matchAll(/`((?:process|nodejs)_[a-z0-9_{},]+)`/g)].flatMap((match) => expand(match[1]!));
  return { runtime, gateway: table('Gateway'), logs: table('Logs service') };
}

/** Every series a /metrics answer declares, with its type. */
function exposedSeries(text: string): Map<string, string> {
  return new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((match) => [match[1]!, match[2]!] as const));
}

describe('docs/metrics.md and the registries', () => {
  test('every series the docs name exists in its service, with the documented type, and every exposed series is documented', async () => {
    const documented = documentedSeries();
    assert.ok(documented.runtime.length > 20 && documented.gateway.size >= 5 && documented.logs.size >= 11, 'the docs were read');
    const logs = await startTestLogs('sqlite');
    const gateway = await startTestGateway('sqlite');
    try {
      for (const [service, own, scrape] of [
        ['logs', documented.logs, () => logs.request({ method: 'GET', url: '/metrics' })],
        ['gateway', documented.gateway, () => gateway.request({ method: 'GET', url: '/metrics' })],
      ] as const) {
        const exposed = exposedSeries((await scrape()).body);
        for (const [name, type] of own) assert.equal(exposed.get(name), type, `${service}: ${name} as docs/metrics.md says`);
        for (const name of documented.runtime) assert.ok(exposed.has(name), `${service}: ${name} (docs/metrics.md, both services)`);
        const undocumented = [...exposed.keys()].filter((name) => !own.has(name) && !documented.runtime.includes(name));
        assert.deepEqual(undocumented, [], `${service}: series missing from docs/metrics.md`);
      }
    } finally {
      await logs.close();
      await gateway.close();
    }
  });
});
