import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DIALECTS } from '../../helpers/databases.js';
import { startTestLogs, uniqueName, type TestLogs } from '../../helpers/logs.js';

/**
 * Levels as users count them (docs/logs-api.md "Levels"): syslog's names and numbers, sent by
 * rsyslog, are counted by the overview dashboard and by alert rules as the level they normalise to;
 * a level that is no known one is kept as sent and counted as no error.
 */

const MINUTE = 60_000;
const ndjson = (docs: object[]) => `${docs.map((doc) => `{"index":{}}\n${JSON.stringify(doc)}`).join('\n')}\n`;

for (const dialect of DIALECTS) {
  describe(`levels in dashboards and alerts [${dialect}]`, () => {
    let logs: TestLogs;
    before(async () => {
      logs = await startTestLogs(dialect, { LOGS_ALERTS_EVAL_INTERVAL: '0' });
    });
    after(async () => logs.close());

    /** A fresh tenant; the administrator's headers acting in it. */
    async function tenant(): Promise<Record<string, string>> {
      const admin = await logs.admin();
      const created = await logs.request({ method: 'POST', url: '/api/tenants', headers: admin, payload: { name: uniqueName('levels') } });
      assert.equal(created.statusCode, 201, created.body);
      return { ...admin, 'x-tenant-id': created.json().id as string };
    }

    /** rsyslog-shaped documents (omelasticsearch's default template) sent `minutesAgo` each. */
    async function ship(headers: Record<string, string>, priorities: string[]) {
      const docs = priorities.map((priority, i) => ({
        message: `line ${i} sent as ${priority}`,
        fromhost: 'web-1',
        programname: 'app',
        priority,
        timereported: new Date(logs.clock.ms - (i + 1) * MINUTE).toISOString(),
      }));
      const response = await logs.request({ method: 'POST', url: '/api/v1/_elastic/_bulk', headers, payload: ndjson(docs) });
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.json().errors, false, response.body);
    }

    async function overview(headers: Record<string, string>) {
      const response = await logs.request({ method: 'GET', url: '/api/v1/dashboard/overview', headers });
      assert.equal(response.statusCode, 200, response.body);
      return response.json() as {
        volume: { total: number };
        errors: { total: number; by_level: Record<string, number> };
        top_errors: { message: string }[];
      };
    }

    /** How many entries an alert rule of the tenant counts over the last hour. */
    async function ruleCount(headers: Record<string, string>, match: { query?: string; filters?: object[] }): Promise<number> {
      const rule = await logs.request({
        method: 'POST',
        url: '/api/v1/alerts/rules',
        headers,
        payload: { name: uniqueName('rule'), window: '1h', condition: { type: 'above', threshold: 0 }, severity: 'high', ...match },
      });
      assert.equal(rule.statusCode, 201, rule.body);
      const result = await logs.alerts.evaluateRule(rule.json().id as string);
      assert.equal(result.evaluated, true);
      return result.count!;
    }

    test('err, crit, warning and syslog numbers are counted by the dashboard and by alerts as the level they normalise to', async () => {
      const headers = await tenant();
      // error: err, ERR, 3; fatal: crit, 2, emerg; warn: warning, 4; info: notice, 6.
      await ship(headers, ['err', 'ERR', '3', 'crit', '2', 'emerg', 'warning', '4', 'notice', '6']);

      const body = await overview(headers);
      assert.equal(body.volume.total, 10);
      assert.equal(body.errors.total, 6);
      assert.deepEqual(body.errors.by_level, { error: 3, fatal: 3 });
      assert.deepEqual(body.top_errors.map((error) => error.message).sort(), [
        'line 0 sent as err',
        'line 1 sent as ERR',
        'line 2 sent as 3',
        'line 3 sent as crit',
        'line 4 sent as 2',
        'line 5 sent as emerg',
      ]);

      // A rule may name a level in any spelling the ingestion knows, in its query or its filters.
      assert.equal(await ruleCount(headers, { query: 'level:error' }), 3);
      assert.equal(await ruleCount(headers, { query: 'level:err' }), 3);
      assert.equal(await ruleCount(headers, { query: 'level:3' }), 3);
      assert.equal(await ruleCount(headers, { filters: [{ field: 'level', value: 'crit' }] }), 3);
      assert.equal(await ruleCount(headers, { query: 'level:warning' }), 2);
      assert.equal(await ruleCount(headers, { query: 'level:err OR level:crit' }), 6);
      assert.equal(await ruleCount(headers, { query: 'level:notice' }), 2);
    });

    test('an unknown level is kept as sent (lower-cased): found by its name, counted as no error; a known severity number decides', async () => {
      const headers = await tenant();
      await ship(headers, ['Chatty', 'err']);
      // OTLP: a severity number decides the level and keeps the unknown text; a text alone is kept.
      const otlp = await logs.request({
        method: 'POST',
        url: '/v1/logs',
        headers,
        payload: {
          resourceLogs: [
            {
              scopeLogs: [
                {
                  logRecords: [
                    {
                      timeUnixNano: `${(logs.clock.ms - MINUTE) * 1e6}`,
                      severityNumber: 17,
                      severityText: 'chatty',
                      body: { stringValue: 'numbered' },
                    },
                    { timeUnixNano: `${(logs.clock.ms - MINUTE) * 1e6}`, severityText: 'chatty', body: { stringValue: 'text only' } },
                  ],
                },
              ],
            },
          ],
        },
      });
      assert.equal(otlp.statusCode, 200, otlp.body);

      const found = await logs.request({
        method: 'POST',
        url: '/api/v1/logs/list/paginate',
        headers,
        payload: { query: 'level:chatty', limit: 10, sort: { field: 'message', order: 'asc' } },
      });
      assert.equal(found.statusCode, 200, found.body);
      const entries = found.json().data as { message: string; level: string; attributes: Record<string, unknown> }[];
      assert.deepEqual(
        entries.map((entry) => [entry.message, entry.level, entry.attributes.severity_text]),
        [
          ['line 0 sent as Chatty', 'chatty', undefined],
          ['text only', 'chatty', undefined],
        ],
      );
      const numbered = await logs.request({
        method: 'POST',
        url: '/api/v1/logs/list/paginate',
        headers,
        payload: { query: 'numbered', limit: 10 },
      });
      const [entry] = numbered.json().data as { level: string; attributes: Record<string, unknown> }[];
      assert.deepEqual([entry!.level, entry!.attributes.severity_text], ['error', 'chatty']);

      const levels = await logs.request({ method: 'GET', url: '/api/v1/logs/fields/level/distinct', headers });
      assert.deepEqual((levels.json().values as { value: string; count: number }[]).map(({ value, count }) => [value, count]).sort(), [
        ['chatty', 2],
        ['error', 2],
      ]);
      const body = await overview(headers);
      assert.deepEqual([body.volume.total, body.errors.total], [4, 2], 'the error is counted, chatty is not');
      assert.equal(await ruleCount(headers, { query: 'level:chatty' }), 2);
    });
  });
}
