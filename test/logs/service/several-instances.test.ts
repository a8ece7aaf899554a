import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { test } from 'node:test';
import { createTestDatabase, describeOnPostgres } from '../../helpers/databases.js';
import { eventually } from '../../helpers/eventually.js';
import { watchLines } from '../../helpers/log-watch.js';
import { LOGS_ADMIN, LOGS_ADMIN_PASSWORD, uniqueName } from '../../helpers/logs.js';
import { killHard, startLogsProcess } from '../../helpers/logs-process.js';
import { closedPort } from '../../helpers/upstream.js';
import { startWebhookReceiver } from '../../helpers/webhook-receiver.js';

/**
 * Two logs services as real processes on one PostgreSQL database (docs/log-store.md, "Several
 * instances"): one leads and runs the alert evaluator; killed, the other takes over.
 */
const ENV = {
  LOGS_ALERTS_EVAL_INTERVAL: '200ms',
  LOGS_WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
  LOGS_WEBHOOK_BACKOFF: '100ms',
};

async function call(base: string, method: string, path: string, token?: string, body?: object) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  return { status: response.status, text, json: () => JSON.parse(text) };
}

async function login(base: string): Promise<string> {
  const response = await call(base, 'POST', '/api/login', undefined, { username: LOGS_ADMIN, password: LOGS_ADMIN_PASSWORD });
  assert.equal(response.status, 200, response.text);
  return response.json().token.access_token as string;
}

/** The instance's `logs_leader` gauge. */
async function leaderGauge(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const line = text.split('\n').find((row) => row.startsWith('logs_leader '));
  assert.ok(line, 'logs_leader is exposed');
  return Number(line.split(' ')[1]);
}

describeOnPostgres('two logs instances on one PostgreSQL database, as processes', () => {
  test(
    'one leads: a rule fires once with one webhook; after SIGKILL of the leader the other leads within seconds and rules still fire once',
    { timeout: 120_000 },
    async (t) => {
      const database = await createTestDatabase('postgres');
      const receiver = await startWebhookReceiver();
      const children: ChildProcess[] = [];
      try {
        const [portA, portB] = [await closedPort(), await closedPort()];
        const a = await startLogsProcess(database.url, portA, ENV);
        children.push(a);
        const b = await startLogsProcess(database.url, portB, ENV);
        children.push(b);
        const bLines = watchLines(b);
        const [baseA, baseB] = [`http://127.0.0.1:${portA}`, `http://127.0.0.1:${portB}`];

        // The first to start took the lock; the second waits (and says nothing of it).
        assert.match(a.startOutput, /"msg":"leadership gained"/);
        assert.doesNotMatch(b.startOutput, /"msg":"leadership/);
        assert.deepEqual([await leaderGauge(baseA), await leaderGauge(baseB)], [1, 0]);

        // A rule made through the instance that does not lead: the leader evaluates it, once a pass.
        const token = await login(baseB);
        const createRule = async (name: string) => {
          const created = await call(baseB, 'POST', '/api/v1/alerts/rules', token, {
            name,
            severity: 'high',
            query: uniqueName('never'),
            window: '1m',
            interval: '5s',
            condition: { type: 'absent' },
            webhook: { url: receiver.url },
          });
          assert.equal(created.status, 201, created.text);
          return created.json().id as string;
        };
        const ruleOf = async (base: string, id: string) => (await call(base, 'GET', `/api/v1/alerts/rules/${id}`, token)).json();
        const alertsOf = async (id: string) => (await call(baseB, 'GET', `/api/v1/alerts/list?rule_id=${id}`, token)).json();
        /** Resolves once the rule has been evaluated after `since` (its last_evaluated_at moved). */
        const evaluatedAfter = (id: string, since: string | null) =>
          eventually(async () => {
            const rule = await ruleOf(baseB, id);
            assert.notEqual(rule.last_evaluated_at, since);
            return rule.last_evaluated_at as string;
          }, 30_000);

        const first = await createRule('first');
        await receiver.waitFor(1);
        assert.equal(receiver.received[0]!.json.event, 'alert.firing');
        assert.equal(receiver.received[0]!.json.rule.id, first);
        // Two more evaluations (the alert stays open): still one alert and one delivery.
        let at = await evaluatedAfter(first, null);
        at = await evaluatedAfter(first, at);
        at = await evaluatedAfter(first, at);
        assert.equal(receiver.received.length, 1, 'one webhook for the alert');
        assert.equal((await alertsOf(first)).total, 1);

        // The leader dies; the other takes the lock within seconds (the server frees it with the connection).
        const killedAt = Date.now();
        await killHard(a);
        await bLines.waitFor((line) => line.msg === 'leadership gained', { timeoutMs: 30_000 });
        t.diagnostic(`takeover after SIGKILL of the leader: ${Date.now() - killedAt} ms`);
        assert.equal(await leaderGauge(baseB), 1);

        // The rule goes on being evaluated, its open alert kept (no second one, no second webhook) ...
        await evaluatedAfter(first, at);
        // ... and a new rule fires, once.
        const second = await createRule('second');
        await receiver.waitFor(2);
        assert.equal(receiver.received[1]!.json.rule.id, second);
        await evaluatedAfter(second, (await ruleOf(baseB, second)).last_evaluated_at as string);
        assert.deepEqual(
          receiver.received.map((hook) => [hook.json.rule.id, hook.json.event]),
          [
            [first, 'alert.firing'],
            [second, 'alert.firing'],
          ],
        );
        assert.deepEqual([(await alertsOf(first)).total, (await alertsOf(second)).total], [1, 1]);
      } finally {
        for (const child of children) await killHard(child);
        await receiver.close();
        await database.drop();
      }
    },
  );
});
