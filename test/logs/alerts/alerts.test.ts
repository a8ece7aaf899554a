import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DIALECTS } from '../../helpers/databases.js';
import { startTestLogs, uniqueName, type TestLogs } from '../../helpers/logs.js';

/** The alerts API: rules, validation, permissions, the state machine, lists, tenant isolation. */
const ENV = { LOGS_ALERTS_EVAL_INTERVAL: '0', LOGS_WEBHOOK_ALLOWED_HOSTS: '127.0.0.1,*.example.com' };
const HOUR = 3_600_000;

for (const dialect of DIALECTS) {
  describe(`alerts API [${dialect}]`, () => {
    let logs: TestLogs;
    before(async () => {
      logs = await startTestLogs(dialect, ENV);
    });
    after(async () => logs.close());

    // Fresh admin headers per call: tests move the clock past the access token's life.
    const api = async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object, extra: Record<string, string> = {}) =>
      logs.request({
        method,
        url: `/api/v1/alerts${url}`,
        headers: { ...(await logs.admin()), ...extra },
        ...(payload ? { payload } : {}),
      });

    /** A rule that holds at once on an empty tenant: no log matches its query. */
    const absentRule = (overrides: object = {}) => ({
      name: uniqueName('rule'),
      query: 'nothing-matches-this',
      window: '5m',
      condition: { type: 'absent' },
      severity: 'high',
      ...overrides,
    });

    async function createRule(payload: object, extra: Record<string, string> = {}) {
      const response = await api('POST', '/rules', payload, extra);
      assert.equal(response.statusCode, 201, response.body);
      return response.json();
    }

    /** A firing alert of a fresh rule (opened by the evaluator). */
    async function firingAlert(extra: Record<string, string> = {}): Promise<{ id: string; rule_id: string }> {
      const rule = await createRule(absentRule(), extra);
      const result = await logs.alerts.evaluateRule(rule.id);
      assert.ok(result.opened, 'the evaluation opened an alert');
      return { id: result.opened, rule_id: rule.id };
    }

    const setStatus = (id: string, payload: object, extra: Record<string, string> = {}) => api('POST', `/${id}/status`, payload, extra);
    const inAnHour = () => new Date(logs.clock.ms + HOUR).toISOString();

    test('rule CRUD: create, get, list, update, disable, enable, delete', async () => {
      const created = await createRule({
        name: uniqueName('errors'),
        query: 'level:error AND "payment failed"',
        filters: [{ field: 'service', value: 'checkout' }],
        window: '5m',
        condition: { type: 'above', threshold: 10 },
        interval: '30s',
        severity: 'critical',
        labels: { team: 'payments' },
        webhook: { url: 'http://127.0.0.1:9/hook', secret: 'a-very-secret-key-123' },
      });
      assert.equal(created.window, '5m');
      assert.equal(created.window_ms, 300_000);
      assert.equal(created.interval_ms, 30_000);
      assert.deepEqual(created.condition, { type: 'above', threshold: 10 });
      assert.deepEqual(created.labels, { team: 'payments' });
      assert.equal(created.enabled, true);
      assert.deepEqual(created.webhook, { url: 'http://127.0.0.1:9/hook', has_secret: true });
      assert.ok(!JSON.stringify(created).includes('a-very-secret-key-123'), 'the secret is never returned');
      assert.equal(created.tenant_id, 'default');

      const fetched = await api('GET', `/rules/${created.id}`);
      assert.equal(fetched.statusCode, 200);
      assert.deepEqual(fetched.json(), created);
      const list = (await api('GET', '/rules')).json();
      assert.ok(
        list.data.some((rule: { id: string }) => rule.id === created.id),
        'listed',
      );

      const updated = await api('PUT', `/rules/${created.id}`, {
        severity: 'low',
        condition: { type: 'below', threshold: 3 },
        webhook: { url: 'https://hooks.example.com/x' },
      });
      assert.equal(updated.statusCode, 200, updated.body);
      assert.equal(updated.json().severity, 'low');
      assert.deepEqual(updated.json().condition, { type: 'below', threshold: 3 });
      assert.equal(updated.json().query, created.query, 'fields not given are kept');
      assert.deepEqual(updated.json().webhook, { url: 'https://hooks.example.com/x', has_secret: true }, 'an omitted secret is kept');
      const noSecret = await api('PUT', `/rules/${created.id}`, { webhook: { url: 'https://hooks.example.com/x', secret: '' } });
      assert.deepEqual(noSecret.json().webhook, { url: 'https://hooks.example.com/x', has_secret: false });
      const noHook = await api('PUT', `/rules/${created.id}`, { webhook: null });
      assert.equal(noHook.json().webhook, null);

      const disabled = await api('POST', `/rules/${created.id}/disable`);
      assert.equal(disabled.statusCode, 200);
      assert.equal(disabled.json().enabled, false);
      assert.equal((await logs.alerts.evaluateRule(created.id)).evaluated, false, 'a disabled rule is not evaluated');
      const enabled = await api('POST', `/rules/${created.id}/enable`);
      assert.equal(enabled.json().enabled, true);

      const deleted = await api('DELETE', `/rules/${created.id}`);
      assert.equal(deleted.statusCode, 204);
      assert.equal((await api('GET', `/rules/${created.id}`)).statusCode, 404);
      assert.deepEqual((await api('DELETE', `/rules/${created.id}`)).json(), { error: 'not found' });
      assert.equal((await api('PUT', `/rules/${created.id}`, { severity: 'low' })).statusCode, 404);
      assert.equal((await api('POST', `/rules/${created.id}/enable`)).statusCode, 404);

      const audit = (
        await logs.request({ method: 'GET', url: '/api/v1/log-audit/search?q=alert_rule', headers: await logs.admin() })
      ).json();
      const actions = new Set(
        audit.data.filter((row: { target_id: string }) => row.target_id === created.id).map((row: { action: string }) => row.action),
      );
      assert.deepEqual([...actions].sort(), [
        'alert_rule.create',
        'alert_rule.delete',
        'alert_rule.disable',
        'alert_rule.enable',
        'alert_rule.update',
      ]);
    });

    test('invalid rules are 400 invalid json body with the reason, and change nothing', async () => {
      const before = (await api('GET', '/rules')).json().data.length;
      const cases: [object, RegExp][] = [
        [absentRule({ query: 'level:error AND (' }), /query: .* at position \d+/],
        [absentRule({ query: '"unterminated' }), /query: .*position/],
        [absentRule({ window: 'soon' }), /window/],
        [absentRule({ window: '1s' }), /window must be a duration from 10s to 7d/],
        [absentRule({ window: '30d' }), /window/],
        [absentRule({ interval: '1ms' }), /interval/],
        [absentRule({ condition: { type: 'above' } }), /condition.threshold is required with above/],
        [absentRule({ condition: { type: 'below', threshold: 0 } }), /at least 1 with below/],
        [absentRule({ condition: { type: 'absent', threshold: 3 } }), /not used with absent/],
        [absentRule({ condition: { type: 'sometimes', threshold: 3 } }), /condition/],
        [absentRule({ severity: 'apocalyptic' }), /severity/],
        [absentRule({ name: '   ' }), /name must not be blank/],
        [absentRule({ labels: { 'bad label': 'x' } }), /labels/],
        [absentRule({ webhook: { url: 'ftp://127.0.0.1/x' } }), /http or https/],
        [absentRule({ webhook: { url: 'file:///etc/passwd' } }), /http or https/],
        [absentRule({ webhook: { url: 'not a url' } }), /absolute URL/],
        [absentRule({ webhook: { url: 'http://user:pw@127.0.0.1/x' } }), /credentials/],
        [absentRule({ webhook: { url: 'http://169.254.169.254/latest' } }), /LOGS_WEBHOOK_ALLOWED_HOSTS/],
        [absentRule({ webhook: { url: 'http://127.0.0.1/x', secret: 'short' } }), /at least 16/],
        [{ query: 'x', window: '5m', condition: { type: 'absent' }, severity: 'high' }, /name/],
        [absentRule({ threshold: 3, window: 300 }), /window/],
      ];
      for (const [payload, detail] of cases) {
        const response = await api('POST', '/rules', payload);
        assert.equal(response.statusCode, 400, `${JSON.stringify(payload)}: ${response.body}`);
        assert.equal(response.json().error, 'invalid json body');
        assert.match(response.json().detail, detail, JSON.stringify(payload));
      }
      const syntax = (await api('POST', '/rules', absentRule({ query: 'a AND' }))).json();
      assert.equal(typeof syntax.position, 'number', 'a query syntax error carries its position');

      const name = uniqueName('dup');
      await createRule(absentRule({ name }));
      const duplicate = await api('POST', '/rules', absentRule({ name }));
      assert.equal(duplicate.statusCode, 400);
      assert.match(duplicate.json().detail, /already exists/);
      assert.equal((await api('GET', '/rules')).json().data.length, before + 1, 'only the valid rule was stored');

      const other = await createRule(absentRule());
      const rename = await api('PUT', `/rules/${other.id}`, { name });
      assert.equal(rename.statusCode, 400);
      const badUpdate = await api('PUT', `/rules/${other.id}`, { query: 'OR OR' });
      assert.equal(badUpdate.statusCode, 400);
      assert.equal((await api('GET', `/rules/${other.id}`)).json().query, other.query, 'a refused update changes nothing');
    });

    test('401 without a token, 403 without the permission, on every route', async () => {
      const { id: alertId, rule_id: ruleId } = await firingAlert();
      const reader = await logs.userWith(['alerts:read']);
      const stranger = await logs.userWith(['logs:read']);
      const reads: [string, string][] = [
        ['GET', '/rules'],
        ['GET', `/rules/${ruleId}`],
        ['GET', '/active'],
        ['GET', '/list'],
        ['GET', `/${alertId}`],
      ];
      const writes: [string, string, object?][] = [
        ['POST', '/rules', absentRule()],
        ['PUT', `/rules/${ruleId}`, { severity: 'low' }],
        ['DELETE', `/rules/${ruleId}`],
        ['POST', `/rules/${ruleId}/enable`],
        ['POST', `/rules/${ruleId}/disable`],
        ['POST', `/${alertId}/status`, { status: 'acknowledged' }],
      ];
      for (const [method, url, payload] of [...reads, ...writes]) {
        const request = { method: method as 'GET', url: `/api/v1/alerts${url}`, ...(payload ? { payload } : {}) };
        const anonymous = await logs.request(request);
        assert.equal(anonymous.statusCode, 401, `${method} ${url}`);
        assert.deepEqual(anonymous.json(), { error: 'missing bearer token' });
        const bad = await logs.request({ ...request, headers: { authorization: 'Bearer not-a-token' } });
        assert.equal(bad.statusCode, 401);
        const denied = await logs.request({ ...request, headers: stranger.headers });
        assert.equal(denied.statusCode, 403, `${method} ${url}`);
        assert.deepEqual(denied.json(), { error: 'permission denied' });
      }
      for (const [method, url] of reads) {
        assert.equal(
          (await logs.request({ method: method, url: `/api/v1/alerts${url}`, headers: reader.headers })).statusCode,
          200,
          `${method} ${url} with alerts:read`,
        );
      }
      for (const [method, url, payload] of writes) {
        const response = await logs.request({
          method: method,
          url: `/api/v1/alerts${url}`,
          headers: reader.headers,
          ...(payload ? { payload } : {}),
        });
        assert.equal(response.statusCode, 403, `${method} ${url} needs alerts:write`);
      }
      assert.equal((await api('GET', `/${alertId}`)).json().state, 'firing', 'refused requests changed nothing');
      const writer = await logs.userWith(['alerts:read', 'alerts:write']);
      const ack = await setStatus(alertId, { status: 'acknowledged' }, writer.headers);
      assert.equal(ack.statusCode, 200);
      assert.equal(ack.json().acknowledged_by, writer.username);
    });

    test('state machine: every allowed transition is 200, every other one 409', async () => {
      const allowed: Record<string, string[]> = {
        firing: ['acknowledged', 'silenced', 'resolved'],
        acknowledged: ['silenced', 'resolved'],
        silenced: ['firing', 'silenced', 'resolved'],
        resolved: [],
      };
      const states = ['firing', 'acknowledged', 'silenced', 'resolved'];
      async function alertIn(state: string): Promise<string> {
        const { id } = await firingAlert();
        if (state !== 'firing') {
          const response = await setStatus(id, state === 'silenced' ? { status: 'silenced', until: inAnHour() } : { status: state });
          assert.equal(response.statusCode, 200, response.body);
        }
        return id;
      }
      for (const from of states) {
        for (const to of states) {
          const id = await alertIn(from);
          const before = (await api('GET', `/${id}`)).json();
          const payload =
            to === 'silenced' ? { status: to, until: inAnHour(), comment: 'maintenance' } : { status: to, comment: 'by the test' };
          const response = await setStatus(id, payload);
          if (allowed[from]!.includes(to)) {
            assert.equal(response.statusCode, 200, `${from} -> ${to}: ${response.body}`);
            const alert = response.json();
            assert.equal(alert.state, to);
            const last = alert.history.at(-1);
            assert.equal(last.from, from);
            assert.equal(last.to, to);
            assert.equal(last.actor, 'admin');
            assert.equal(last.comment, payload.comment);
            assert.equal(typeof last.at, 'string');
            if (to === 'resolved') assert.equal(alert.resolved_by, 'admin');
            if (to === 'silenced') assert.equal(alert.silenced_until, payload.until);
            if (from === 'silenced' && to === 'firing') assert.equal(alert.silenced_until, null);
          } else {
            assert.equal(response.statusCode, 409, `${from} -> ${to}: ${response.body}`);
            assert.equal(response.json().error, 'invalid status transition');
            assert.deepEqual((await api('GET', `/${id}`)).json(), before, `${from} -> ${to} changed nothing`);
          }
        }
      }
      const audit = (
        await logs.request({ method: 'GET', url: '/api/v1/log-audit/search?action=alert.status&limit=1000', headers: await logs.admin() })
      ).json();
      assert.ok(
        audit.data.some((row: { details: { from: string; to: string } }) => row.details.from === 'silenced' && row.details.to === 'firing'),
        'silenced -> firing audited',
      );
      assert.ok(
        audit.data.every((row: { target_type: string }) => row.target_type === 'alert'),
        'audit rows name the alert',
      );
      assert.ok(
        audit.data.filter((row: { actor: string }) => row.actor === 'admin').length >= 9,
        'each allowed change is audited with its actor',
      );
    });

    test('status: unknown id 404, bad until 400, silence ends by itself', async () => {
      const missing = await setStatus('00000000-0000-0000-0000-000000000000', { status: 'acknowledged' });
      assert.equal(missing.statusCode, 404);
      assert.deepEqual(missing.json(), { error: 'not found' });
      assert.equal((await api('GET', '/00000000-0000-0000-0000-000000000000')).statusCode, 404);

      const { id, rule_id } = await firingAlert();
      for (const payload of [
        { status: 'silenced' },
        { status: 'silenced', until: new Date(logs.clock.ms - 1000).toISOString() },
        { status: 'silenced', until: new Date(logs.clock.ms + 40 * 24 * HOUR).toISOString() },
        { status: 'silenced', until: 'tomorrow' },
        { status: 'acknowledged', until: inAnHour() },
        { status: 'asleep' },
        {},
      ]) {
        const response = await setStatus(id, payload);
        assert.equal(response.statusCode, 400, `${JSON.stringify(payload)}: ${response.body}`);
        assert.equal(response.json().error, 'invalid json body');
      }
      assert.equal((await api('GET', `/${id}`)).json().state, 'firing');

      const silenced = await setStatus(id, { status: 'silenced', until: inAnHour() });
      assert.equal(silenced.json().state, 'silenced');
      logs.clock.advance(HOUR - 1000);
      await logs.alerts.evaluateDue();
      assert.equal((await api('GET', `/${id}`)).json().state, 'silenced', 'still silenced before until');
      logs.clock.advance(2000);
      await logs.alerts.evaluateDue();
      const woken = (await api('GET', `/${id}`)).json();
      assert.equal(woken.state, 'firing', 'silenced -> firing when until passes');
      assert.deepEqual(woken.history.at(-1), {
        at: woken.history.at(-1).at,
        actor: 'system',
        actor_id: null,
        from: 'silenced',
        to: 'firing',
        comment: 'silence ended',
      });
      assert.equal((await logs.alerts.evaluateRule(rule_id)).opened, undefined, 'the open alert is reused, not duplicated');
    });

    test('a resolved alert stays resolved; the rule opens a new one if it still holds', async () => {
      const { id, rule_id } = await firingAlert();
      assert.equal((await setStatus(id, { status: 'resolved' })).statusCode, 200);
      const next = await logs.alerts.evaluateRule(rule_id);
      assert.ok(next.opened && next.opened !== id, 'a new alert');
      const list = (await api('GET', `/list?rule_id=${rule_id}`)).json();
      assert.equal(list.total, 2);
      assert.deepEqual(list.data.map((a: { state: string }) => a.state).sort(), ['firing', 'resolved']);
    });

    test('disabling or deleting a rule resolves its open alert (system)', async () => {
      const first = await firingAlert();
      await api('POST', `/rules/${first.rule_id}/disable`);
      const resolved = (await api('GET', `/${first.id}`)).json();
      assert.equal(resolved.state, 'resolved');
      assert.equal(resolved.resolved_by, 'system');
      assert.equal(resolved.history.at(-1).comment, 'rule disabled');

      const second = await firingAlert();
      await api('DELETE', `/rules/${second.rule_id}`);
      const gone = (await api('GET', `/${second.id}`)).json();
      assert.equal(gone.state, 'resolved');
      assert.equal(gone.rule_id, second.rule_id, 'past alerts of a deleted rule stay, with its name');
    });

    test('active and list: states, filters, pagination; counts by severity', async () => {
      const tenant = (
        await logs.request({ method: 'POST', url: '/api/tenants', headers: await logs.admin(), payload: { name: uniqueName('lists') } })
      ).json().id;
      const t = { 'x-tenant-id': tenant };
      const start = logs.clock.ms;
      const made: Record<string, string> = {};
      for (const [key, severity] of [
        ['a', 'critical'],
        ['b', 'critical'],
        ['c', 'low'],
        ['d', 'info'],
        ['e', 'medium'],
      ] as const) {
        const rule = await createRule(absentRule({ severity }), t);
        made[key] = (await logs.alerts.evaluateRule(rule.id)).opened!;
        logs.clock.advance(1000);
      }
      await setStatus(made.b!, { status: 'acknowledged' }, t);
      await setStatus(made.c!, { status: 'silenced', until: inAnHour() }, t);
      await setStatus(made.d!, { status: 'resolved' }, t);

      const active = (await api('GET', '/active', undefined, t)).json().data;
      assert.deepEqual(
        active.map((a: { id: string }) => a.id),
        [made.e, made.b, made.a],
        'firing and acknowledged, newest first',
      );
      // The console's Active tab: silenced alerts stay in view (open, quiet until their `until`).
      assert.deepEqual(
        (await api('GET', '/active?include_silenced=true', undefined, t))
          .json()
          .data.map((a: { id: string; state: string }) => [a.id, a.state]),
        [
          [made.e, 'firing'],
          [made.c, 'silenced'],
          [made.b, 'acknowledged'],
          [made.a, 'firing'],
        ],
        'with include_silenced: every open alert, newest first; resolved ones still left out',
      );
      assert.equal((await api('GET', '/active?include_silenced=maybe', undefined, t)).statusCode, 400);
      assert.deepEqual(await logs.alerts.activeCountsBySeverity(tenant), { critical: 2, high: 0, medium: 1, low: 0, info: 0 });
      // The dashboards overview takes its counts from the alerts module.
      const overview = await logs.request({ method: 'GET', url: '/api/v1/dashboard/overview', headers: { ...(await logs.admin()), ...t } });
      assert.equal(overview.statusCode, 200, overview.body);
      assert.deepEqual(overview.json().alerts, { available: true, active_total: 3, by_severity: { critical: 2, medium: 1 } });

      const all = (await api('GET', '/list', undefined, t)).json();
      assert.equal(all.total, 5);
      assert.deepEqual(Object.keys(all).sort(), ['data', 'limit', 'page', 'pages', 'total']);
      const page2 = (await api('GET', '/list?limit=2&page=2', undefined, t)).json();
      assert.deepEqual(
        page2.data.map((a: { id: string }) => a.id),
        [made.c, made.b],
      );
      assert.equal(page2.pages, 3);
      assert.deepEqual(
        (await api('GET', '/list?state=silenced', undefined, t)).json().data.map((a: { id: string }) => a.id),
        [made.c],
      );
      assert.equal((await api('GET', '/list?severity=critical', undefined, t)).json().total, 2);
      const window = `from=${new Date(start + 1000).toISOString()}&to=${new Date(start + 3000).toISOString()}`;
      assert.deepEqual(
        (await api('GET', `/list?${window}`, undefined, t)).json().data.map((a: { id: string }) => a.id),
        [made.c, made.b],
        'from inclusive, to exclusive',
      );
      assert.equal((await api('GET', '/list?state=sleeping', undefined, t)).statusCode, 400);
      assert.equal((await api('GET', '/list?limit=5000', undefined, t)).statusCode, 400);

      // Deleting the tenant takes its rules and alerts with it.
      const removed = await logs.request({ method: 'DELETE', url: `/api/tenants/${tenant}`, headers: await logs.admin() });
      assert.equal(removed.statusCode, 204, removed.body);
      assert.deepEqual(await logs.alerts.activeCountsBySeverity(tenant), { critical: 0, high: 0, medium: 0, low: 0, info: 0 });
    });

    test('tenant isolation: rules and alerts never cross tenants', async () => {
      const tenant = (
        await logs.request({ method: 'POST', url: '/api/tenants', headers: await logs.admin(), payload: { name: uniqueName('iso') } })
      ).json().id;
      const theirs = await firingAlert({ 'x-tenant-id': tenant });
      const ours = await firingAlert();
      const member = await logs.userWith(['alerts:read', 'alerts:write'], { tenantId: tenant });
      const as = (method: 'GET' | 'POST', url: string, payload?: object) =>
        logs.request({ method, url: `/api/v1/alerts${url}`, headers: member.headers, ...(payload ? { payload } : {}) });

      const rules = (await as('GET', '/rules')).json().data;
      assert.deepEqual(
        rules.map((r: { id: string }) => r.id),
        [theirs.rule_id],
      );
      assert.deepEqual(
        (await as('GET', '/active')).json().data.map((a: { id: string }) => a.id),
        [theirs.id],
      );
      assert.equal((await as('GET', '/list')).json().total, 1);
      assert.equal((await as('GET', `/rules/${ours.rule_id}`)).statusCode, 404);
      assert.equal((await as('GET', `/${ours.id}`)).statusCode, 404);
      assert.equal((await as('POST', `/${ours.id}/status`, { status: 'resolved' })).statusCode, 404);
      assert.equal((await as('POST', `/rules/${ours.rule_id}/disable`)).statusCode, 404);
      assert.equal((await api('GET', `/${ours.id}`)).json().state, 'firing');
      // The member's X-Tenant-Id without tenants:manage does not open the default tenant.
      const peek = await logs.request({
        method: 'GET',
        url: '/api/v1/alerts/rules',
        headers: { ...member.headers, 'x-tenant-id': 'default' },
      });
      assert.notEqual(peek.statusCode, 200);
      // Admin sees each tenant only through X-Tenant-Id.
      const adminView = (await api('GET', '/rules')).json().data.map((r: { id: string }) => r.id);
      assert.ok(adminView.includes(ours.rule_id) && !adminView.includes(theirs.rule_id), 'admin sees its own tenant');
      assert.equal((await logs.alerts.activeCountsBySeverity(tenant)).high, 1);
    });

    test('the OpenAPI description lists the alert routes', async () => {
      const paths = Object.keys((await logs.request({ method: 'GET', url: '/openapi.json' })).json().paths);
      for (const path of [
        '/api/v1/alerts/rules',
        '/api/v1/alerts/rules/{id}',
        '/api/v1/alerts/rules/{id}/enable',
        '/api/v1/alerts/rules/{id}/disable',
        '/api/v1/alerts/active',
        '/api/v1/alerts/list',
        '/api/v1/alerts/{id}',
        '/api/v1/alerts/{id}/status',
      ]) {
        assert.ok(paths.includes(path), path);
      }
    });
  });
}
