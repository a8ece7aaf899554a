import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { after, before, describe, test } from 'node:test';
import { DIALECTS } from '../../helpers/databases.js';
import { bearer, PASSWORD, startTestLogs, uniqueName, type TestLogs } from '../../helpers/logs.js';

/** Every protected route and the permission spec 4.5 (or this service) requires. */
const ROUTES: { method: 'GET' | 'POST'; url: string; permission: string; payload?: object | string }[] = [
  { method: 'GET', url: '/api/v1/logs/fields', permission: 'logs:read' },
  { method: 'GET', url: '/api/v1/logs/fields/level/distinct', permission: 'logs:read' },
  { method: 'POST', url: '/api/v1/logs/list/paginate', permission: 'logs:read', payload: {} },
  { method: 'POST', url: '/api/v1/logs/histogram', permission: 'logs:read', payload: {} },
  { method: 'GET', url: '/api/v1/log-audit/search', permission: 'audit:read' },
  { method: 'GET', url: '/api/v1/log-audit/export/csv', permission: 'audit:export' },
  { method: 'GET', url: '/api/v1/log-audit/export/excel', permission: 'audit:export' },
  { method: 'GET', url: '/api/tenants', permission: 'tenants:manage' },
  { method: 'POST', url: '/api/tenants', permission: 'tenants:manage', payload: { name: 'never-made' } },
  { method: 'GET', url: '/api/users', permission: 'users:manage' },
  {
    method: 'POST',
    url: '/api/users',
    permission: 'users:manage',
    payload: { username: 'never-made', email: 'n@example.go.id', password: PASSWORD, roles: [] },
  },
  { method: 'GET', url: '/api/roles', permission: 'roles:manage' },
  { method: 'POST', url: '/api/roles', permission: 'roles:manage', payload: { name: 'never-made', permissions: [] } },
  { method: 'POST', url: '/v1/logs', permission: 'logs:write', payload: { resourceLogs: [] } },
  { method: 'POST', url: '/api/v1/_elastic/_bulk', permission: 'logs:write', payload: '{"index":{}}\n{"message":"x"}\n' },
  { method: 'POST', url: '/api/v1/_elastic/_search', permission: 'logs:read', payload: '{"query":{"match_all":{}}}' },
  { method: 'GET', url: '/api/v1/_elastic/logs/_mapping', permission: 'logs:read' },
];

for (const dialect of DIALECTS) {
  describe(`logs accounts and RBAC [${dialect}]`, () => {
    let logs: TestLogs;
    before(async () => {
      logs = await startTestLogs(dialect);
    });
    after(async () => logs.close());

    test('every protected route: 401 without a token, 403 without its permission, allowed with it', async () => {
      const everythingElse = async (permission: string) => {
        // A user holding every permission but this one.
        const others = [
          'logs:read',
          'logs:write',
          'alerts:read',
          'alerts:write',
          'dashboard:read',
          'audit:read',
          'audit:export',
          'tenants:manage',
          'users:manage',
          'roles:manage',
        ].filter((p) => p !== permission);
        return logs.userWith(others);
      };
      for (const route of ROUTES) {
        const anonymous = await logs.request({
          method: route.method,
          url: route.url,
          ...(route.payload ? { payload: route.payload } : {}),
        });
        assert.equal(anonymous.statusCode, 401, `${route.method} ${route.url} anonymous`);
        const without = await everythingElse(route.permission);
        const denied = await logs.request({
          method: route.method,
          url: route.url,
          headers: without.headers,
          ...(route.payload ? { payload: route.payload } : {}),
        });
        assert.equal(denied.statusCode, 403, `${route.method} ${route.url} without ${route.permission}`);
        // The Elasticsearch-compatible API answers in Elasticsearch's error shape.
        if (route.url.includes('/_elastic/')) assert.equal(denied.json().error.type, 'security_exception');
        else assert.deepEqual(denied.json(), { error: 'permission denied' });
        const holder = await logs.userWith([route.permission]);
        const allowed = await logs.request({
          method: route.method,
          url: route.url,
          headers: holder.headers,
          ...(route.payload ? { payload: route.payload } : {}),
        });
        assert.ok(
          allowed.statusCode < 400,
          `${route.method} ${route.url} with ${route.permission}: ${allowed.statusCode} ${allowed.body.slice(0, 200)}`,
        );
      }
    });

    test('the Kubernetes views are wired behind dashboard:read, and answer 503 when no cluster is configured', async () => {
      for (const path of ['/api/v1/k8s/cluster/health', '/api/v1/k8s/nodes', '/api/v1/k8s/pods']) {
        assert.equal((await logs.request({ method: 'GET', url: path })).statusCode, 401, path);
        const without = await logs.userWith(['logs:read']);
        assert.equal((await logs.request({ method: 'GET', url: path, headers: without.headers })).statusCode, 403, path);
        const holder = await logs.userWith(['dashboard:read']);
        const response = await logs.request({ method: 'GET', url: path, headers: holder.headers });
        assert.equal(response.statusCode, 503, path);
        assert.deepEqual(response.json(), { error: 'kubernetes not configured' });
      }
    });

    test('the built-in viewer role reads logs but manages nothing', async () => {
      const headers = await logs.admin();
      const username = uniqueName('viewer');
      const created = await logs.request({
        method: 'POST',
        url: '/api/users',
        headers,
        payload: { username, email: `${username}@example.go.id`, password: PASSWORD, roles: ['viewer'] },
      });
      assert.equal(created.statusCode, 201);
      const viewer = bearer((await logs.login(username, PASSWORD)).access_token);
      assert.equal(
        (await logs.request({ method: 'POST', url: '/api/v1/logs/list/paginate', headers: viewer, payload: {} })).statusCode,
        200,
      );
      assert.equal((await logs.request({ method: 'GET', url: '/api/users', headers: viewer })).statusCode, 403);
      assert.equal((await logs.request({ method: 'GET', url: '/api/v1/log-audit/search', headers: viewer })).statusCode, 403);
    });

    test('roles: create, get, update, delete; unknown or repeated permissions, duplicate names and missing fields are 400', async () => {
      const headers = await logs.admin();
      const name = uniqueName('ops');
      const created = await logs.request({
        method: 'POST',
        url: '/api/roles',
        headers,
        payload: { name, permissions: ['logs:read', 'alerts:read'] },
      });
      assert.equal(created.statusCode, 201);
      const role = created.json();
      assert.deepEqual(role.permissions, ['logs:read', 'alerts:read']);
      assert.equal(role.builtin, false);

      assert.equal((await logs.request({ method: 'GET', url: `/api/roles/${role.id}`, headers })).json().name, name);
      const list = await logs.request({ method: 'GET', url: '/api/roles', headers });
      const names = list.json().roles.map((r: { name: string }) => r.name);
      assert.ok(names.includes('admin') && names.includes('viewer') && names.includes(name));

      const bad = [
        { name: uniqueName('r'), permissions: ['logs:delete'] },
        { name: uniqueName('r'), permissions: ['logs:read', 'logs:read'] },
        { name, permissions: [] },
        { name: 'viewer', permissions: [] },
        { permissions: ['logs:read'] },
        { name: uniqueName('r') },
      ];
      for (const payload of bad) {
        const response = await logs.request({ method: 'POST', url: '/api/roles', headers, payload });
        assert.equal(response.statusCode, 400, JSON.stringify(payload));
        assert.equal(response.json().error, 'invalid json body');
      }

      const updated = await logs.request({ method: 'PUT', url: `/api/roles/${role.id}`, headers, payload: { permissions: ['logs:read'] } });
      assert.equal(updated.statusCode, 200);
      assert.deepEqual(updated.json().permissions, ['logs:read']);
      assert.equal(
        (await logs.request({ method: 'PUT', url: '/api/roles/viewer', headers, payload: { permissions: ['users:manage'] } })).statusCode,
        400,
      );
      assert.equal((await logs.request({ method: 'DELETE', url: '/api/roles/admin', headers })).statusCode, 400);
      assert.equal((await logs.request({ method: 'DELETE', url: `/api/roles/${role.id}`, headers })).statusCode, 204);
      assert.equal((await logs.request({ method: 'GET', url: `/api/roles/${role.id}`, headers })).statusCode, 404);
    });

    test('nobody grants a permission they lack', async () => {
      const roleManager = await logs.userWith(['roles:manage', 'users:manage', 'logs:read']);
      const escalate = await logs.request({
        method: 'POST',
        url: '/api/roles',
        headers: roleManager.headers,
        payload: { name: uniqueName('r'), permissions: ['tenants:manage'] },
      });
      assert.equal(escalate.statusCode, 403);
      const username = uniqueName('u');
      const toAdmin = await logs.request({
        method: 'POST',
        url: '/api/users',
        headers: roleManager.headers,
        payload: { username, email: `${username}@example.go.id`, password: PASSWORD, roles: ['admin'] },
      });
      assert.equal(toAdmin.statusCode, 403);
      const ok = await logs.request({
        method: 'POST',
        url: '/api/roles',
        headers: roleManager.headers,
        payload: { name: uniqueName('r'), permissions: ['logs:read'] },
      });
      assert.equal(ok.statusCode, 201);
    });

    test('a users:manage holder cannot act on a more powerful user: the admin-takeover chain is 403 at every step and changes nothing', async () => {
      const manager = await logs.userWith(['users:manage']);
      const adminHeaders = await logs.admin();
      const admin = (await logs.request({ method: 'GET', url: '/api/users', headers: adminHeaders }))
        .json()
        .users.find((u: { username: string }) => u.username === 'admin');
      const takeover = 'Takeover#Passw0rd';
      // The reported chain: set the admin's password, then log in as the admin with it.
      const setPassword = await logs.request({
        method: 'PUT',
        url: `/api/users/${admin.id}`,
        headers: manager.headers,
        payload: { password: takeover },
      });
      assert.equal(setPassword.statusCode, 403);
      assert.deepEqual(setPassword.json(), { error: 'permission denied' });
      assert.equal(
        (await logs.request({ method: 'POST', url: '/api/login', payload: { username: 'admin', password: takeover } })).statusCode,
        401,
      );
      // Every other action on the admin: e-mail, strip roles, delete.
      for (const [method, payload] of [
        ['PUT', { email: 'attacker@example.go.id' }],
        ['PUT', { roles: [] }],
        ['DELETE', undefined],
      ] as const) {
        const response = await logs.request({
          method,
          url: `/api/users/${admin.id}`,
          headers: manager.headers,
          ...(payload ? { payload } : {}),
        });
        assert.equal(response.statusCode, 403, `${method} ${JSON.stringify(payload)}`);
      }
      const after = (await logs.request({ method: 'GET', url: `/api/users/${admin.id}`, headers: adminHeaders })).json();
      assert.deepEqual(after.roles, ['admin']);
      assert.equal(after.email, admin.email);
      await logs.login(); // the admin's own password still works

      // A peer holding one permission the manager lacks is out of reach too, for every action.
      const peer = await logs.userWith(['users:manage', 'logs:read']);
      for (const [method, payload] of [
        ['PUT', { password: takeover }],
        ['PUT', { roles: [] }],
        ['DELETE', undefined],
      ] as const) {
        assert.equal(
          (await logs.request({ method, url: `/api/users/${peer.id}`, headers: manager.headers, ...(payload ? { payload } : {}) }))
            .statusCode,
          403,
          `${method} peer`,
        );
      }
      assert.deepEqual((await logs.request({ method: 'GET', url: `/api/users/${peer.id}`, headers: adminHeaders })).json().roles.length, 1);

      // A user whose permissions are all the manager's own stays manageable: update, reset, re-role, delete.
      const equal = await logs.userWith(['users:manage']);
      assert.equal(
        (
          await logs.request({
            method: 'PUT',
            url: `/api/users/${equal.id}`,
            headers: manager.headers,
            payload: { password: takeover, roles: [] },
          })
        ).statusCode,
        200,
      );
      assert.equal(
        (await logs.request({ method: 'POST', url: '/api/login', payload: { username: equal.username, password: takeover } })).statusCode,
        200,
      );
      assert.equal((await logs.request({ method: 'DELETE', url: `/api/users/${equal.id}`, headers: manager.headers })).statusCode, 204);
    });

    test('a roles:manage holder cannot change or delete a role beyond their permissions or one a more powerful user holds', async () => {
      const adminHeaders = await logs.admin();
      const manager = await logs.userWith(['roles:manage', 'logs:read']);
      const createRole = async (permissions: string[]) =>
        (
          await logs.request({ method: 'POST', url: '/api/roles', headers: adminHeaders, payload: { name: uniqueName('r'), permissions } })
        ).json();
      // A role with a permission the manager lacks.
      const wider = await createRole(['logs:read', 'tenants:manage']);
      // A role within the manager's permissions, held by a user who also holds users:manage.
      const narrow = await createRole(['logs:read']);
      const holderName = uniqueName('u');
      assert.equal(
        (
          await logs.request({
            method: 'POST',
            url: '/api/users',
            headers: adminHeaders,
            payload: { username: holderName, email: `${holderName}@example.go.id`, password: PASSWORD, roles: [narrow.name, 'admin'] },
          })
        ).statusCode,
        201,
      );
      for (const role of [wider, narrow]) {
        for (const [method, payload] of [
          ['PUT', { permissions: [] }],
          ['PUT', { name: uniqueName('renamed') }],
          ['DELETE', undefined],
        ] as const) {
          const response = await logs.request({
            method,
            url: `/api/roles/${role.id}`,
            headers: manager.headers,
            ...(payload ? { payload } : {}),
          });
          assert.equal(response.statusCode, 403, `${method} ${role.name} ${JSON.stringify(payload)}`);
          assert.deepEqual(response.json(), { error: 'permission denied' });
        }
        const unchanged = (await logs.request({ method: 'GET', url: `/api/roles/${role.id}`, headers: adminHeaders })).json();
        assert.deepEqual([unchanged.name, unchanged.permissions], [role.name, role.permissions]);
      }
      // A role within reach, held by nobody more powerful, stays manageable.
      const own = await createRole(['logs:read']);
      assert.equal(
        (await logs.request({ method: 'PUT', url: `/api/roles/${own.id}`, headers: manager.headers, payload: { permissions: [] } }))
          .statusCode,
        200,
      );
      assert.equal((await logs.request({ method: 'DELETE', url: `/api/roles/${own.id}`, headers: manager.headers })).statusCode, 204);
    });

    test('users: create, get, update, delete; passwords never returned; bad input is 400', async () => {
      const headers = await logs.admin();
      const username = uniqueName('u');
      const created = await logs.request({
        method: 'POST',
        url: '/api/users',
        headers,
        payload: { username, email: `${username}@Example.go.id`, password: PASSWORD, roles: ['viewer'] },
      });
      assert.equal(created.statusCode, 201);
      const user = created.json();
      assert.deepEqual(Object.keys(user).sort(), ['created_at', 'email', 'id', 'roles', 'tenant_id', 'updated_at', 'username']);
      assert.equal(user.email, `${username}@example.go.id`);
      assert.equal(user.tenant_id, 'default');
      assert.ok(!created.body.includes('argon2') && !created.body.includes(PASSWORD));

      const listed = await logs.request({ method: 'GET', url: '/api/users', headers });
      assert.ok(listed.json().users.some((u: { id: string }) => u.id === user.id));
      assert.ok(!listed.body.includes('argon2'));
      assert.equal((await logs.request({ method: 'GET', url: `/api/users/${user.id}`, headers })).json().username, username);

      const bad = [
        { username, email: 'x@example.go.id', password: PASSWORD, roles: [] },
        { username: uniqueName('u'), email: 'x@example.go.id', password: 'short', roles: [] },
        { username: uniqueName('u'), email: 'x@example.go.id', password: PASSWORD, roles: ['no-such-role'] },
        { username: uniqueName('u'), email: 'not-an-email', password: PASSWORD, roles: [] },
        { username: uniqueName('u'), email: 'x@example.go.id', password: PASSWORD },
      ];
      for (const payload of bad) {
        const response = await logs.request({ method: 'POST', url: '/api/users', headers, payload });
        assert.equal(response.statusCode, 400, JSON.stringify(payload));
        assert.equal(response.json().error, 'invalid json body');
      }

      // A new password ends the user's sessions.
      const token = await logs.login(username, PASSWORD);
      const updated = await logs.request({
        method: 'PUT',
        url: `/api/users/${user.id}`,
        headers,
        payload: { password: 'Lain#Sandi456', roles: [] },
      });
      assert.equal(updated.statusCode, 200);
      assert.deepEqual(updated.json().roles, []);
      assert.equal((await logs.request({ method: 'GET', url: '/api/me', headers: bearer(token.access_token) })).statusCode, 401);
      assert.equal(
        (await logs.request({ method: 'POST', url: '/api/login', payload: { username, password: 'Lain#Sandi456' } })).statusCode,
        200,
      );

      assert.equal((await logs.request({ method: 'DELETE', url: `/api/users/${user.id}`, headers })).statusCode, 204);
      assert.equal((await logs.request({ method: 'GET', url: `/api/users/${user.id}`, headers })).statusCode, 404);
      assert.equal(
        (await logs.request({ method: 'POST', url: '/api/login', payload: { username, password: 'Lain#Sandi456' } })).statusCode,
        401,
      );

      const changes = await logs.request({ method: 'GET', url: `/api/v1/log-audit/search?q=${user.id}`, headers });
      assert.deepEqual(
        changes
          .json()
          .data.map((row: { action: string }) => row.action)
          .sort(),
        ['user.create', 'user.delete', 'user.update'],
      );
    });

    test('tenants: create, get, update, delete; isolation of users, roles and audit; X-Tenant-Id only with tenants:manage', async () => {
      const headers = await logs.admin();
      const name = uniqueName('dinas');
      const created = await logs.request({ method: 'POST', url: '/api/tenants', headers, payload: { name, retention_days: 7 } });
      assert.equal(created.statusCode, 201);
      const tenant = created.json();
      assert.equal(tenant.retention_days, 7);
      assert.equal((await logs.request({ method: 'POST', url: '/api/tenants', headers, payload: { name } })).statusCode, 400);
      assert.equal((await logs.request({ method: 'POST', url: '/api/tenants', headers, payload: {} })).statusCode, 400);
      assert.equal((await logs.request({ method: 'GET', url: `/api/tenants/${tenant.id}`, headers })).json().name, name);
      assert.ok(
        (await logs.request({ method: 'GET', url: '/api/tenants', headers }))
          .json()
          .tenants.some((t: { id: string }) => t.id === tenant.id),
      );

      // The administrator creates a manager inside the new tenant.
      const manager = await logs.userWith(['users:manage', 'roles:manage', 'audit:read', 'logs:read'], { tenantId: tenant.id });
      const inTenant = await logs.request({ method: 'GET', url: '/api/users', headers: manager.headers });
      assert.deepEqual(
        inTenant.json().users.map((u: { username: string }) => u.username),
        [manager.username],
      );
      assert.ok(!inTenant.body.includes('"admin"'));
      const defaultUsers = await logs.request({ method: 'GET', url: '/api/users', headers });
      assert.ok(!defaultUsers.json().users.some((u: { username: string }) => u.username === manager.username));
      // Other tenants' users and roles are not found, nor reachable by X-Tenant-Id without tenants:manage.
      const adminId = defaultUsers.json().users.find((u: { username: string }) => u.username === 'admin').id;
      assert.equal((await logs.request({ method: 'GET', url: `/api/users/${adminId}`, headers: manager.headers })).statusCode, 404);
      assert.equal((await logs.request({ method: 'DELETE', url: `/api/users/${adminId}`, headers: manager.headers })).statusCode, 404);
      assert.equal(
        (await logs.request({ method: 'GET', url: '/api/users', headers: { ...manager.headers, 'x-tenant-id': 'default' } })).statusCode,
        403,
      );
      assert.equal(
        (await logs.request({ method: 'GET', url: '/api/users', headers: { ...headers, 'x-tenant-id': 'no-such-tenant' } })).statusCode,
        404,
      );
      const managerAudit = await logs.request({ method: 'GET', url: '/api/v1/log-audit/search', headers: manager.headers });
      assert.ok(managerAudit.json().data.every((row: { tenant_id: string }) => row.tenant_id === tenant.id));
      assert.ok(managerAudit.json().total >= 1);

      const renamed = await logs.request({
        method: 'PUT',
        url: `/api/tenants/${tenant.id}`,
        headers,
        payload: { name: `${name}-baru`, retention_days: null },
      });
      assert.equal(renamed.statusCode, 200);
      assert.equal(renamed.json().retention_days, 30);
      assert.equal(
        (await logs.request({ method: 'DELETE', url: `/api/tenants/${tenant.id}`, headers })).statusCode,
        400,
        'still has users',
      );
      assert.equal(
        (await logs.request({ method: 'DELETE', url: `/api/users/${manager.id}`, headers: { ...headers, 'x-tenant-id': tenant.id } }))
          .statusCode,
        204,
      );
      // The tenant's spans and metric points go with it, not only its logs.
      const nowNs = `${BigInt(logs.clock.now()) * 1_000_000n}`;
      const resource = {
        attributes: [
          { key: 'service.name', value: { stringValue: 'dinas-svc' } },
          { key: 'host.name', value: { stringValue: 'dinas-host' } },
        ],
      };
      const intoTenant = { ...headers, 'x-tenant-id': tenant.id };
      const traces = await logs.request({
        method: 'POST',
        url: '/v1/traces',
        headers: intoTenant,
        payload: {
          resourceSpans: [
            {
              resource,
              scopeSpans: [
                {
                  spans: [
                    {
                      traceId: 'd'.repeat(32),
                      spanId: 'e'.repeat(16),
                      name: 'GET /x',
                      kind: 2,
                      startTimeUnixNano: nowNs,
                      endTimeUnixNano: nowNs,
                    },
                  ],
                },
              ],
            },
          ],
        },
      });
      assert.equal(traces.statusCode, 200, traces.body);
      const points = await logs.request({
        method: 'POST',
        url: '/v1/metrics',
        headers: intoTenant,
        payload: {
          resourceMetrics: [
            {
              resource,
              scopeMetrics: [
                { metrics: [{ name: 'system.cpu.load_average.1m', gauge: { dataPoints: [{ timeUnixNano: nowNs, asDouble: 1.5 }] } }] },
              ],
            },
          ],
        },
      });
      assert.equal(points.statusCode, 200, points.body);
      const rowsOf = async (table: 'apm_spans' | 'infra_metric_points') =>
        Number(
          (await sql<{ n: number }>`select count(*) as n from ${sql.table(table)} where tenant_id = ${tenant.id}`.execute(logs.database.db))
            .rows[0]!.n,
        );
      assert.equal(await rowsOf('apm_spans'), 1);
      assert.equal(await rowsOf('infra_metric_points'), 1);
      assert.equal((await logs.request({ method: 'DELETE', url: `/api/tenants/${tenant.id}`, headers })).statusCode, 204);
      assert.equal(await rowsOf('apm_spans'), 0);
      assert.equal(await rowsOf('infra_metric_points'), 0);
      assert.equal((await logs.request({ method: 'GET', url: `/api/tenants/${tenant.id}`, headers })).statusCode, 404);
      assert.equal((await logs.request({ method: 'DELETE', url: '/api/tenants/default', headers })).statusCode, 400);
    });
  });
}
