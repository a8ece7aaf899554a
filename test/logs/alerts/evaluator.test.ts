import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { buildLogsService } from '../../../src/logs/app.js';
import { loadLogsConfig } from '../../../src/logs/config.js';
import { webhookUrlProblem } from '../../../src/logs/modules/alerts/alerts.notifier.js';
import { createTestDatabase, describeOnPostgres, DIALECTS } from '../../helpers/databases.js';
import { TestClock } from '../../helpers/clock.js';
import { eventually } from '../../helpers/eventually.js';
import { LOGS_ADMIN_PASSWORD, startTestLogs, uniqueName, type TestLogs } from '../../helpers/logs.js';
import { startWebhookReceiver } from '../../helpers/webhook-receiver.js';
import { sql } from 'kysely';

/**
 * The alert evaluator against the real log store: logs ingested through the Elasticsearch bulk API,
 * the injected clock moved by hand, webhooks delivered to a real HTTP receiver on 127.0.0.1.
 */
const ENV = {
  LOGS_ALERTS_EVAL_INTERVAL: '0',
  LOGS_WEBHOOK_BACKOFF: '10ms',
  LOGS_WEBHOOK_ATTEMPTS: '3',
  LOGS_WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
};
const SECRET = 'webhook-signing-secret-0123456789';
const SECOND = 1000;
const MINUTE = 60_000;
const iso = (ms: number) => new Date(ms).toISOString();

function ndjson(docs: object[]): string {
  return `${docs.map((doc) => `{"index":{}}\n${JSON.stringify(doc)}`).join('\n')}\n`;
}

for (const dialect of DIALECTS) {
  describe(`alert evaluation [${dialect}]`, () => {
    let logs: TestLogs;
    let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
    before(async () => {
      logs = await startTestLogs(dialect, ENV);
      receiver = await startWebhookReceiver();
    });
    after(async () => {
      await receiver.close();
      await logs.close();
    });

    const api = async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object, extra: Record<string, string> = {}) =>
      logs.request({
        method,
        url: `/api/v1/alerts${url}`,
        headers: { ...(await logs.admin()), ...extra },
        ...(payload ? { payload } : {}),
      });

    async function ingest(docs: object[], extra: Record<string, string> = {}) {
      const response = await logs.request({
        method: 'POST',
        url: '/api/v1/_elastic/_bulk',
        headers: { ...(await logs.admin()), ...extra },
        payload: ndjson(docs),
      });
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.json().errors, false, response.body);
    }

    async function createRule(payload: object, extra: Record<string, string> = {}) {
      const response = await api('POST', '/rules', { name: uniqueName('rule'), severity: 'high', ...payload }, extra);
      assert.equal(response.statusCode, 201, response.body);
      return response.json() as { id: string; name: string };
    }

    const alertOf = async (id: string) => (await api('GET', `/${id}`)).json();

    test('real ingested logs open an alert that resolves by itself as the clock moves; signed webhooks on firing and resolve', async () => {
      const now = logs.clock.ms;
      const other = (
        await logs.request({ method: 'POST', url: '/api/tenants', headers: await logs.admin(), payload: { name: uniqueName('noisy') } })
      ).json().id;
      await ingest([
        ...[50, 40, 30].map((s) => ({
          '@timestamp': iso(now - s * SECOND),
          message: `payment failed for order ${s}`,
          level: 'error',
          service: 'checkout',
        })),
        { '@timestamp': iso(now - 20 * SECOND), message: 'payment failed for order 20', level: 'error', service: 'billing' },
        ...[45, 35, 25, 15, 5].map((s) => ({
          '@timestamp': iso(now - s * SECOND),
          message: `payment ok for order ${s}`,
          level: 'info',
          service: 'checkout',
        })),
        { '@timestamp': iso(now - 10 * MINUTE), message: 'payment failed long ago', level: 'error', service: 'checkout' },
      ]);
      // Another tenant's matching logs never count.
      await ingest(
        Array.from({ length: 5 }, (_, i) => ({
          '@timestamp': iso(now - (i + 1) * SECOND),
          message: 'payment failed elsewhere',
          service: 'checkout',
        })),
        { 'x-tenant-id': other },
      );

      const rule = await createRule({
        query: 'payment AND failed',
        filters: [{ field: 'service', value: 'checkout' }],
        window: '5m',
        condition: { type: 'above', threshold: 2 },
        interval: '1m',
        severity: 'critical',
        labels: { team: 'payments' },
        webhook: { url: receiver.url, secret: SECRET },
      });
      const results = await logs.alerts.evaluateDue();
      const result = results.find((r) => r.ruleId === rule.id)!;
      assert.equal(result.count, 3, 'three checkout payment failures in the last 5 minutes, this tenant only');
      assert.equal(result.holds, true);
      assert.ok(result.opened, 'an alert opened');
      const alertId = result.opened;

      const active = (await api('GET', '/active')).json().data;
      const firing = active.find((a: { id: string }) => a.id === alertId);
      assert.equal(firing.state, 'firing');
      assert.equal(firing.severity, 'critical');
      assert.equal(firing.last_count, 3);
      assert.deepEqual(firing.labels, { team: 'payments' });
      assert.equal(firing.rule_name, rule.name);
      assert.equal((await logs.alerts.activeCountsBySeverity('default')).critical, 1);
      assert.equal((await logs.alerts.activeCountsBySeverity(other)).critical, 0);

      await receiver.waitFor(1);
      await logs.alertNotifier.idle();
      const fired = receiver.received[0]!;
      assert.equal(fired.headers['content-type'], 'application/json');
      assert.equal(fired.headers['x-gerbang-event'], 'firing');
      const timestamp = fired.headers['x-gerbang-timestamp'] as string;
      const expected = `sha256=${createHmac('sha256', SECRET).update(`${timestamp}.${fired.body}`).digest('hex')}`;
      assert.equal(fired.headers['x-gerbang-signature'], expected, 'HMAC-SHA256 of timestamp.body with the rule secret');
      assert.notEqual(
        fired.headers['x-gerbang-signature'],
        `sha256=${createHmac('sha256', 'another-secret-entirely').update(`${timestamp}.${fired.body}`).digest('hex')}`,
      );
      assert.equal(fired.json.event, 'alert.firing');
      assert.equal(fired.json.state, 'firing');
      assert.deepEqual(fired.json.tenant, { id: 'default' });
      assert.equal(fired.json.alert.id, alertId);
      assert.equal(fired.json.alert.last_count, 3);
      assert.equal(fired.json.rule.id, rule.id);
      assert.equal(fired.json.rule.query, 'payment AND failed');
      assert.deepEqual(fired.json.rule.condition, { type: 'above', threshold: 2 });
      assert.equal(fired.json.timestamps.started_at, iso(now));
      assert.match(fired.json.summary, /CRITICAL.*firing: 3 matching logs in the last 5m/);
      assert.ok(!fired.body.includes(SECRET) && !/https?:\/\//.test(fired.json.summary), 'no secret, no link');
      assert.deepEqual((await alertOf(alertId)).webhook, {
        event: 'firing',
        status: 'delivered',
        attempts: 1,
        last_error: null,
        last_at: iso(now),
      });

      // A minute on the rule is due again; the logs are still in the window: same alert, no new webhook.
      logs.clock.advance(MINUTE);
      const again = (await logs.alerts.evaluateDue()).find((r) => r.ruleId === rule.id)!;
      assert.equal(again.holds, true);
      assert.equal(again.opened, undefined);
      assert.equal((await api('GET', `/list?rule_id=${rule.id}`)).json().total, 1);

      // Not due yet: nothing happens before the interval has passed.
      logs.clock.advance(30 * SECOND);
      assert.equal(
        (await logs.alerts.evaluateDue()).find((r) => r.ruleId === rule.id),
        undefined,
      );

      // Five minutes on, the failures have left the window: the alert resolves by itself.
      logs.clock.advance(5 * MINUTE);
      const later = (await logs.alerts.evaluateDue()).find((r) => r.ruleId === rule.id)!;
      assert.equal(later.count, 0);
      assert.equal(later.resolved, alertId);
      const resolved = await alertOf(alertId);
      assert.equal(resolved.state, 'resolved');
      assert.equal(resolved.resolved_by, 'system');
      assert.equal(resolved.resolved_at, iso(logs.clock.ms));
      assert.deepEqual(
        resolved.history.map((h: { from: string | null; to: string; actor: string }) => [h.from, h.to, h.actor]),
        [
          [null, 'firing', 'system'],
          ['firing', 'resolved', 'system'],
        ],
      );
      assert.deepEqual(
        (await api('GET', '/active')).json().data.filter((a: { rule_id: string }) => a.rule_id === rule.id),
        [],
      );

      await receiver.waitFor(2);
      await logs.alertNotifier.idle();
      const resolvedHook = receiver.received[1]!;
      assert.equal(resolvedHook.headers['x-gerbang-event'], 'resolved');
      assert.equal(resolvedHook.json.event, 'alert.resolved');
      assert.equal(resolvedHook.json.alert.id, alertId);
      assert.equal(resolvedHook.json.alert.resolved_by, 'system');
      assert.equal(resolvedHook.json.timestamps.resolved_at, iso(logs.clock.ms));
      const signature = `sha256=${createHmac('sha256', SECRET).update(`${resolvedHook.headers['x-gerbang-timestamp']}.${resolvedHook.body}`).digest('hex')}`;
      assert.equal(resolvedHook.headers['x-gerbang-signature'], signature);
      assert.equal((await alertOf(alertId)).webhook.status, 'delivered');

      const audit = (
        await logs.request({ method: 'GET', url: `/api/v1/log-audit/search?action=alert.status&actor=system`, headers: await logs.admin() })
      ).json();
      const trail = audit.data
        .filter((row: { target_id: string }) => row.target_id === alertId)
        .map((row: { details: { from: string | null; to: string } }) => [row.details.from, row.details.to]);
      assert.deepEqual(
        trail,
        [
          ['firing', 'resolved'],
          [null, 'firing'],
        ],
        "the system's changes are in the audit trail, newest first",
      );

      const state = (await api('GET', `/rules/${rule.id}`)).json();
      assert.equal(state.last_count, 0);
      assert.equal(state.last_evaluated_at, iso(logs.clock.ms));
      assert.equal(state.next_evaluation_at, iso(logs.clock.ms + MINUTE));
    });

    test('below and absent conditions', async () => {
      const now = logs.clock.ms;
      const service = uniqueName('heartbeat');
      await ingest([
        { '@timestamp': iso(now - 10 * SECOND), message: 'still alive', service },
        { '@timestamp': iso(now - 20 * SECOND), message: 'still alive', service },
      ]);
      const absent = await createRule({ filters: [{ field: 'service', value: service }], window: '1m', condition: { type: 'absent' } });
      const below = await createRule({
        query: 'alive',
        filters: [{ field: 'service', value: service }],
        window: '1m',
        condition: { type: 'below', threshold: 3 },
      });
      const quiet = await logs.alerts.evaluateRule(absent.id);
      assert.deepEqual([quiet.count, quiet.holds, quiet.opened], [2, false, undefined], 'logs are there: absent does not hold');
      const few = await logs.alerts.evaluateRule(below.id);
      assert.deepEqual([few.count, few.holds, typeof few.opened], [2, true, 'string'], '2 < 3: below holds');

      logs.clock.advance(2 * MINUTE);
      const silent = await logs.alerts.evaluateRule(absent.id);
      assert.deepEqual([silent.count, silent.holds, typeof silent.opened], [0, true, 'string'], 'no log at all for a minute: absent holds');
      await ingest([{ '@timestamp': iso(logs.clock.ms - SECOND), message: 'back again', service }]);
      assert.equal((await logs.alerts.evaluateRule(absent.id)).resolved, silent.opened, 'a log arrives: the absence alert resolves');
    });

    test('webhook failures are retried with backoff; the outcome is on the alert', async () => {
      const flaky = await startWebhookReceiver();
      const broken = await startWebhookReceiver();
      const gone = await startWebhookReceiver();
      const goneUrl = gone.url;
      await gone.close();
      try {
        flaky.state.respond = (index) => (index < 2 ? 500 : 204);
        broken.state.respond = () => 503;
        const ruleFlaky = await createRule({ query: 'zzzflaky', window: '1m', condition: { type: 'absent' }, webhook: { url: flaky.url } });
        const ruleBroken = await createRule({
          query: 'zzzbroken',
          window: '1m',
          condition: { type: 'absent' },
          webhook: { url: broken.url },
        });
        const ruleGone = await createRule({ query: 'zzzgone', window: '1m', condition: { type: 'absent' }, webhook: { url: goneUrl } });
        const a = (await logs.alerts.evaluateRule(ruleFlaky.id)).opened!;
        const b = (await logs.alerts.evaluateRule(ruleBroken.id)).opened!;
        const c = (await logs.alerts.evaluateRule(ruleGone.id)).opened!;
        await logs.alertNotifier.idle();

        assert.equal(flaky.received.length, 3, 'two failures, then delivered on the third attempt');
        assert.deepEqual(
          flaky.received.map((r) => r.json.alert.id),
          [a, a, a],
        );
        const delivered = (await alertOf(a)).webhook;
        assert.deepEqual([delivered.status, delivered.attempts, delivered.last_error], ['delivered', 3, null]);

        assert.equal(broken.received.length, 3, 'LOGS_WEBHOOK_ATTEMPTS attempts, then it gives up');
        const failed = (await alertOf(b)).webhook;
        assert.deepEqual([failed.status, failed.attempts, failed.last_error], ['failed', 3, 'failed']);

        const refused = (await alertOf(c)).webhook;
        assert.equal(refused.status, 'failed');
        // A refused connection reads exactly like an HTTP 503: users cannot port-scan through webhooks.
        assert.equal(refused.last_error, 'failed');
        // The alerts themselves are unaffected by the failed notifications.
        assert.deepEqual([(await alertOf(b)).state, (await alertOf(c)).state], ['firing', 'firing']);
      } finally {
        await flaky.close();
        await broken.close();
      }
    });

    test('a slow webhook receiver never blocks evaluation', async () => {
      const slow = await startWebhookReceiver();
      slow.state.hold = true;
      try {
        const rule = await createRule({ query: 'zzzslow', window: '1m', condition: { type: 'absent' }, webhook: { url: slow.url } });
        const result = await logs.alerts.evaluateRule(rule.id);
        assert.ok(result.opened, 'the evaluation finished with the alert open');
        await slow.waitFor(1);
        assert.equal((await alertOf(result.opened)).webhook.status, 'pending', 'the receiver has not answered yet');
        const other = await createRule({ query: 'zzzother', window: '1m', condition: { type: 'absent' } });
        assert.ok((await logs.alerts.evaluateRule(other.id)).opened, 'other rules evaluate meanwhile');
        slow.release(200);
        await logs.alertNotifier.idle();
        assert.equal((await alertOf(result.opened)).webhook.status, 'delivered');
      } finally {
        await slow.close();
      }
    });

    test('a notification a stopped service left unfinished is sent by the next service on the database', async () => {
      const hook = await startWebhookReceiver();
      hook.state.hold = true; // the first service's attempt never gets an answer
      // A database of their own: on PostgreSQL the service that leads sends the webhooks (not the suite's).
      const database = await createTestDatabase(dialect);
      const config = loadLogsConfig({
        LOGS_DATABASE_URL: database.url,
        LOGS_ADMIN_PASSWORD,
        LOGS_MFA_REQUIRED_PERMISSIONS: 'none',
        LOG_LEVEL: 'silent',
        LOGS_RETENTION_INTERVAL: '0',
        ...ENV,
      });
      const first = await buildLogsService({ config, now: logs.clock.now });
      let next: Awaited<ReturnType<typeof buildLogsService>> | undefined;
      const asAdmin = async (service: { app: typeof first.app }) => {
        const login = await service.app.inject({
          method: 'POST',
          url: '/api/login',
          payload: { username: 'admin', password: LOGS_ADMIN_PASSWORD },
        });
        return { authorization: `Bearer ${login.json().token.access_token}` };
      };
      try {
        const created = await first.app.inject({
          method: 'POST',
          url: '/api/v1/alerts/rules',
          headers: await asAdmin(first),
          payload: {
            name: uniqueName('rule'),
            severity: 'high',
            query: 'zzzresume',
            window: '1m',
            condition: { type: 'absent' },
            webhook: { url: hook.url, secret: SECRET },
          },
        });
        assert.equal(created.statusCode, 201, created.body);
        const opened = (await first.alerts.evaluateRule(created.json().id)).opened!;
        await eventually(async () => assert.equal(hook.received.length, 1));
        await first.app.close(); // stops with the notification in flight

        hook.state.hold = false;
        next = await buildLogsService({ config, now: logs.clock.now });
        const headers = await asAdmin(next);
        const alertOf = async (id: string) => (await next!.app.inject({ method: 'GET', url: `/api/v1/alerts/${id}`, headers })).json();
        await eventually(async () => assert.equal(hook.received.length, 2, 'sent again by the next service'));
        await eventually(async () => assert.equal((await alertOf(opened)).webhook.status, 'delivered'));
        const resent = hook.received[1]!;
        assert.equal(resent.json.alert.id, opened);
        assert.equal(resent.json.event, 'alert.firing');
        const signature = `sha256=${createHmac('sha256', SECRET).update(`${resent.headers['x-gerbang-timestamp']}.${resent.body}`).digest('hex')}`;
        assert.equal(resent.headers['x-gerbang-signature'], signature, 'signed like the first attempt');
      } finally {
        await first.app.close();
        await next?.app.close();
        await hook.close();
        await database.drop();
      }
    });

    test('a restart keeps the schedule and the open alert: a second service on the same database opens no duplicate', async () => {
      const rule = await createRule({ query: 'zzzrestart', window: '1m', interval: '1m', condition: { type: 'absent' } });
      const first = await logs.alerts.evaluateRule(rule.id);
      assert.ok(first.opened, 'opened by the first service');

      const config = loadLogsConfig({
        LOGS_DATABASE_URL: logs.url,
        LOGS_ADMIN_PASSWORD,
        LOGS_MFA_REQUIRED_PERMISSIONS: 'none',
        LOG_LEVEL: 'silent',
        LOGS_RETENTION_INTERVAL: '0',
        ...ENV,
      });
      const second = await buildLogsService({ config, now: logs.clock.now });
      try {
        assert.equal(
          (await second.alerts.evaluateDue()).find((r) => r.ruleId === rule.id),
          undefined,
          'the schedule survived: not due yet',
        );
        const again = await second.alerts.evaluateRule(rule.id);
        assert.deepEqual([again.evaluated, again.holds, again.opened], [true, true, undefined], 'the open alert is found, none is added');

        logs.clock.advance(2 * MINUTE);
        await Promise.all([logs.alerts.evaluateDue(), second.alerts.evaluateDue()]);
        const list = (await api('GET', `/list?rule_id=${rule.id}`)).json();
        assert.equal(list.total, 1, 'one alert for the rule across both services');

        // Both services evaluating a fresh rule at the same moment: one alert.
        const race = await createRule({ query: 'zzzrace', window: '1m', condition: { type: 'absent' } });
        const outcomes = await Promise.all([logs.alerts.evaluateRule(race.id), second.alerts.evaluateRule(race.id)]);
        assert.equal(outcomes.filter((o) => o.opened).length, 1, JSON.stringify(outcomes));
        assert.equal((await api('GET', `/list?rule_id=${race.id}`)).json().total, 1);
        assert.deepEqual(await second.alerts.activeCountsBySeverity('default'), await logs.alerts.activeCountsBySeverity('default'));
      } finally {
        await second.app.close();
      }
    });
  });
}

for (const dialect of DIALECTS) {
  describe(`alert evaluation in the background [${dialect}]`, () => {
    test("the app's loop evaluates due rules by itself (LOGS_ALERTS_EVAL_INTERVAL) and stops on close", async () => {
      const receiver = await startWebhookReceiver();
      const logs = await startTestLogs(dialect, { ...ENV, LOGS_ALERTS_EVAL_INTERVAL: '50ms' });
      try {
        const created = await logs.request({
          method: 'POST',
          url: '/api/v1/alerts/rules',
          headers: await logs.admin(),
          payload: {
            name: 'nothing logged',
            query: 'zzzbackground',
            window: '1m',
            condition: { type: 'absent' },
            severity: 'info',
            webhook: { url: receiver.url },
          },
        });
        assert.equal(created.statusCode, 201, created.body);
        // No evaluate call: the loop finds the new rule due and the receiver hears of the alert.
        await receiver.waitFor(1);
        assert.equal(receiver.received[0]!.json.event, 'alert.firing');
        assert.equal(receiver.received[0]!.json.rule.id, created.json().id);
      } finally {
        await logs.close();
        await receiver.close();
      }
    });
  });
}

describeOnPostgres('alert webhooks with two services on one database', () => {
  test(
    'the leader delivers: a notification recorded by the service that does not lead is sent once, by the leader',
    { timeout: 60_000 },
    async () => {
      const hook = await startWebhookReceiver();
      const database = await createTestDatabase('postgres');
      const clock = new TestClock();
      const config = loadLogsConfig({
        LOGS_DATABASE_URL: database.url,
        LOGS_ADMIN_PASSWORD,
        LOGS_MFA_REQUIRED_PERMISSIONS: 'none',
        LOG_LEVEL: 'silent',
        LOGS_RETENTION_INTERVAL: '0',
        ...ENV,
        LOGS_ALERTS_EVAL_INTERVAL: '100ms',
      });
      const leader = await buildLogsService({ config, now: clock.now });
      const other = await buildLogsService({ config, now: clock.now });
      try {
        assert.deepEqual([leader.leading(), other.leading()], [true, false]);
        const login = await other.app.inject({
          method: 'POST',
          url: '/api/login',
          payload: { username: 'admin', password: LOGS_ADMIN_PASSWORD },
        });
        const headers = { authorization: `Bearer ${login.json().token.access_token}` };
        const created = await other.app.inject({
          method: 'POST',
          url: '/api/v1/alerts/rules',
          headers,
          payload: {
            name: 'quiet',
            severity: 'high',
            query: 'zzzleader',
            window: '1m',
            condition: { type: 'absent' },
            webhook: { url: hook.url },
          },
        });
        assert.equal(created.statusCode, 201, created.body);
        // The leader's loop evaluates the rule and sends the firing notification.
        await hook.waitFor(1);
        const alertId = hook.received[0]!.json.alert.id as string;
        // A user resolves the alert through the service that does not lead, which then stops: it only
        // recorded the notification, and the leader sends it.
        hook.state.hold = true;
        const resolved = await other.app.inject({
          method: 'POST',
          url: `/api/v1/alerts/${alertId}/status`,
          headers,
          payload: { status: 'resolved' },
        });
        assert.equal(resolved.statusCode, 200, resolved.body);
        await other.app.close();
        hook.state.hold = false;
        hook.release(200);
        await hook.waitFor(2);
        hook.release(200);
        const alertOf = async () => (await leader.app.inject({ method: 'GET', url: `/api/v1/alerts/${alertId}`, headers })).json();
        await eventually(async () =>
          assert.deepEqual([(await alertOf()).webhook.event, (await alertOf()).webhook.status], ['resolved', 'delivered']),
        );
        await leader.alertNotifier.idle();
        assert.deepEqual(
          hook.received.map((received) => received.json.event),
          ['alert.firing', 'alert.resolved'],
          'one delivery of each',
        );
      } finally {
        await other.app.close();
        await leader.app.close();
        await hook.close();
        await database.drop();
      }
    },
  );
});

for (const dialect of DIALECTS) {
  describe(`alert webhook timeout [${dialect}]`, () => {
    test('a receiver that never answers is abandoned after LOGS_WEBHOOK_TIMEOUT and retried', async () => {
      const receiver = await startWebhookReceiver();
      receiver.state.hold = true;
      const logs = await startTestLogs(dialect, { ...ENV, LOGS_WEBHOOK_TIMEOUT: '100ms', LOGS_WEBHOOK_ATTEMPTS: '2' });
      try {
        const created = await logs.request({
          method: 'POST',
          url: '/api/v1/alerts/rules',
          headers: await logs.admin(),
          payload: {
            name: 'hung receiver',
            query: 'zzztimeout',
            window: '1m',
            condition: { type: 'absent' },
            severity: 'low',
            webhook: { url: receiver.url },
          },
        });
        const opened = (await logs.alerts.evaluateRule(created.json().id)).opened!;
        await logs.alertNotifier.idle();
        assert.equal(receiver.received.length, 2, 'both attempts reached the receiver');
        const alert = (await logs.request({ method: 'GET', url: `/api/v1/alerts/${opened}`, headers: await logs.admin() })).json();
        assert.deepEqual([alert.webhook.status, alert.webhook.attempts, alert.webhook.last_error], ['failed', 2, 'failed']);
      } finally {
        await logs.close();
        await receiver.close();
      }
    });
  });
}

for (const dialect of DIALECTS) {
  describe(`webhook SSRF guard, default allow-list [${dialect}]`, () => {
    test('internal literals and localhost are 400 when the rule is saved; a saved localhost rule is refused at delivery', async () => {
      const receiver = await startWebhookReceiver();
      const port = new URL(receiver.url).port;
      const open = await startTestLogs(dialect, { LOGS_ALERTS_EVAL_INTERVAL: '0', LOGS_WEBHOOK_ATTEMPTS: '1' });
      // A name is only trusted as far as its resolved address: listing `localhost` does not open 127.0.0.1.
      const named = await startTestLogs(dialect, {
        LOGS_ALERTS_EVAL_INTERVAL: '0',
        LOGS_WEBHOOK_ATTEMPTS: '1',
        LOGS_WEBHOOK_ALLOWED_HOSTS: 'localhost',
      });
      try {
        const rule = async (logs: TestLogs, url?: string) =>
          logs.request({
            method: 'POST',
            url: '/api/v1/alerts/rules',
            headers: await logs.admin(),
            payload: {
              name: uniqueName('ssrf'),
              severity: 'high',
              query: uniqueName('never'),
              window: '1m',
              condition: { type: 'absent' },
              ...(url === undefined ? {} : { webhook: { url } }),
            },
          });
        for (const host of [
          '127.0.0.1',
          '169.254.169.254',
          '[::ffff:169.254.169.254]',
          '2852039166',
          '10.0.0.1',
          '192.168.0.10',
          '172.16.0.1',
          '100.64.0.1',
          '[fd12::1]',
          '[::1]',
          '0.0.0.0',
          '[64:ff9b::7f00:1]',
          '[2002:a9fe:a9fe::1]',
          'localhost',
          'LOCALHOST.',
          'api.localhost',
        ]) {
          const refused = await rule(open, `http://${host}:${port}/hook`);
          assert.equal(refused.statusCode, 400, host);
          assert.match(refused.json().detail, /address; list it in LOGS_WEBHOOK_ALLOWED_HOSTS/, host);
        }
        for (const logs of [open, named]) {
          const refused = await rule(logs, `http://localhost:${port}/hook`);
          assert.equal(refused.statusCode, 400, 'listing the name localhost does not open loopback');
          // A rule saved before this check existed: delivery refuses it too.
          const saved = await rule(logs);
          assert.equal(saved.statusCode, 201, saved.body);
          await sql`UPDATE logs_alert_rules SET webhook_url = ${`http://localhost:${port}/hook`} WHERE id = ${saved.json().id}`.execute(
            logs.database.db,
          );
          const alertId = (await logs.alerts.evaluateRule(saved.json().id)).opened!;
          await logs.alertNotifier.idle();
          const alert = (await logs.request({ method: 'GET', url: `/api/v1/alerts/${alertId}`, headers: await logs.admin() })).json();
          // A policy refusal names the rule's own URL (nothing the network did is shown).
          assert.equal(alert.webhook.status, 'failed');
          assert.match(alert.webhook.last_error, /"localhost" is a loopback address/);
        }
        assert.equal(receiver.received.length, 0, 'nothing reached the loopback receiver');
      } finally {
        await open.close();
        await named.close();
        await receiver.close();
      }
    });
  });
}

test('alerts configuration: defaults and refusals', () => {
  const base = { LOGS_ADMIN_PASSWORD };
  const defaults = loadLogsConfig(base).alerts;
  assert.deepEqual(defaults, { evalIntervalMs: 15_000, webhook: { timeoutMs: 5000, attempts: 3, backoffMs: 1000, allowedHosts: [] } });
  const custom = loadLogsConfig({
    ...base,
    LOGS_ALERTS_EVAL_INTERVAL: '0',
    LOGS_WEBHOOK_TIMEOUT: '2s',
    LOGS_WEBHOOK_ATTEMPTS: '5',
    LOGS_WEBHOOK_ALLOWED_HOSTS: 'hooks.example.com, *.corp.example',
  }).alerts;
  assert.deepEqual(custom, {
    evalIntervalMs: 0,
    webhook: { timeoutMs: 2000, attempts: 5, backoffMs: 1000, allowedHosts: ['hooks.example.com', '*.corp.example'] },
  });
  assert.throws(() => loadLogsConfig({ ...base, LOGS_WEBHOOK_TIMEOUT: '10ms' }), /LOGS_WEBHOOK_TIMEOUT/);
  assert.throws(() => loadLogsConfig({ ...base, LOGS_WEBHOOK_ATTEMPTS: '0' }), /LOGS_WEBHOOK_ATTEMPTS/);
  assert.throws(() => loadLogsConfig({ ...base, LOGS_ALERTS_EVAL_INTERVAL: 'often' }), /LOGS_ALERTS_EVAL_INTERVAL/);
});

test('webhook URLs: http(s) only, no credentials, the allow-list with wildcards', () => {
  const allowed = ['127.0.0.1', '*.example.com', 'hooks.slack.com'];
  for (const url of [
    'http://127.0.0.1:8080/x',
    'https://a.example.com/hook',
    'https://deep.a.example.com/',
    'https://HOOKS.slack.com/services/x',
  ]) {
    assert.equal(webhookUrlProblem(url, allowed), undefined, url);
  }
  for (const url of [
    'https://example.com.evil.net/',
    'https://evilexample.com/',
    'http://169.254.169.254/latest/meta-data',
    'http://localhost/',
    'http://[::1]/',
  ]) {
    assert.match(webhookUrlProblem(url, allowed) ?? '', /LOGS_WEBHOOK_ALLOWED_HOSTS/, url);
  }
  for (const url of ['gopher://127.0.0.1/', 'file:///etc/passwd', 'javascript:alert(1)', 'data:text/plain,x']) {
    assert.match(webhookUrlProblem(url, []) ?? '', /http or https/, url);
  }
  assert.match(webhookUrlProblem('https://u:p@a.example.com/', allowed) ?? '', /credentials/);
  assert.equal(webhookUrlProblem('https://hooks.example.net/x', []), undefined, 'an empty list allows any public host');
  assert.equal(webhookUrlProblem('http://93.184.216.34/x', []), undefined, 'and any public address');
});

test('webhook URLs: internal address literals are refused by default in every encoding, and opened only by an address or CIDR entry', () => {
  const internal = [
    'http://127.0.0.1:8080/',
    'http://127.1/',
    'http://0x7f.1/',
    'http://017700000001/',
    'http://2130706433/',
    'http://[::1]/',
    'http://0.0.0.0/',
    'http://[::]/',
    'http://169.254.169.254/latest/meta-data',
    'http://2852039166/',
    'http://[::ffff:169.254.169.254]/',
    'http://[::ffff:a9fe:a9fe]/',
    'http://[fe80::1]/',
    'http://10.0.0.1/',
    'http://172.16.5.4/',
    'http://172.31.255.255/',
    'http://192.168.1.1/',
    'http://100.64.0.1/',
    'http://[fd00::1]/',
    'http://[fc00::abcd]/',
    'http://224.0.0.1/',
    'http://[ff02::1]/',
    'http://[::ffff:10.1.2.3]/',
    'http://[64:ff9b::7f00:1]/',
    'http://[64:ff9b::169.254.169.254]/',
    'http://[64:ff9b::a00:1]/',
    'http://[2002:7f00:1::]/',
    'http://[2002:c0a8:101::1]/',
    'http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/',
    'http://[2001:0:a00:1::1]/',
    'http://localhost:8080/',
    'http://LocalHost./',
    'http://app.localhost/',
  ];
  for (const url of internal) assert.match(webhookUrlProblem(url, []) ?? '', /is a .* address; list it in LOGS_WEBHOOK_ALLOWED_HOSTS/, url);
  for (const url of [
    'http://172.32.0.1/',
    'http://100.128.0.1/',
    'http://[2606:4700::1111]/',
    'http://[::ffff:8.8.8.8]/',
    'http://[64:ff9b::808:808]/',
    'http://[2002:808:808::1]/',
    'http://localhost.example.com/',
  ])
    assert.equal(webhookUrlProblem(url, []), undefined, url);
  // A listed name does not open an internal literal; an address or CIDR entry does.
  assert.match(webhookUrlProblem('http://10.1.2.3/', ['hooks.example.com']) ?? '', /LOGS_WEBHOOK_ALLOWED_HOSTS/);
  assert.equal(webhookUrlProblem('http://10.1.2.3/', ['10.1.0.0/16']), undefined);
  assert.equal(webhookUrlProblem('http://[fd00::5]/', ['fd00::/8']), undefined);
  assert.match(webhookUrlProblem('http://10.2.0.1/', ['10.1.0.0/16']) ?? '', /LOGS_WEBHOOK_ALLOWED_HOSTS/);
  assert.throws(() => loadLogsConfig({ LOGS_ADMIN_PASSWORD, LOGS_WEBHOOK_ALLOWED_HOSTS: '10.0.0.0/33' }), /LOGS_WEBHOOK_ALLOWED_HOSTS/);
  assert.throws(() => loadLogsConfig({ LOGS_ADMIN_PASSWORD, LOGS_WEBHOOK_ALLOWED_HOSTS: 'example.com/8' }), /LOGS_WEBHOOK_ALLOWED_HOSTS/);
});
