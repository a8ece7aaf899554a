import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../../helpers/databases.js';
import { LOGS_ADMIN, LOGS_ADMIN_PASSWORD, uniqueName } from '../../helpers/logs.js';
import { killHard, startLogsProcess } from '../../helpers/logs-process.js';
import { closedPort } from '../../helpers/upstream.js';

/**
 * Durability of OTLP traces and metrics: a batch acknowledged by /v1/traces or /v1/metrics survives
 * the process being killed (SIGKILL, no shutdown) right after the acknowledgement. Real CLI, real store.
 */

for (const dialect of DIALECTS) {
  describe(`OTLP traces and metrics durability [${dialect}]`, () => {
    const cleanup: (() => Promise<void>)[] = [];
    after(async () => {
      for (const step of cleanup.reverse()) await step();
    });

    test('acknowledged spans and metric points are found after the process is killed and restarted', async () => {
      const database: TestDatabase = await createTestDatabase(dialect);
      cleanup.push(() => database.drop());
      const port = await closedPort();
      const base = `http://127.0.0.1:${port}`;
      const basic = {
        authorization: `Basic ${Buffer.from(`${LOGS_ADMIN}:${LOGS_ADMIN_PASSWORD}`).toString('base64')}`,
        'content-type': 'application/json',
      };
      const host = uniqueName('durable-').toLowerCase();
      const traceId = 'e'.repeat(32);
      const now = Date.now();
      const ns = (ms: number) => `${BigInt(ms) * 1_000_000n}`;

      const first = await startLogsProcess(database.url, port);
      cleanup.push(() => killHard(first));
      const spans = Array.from({ length: 200 }, (_, i) => ({
        traceId,
        spanId: (i + 1).toString(16).padStart(16, '0'),
        name: `op ${i}`,
        startTimeUnixNano: ns(now - 1000),
        endTimeUnixNano: ns(now),
      }));
      const traces = await fetch(`${base}/v1/traces`, {
        method: 'POST',
        headers: basic,
        body: JSON.stringify({
          resourceSpans: [
            { resource: { attributes: [{ key: 'service.name', value: { stringValue: 'durable' } }] }, scopeSpans: [{ spans }] },
          ],
        }),
      });
      assert.equal(traces.status, 200);
      const metrics = await fetch(`${base}/v1/metrics`, {
        method: 'POST',
        headers: basic,
        body: JSON.stringify({
          resourceMetrics: [
            {
              resource: { attributes: [{ key: 'host.name', value: { stringValue: host } }] },
              scopeMetrics: [
                { metrics: [{ name: 'system.cpu.load_average.1m', gauge: { dataPoints: [{ timeUnixNano: ns(now), asDouble: 4.5 }] } }] },
              ],
            },
          ],
        }),
      });
      assert.equal(metrics.status, 200);
      await killHard(first);

      const second = await startLogsProcess(database.url, port);
      cleanup.push(() => killHard(second));
      const login = await fetch(`${base}/api/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: LOGS_ADMIN, password: LOGS_ADMIN_PASSWORD }),
      });
      const { token } = (await login.json()) as { token: { access_token: string } };
      const auth = { authorization: `Bearer ${token.access_token}` };
      const trace = await fetch(`${base}/api/v1/apm/traces/${traceId}`, { headers: auth });
      assert.equal(trace.status, 200);
      assert.equal(((await trace.json()) as { spans: unknown[] }).spans.length, 200);
      const range = `from=${new Date(now - 60_000).toISOString()}&to=${new Date(now + 60_000).toISOString()}`;
      const infra = await fetch(`${base}/api/v1/infra/metrics?${range}&host=${host}`, { headers: auth });
      assert.equal(infra.status, 200);
      assert.equal(((await infra.json()) as { hosts: { latest: { load1m: number } }[] }).hosts[0]!.latest.load1m, 4.5);
    });
  });
}
