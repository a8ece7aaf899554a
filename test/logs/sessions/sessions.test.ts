import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DIALECTS } from '../../helpers/databases.js';
import { bearer, LOGS_ADMIN, PASSWORD, startTestLogs, type TestLogs } from '../../helpers/logs.js';

interface SessionRow {
  id: string;
  created_at: string;
  last_used_at: string | null;
  ip: string | null;
  user_agent: string | null;
  method: string | null;
  current: boolean;
}

async function signIn(logs: TestLogs, username: string, agent: string) {
  const response = await logs.request({
    method: 'POST',
    url: '/api/login',
    payload: { username, password: PASSWORD },
    headers: { 'user-agent': agent },
  });
  assert.equal(response.statusCode, 200, response.body);
  return bearer(response.json().token.access_token);
}

async function sessionsOf(logs: TestLogs, headers: Record<string, string>, url = '/api/sessions'): Promise<SessionRow[]> {
  const response = await logs.request({ method: 'GET', url, headers });
  assert.equal(response.statusCode, 200, response.body);
  return response.json().sessions;
}

for (const dialect of DIALECTS) {
  describe(`logs sessions [${dialect}]`, () => {
    let logs: TestLogs;
    before(async () => {
      logs = await startTestLogs(dialect);
    });
    after(async () => logs.close());

    test('a person lists their sessions: created, last used, address, user agent, how, which is this one', async () => {
      const user = await logs.userWith(['logs:read']);
      const laptop = await signIn(logs, user.username, 'Laptop/1.0');
      const phone = await signIn(logs, user.username, 'Phone/2.0');
      const listed = await sessionsOf(logs, laptop);
      const mine = listed.filter((row) => row.user_agent === 'Laptop/1.0' || row.user_agent === 'Phone/2.0');
      assert.equal(mine.length, 2);
      const current = listed.find((row) => row.current)!;
      assert.equal(current.user_agent, 'Laptop/1.0');
      assert.equal(current.ip, '127.0.0.1');
      assert.equal(current.method, 'password');
      assert.ok(current.created_at && current.last_used_at);
      assert.equal(listed.filter((row) => row.current).length, 1);
      assert.equal((await sessionsOf(logs, phone)).find((row) => row.current)!.user_agent, 'Phone/2.0');
    });

    test('"last used" moves at most once a minute per session', async () => {
      const user = await logs.userWith(['logs:read']);
      const headers = await signIn(logs, user.username, 'Clock/1');
      const before = (await sessionsOf(logs, headers)).find((row) => row.current)!.last_used_at!;
      logs.clock.advance(30_000);
      await logs.request({ method: 'GET', url: '/api/me', headers });
      assert.equal((await sessionsOf(logs, headers)).find((row) => row.current)!.last_used_at, before, 'within the minute: no write');
      logs.clock.advance(31_000);
      await logs.request({ method: 'GET', url: '/api/me', headers });
      const moved = (await sessionsOf(logs, headers)).find((row) => row.current)!.last_used_at!;
      assert.equal(moved, new Date(logs.clock.ms).toISOString());
    });

    test('ending one session: its token is refused at once; the others keep working', async () => {
      const user = await logs.userWith(['logs:read']);
      const a = await signIn(logs, user.username, 'A');
      const b = await signIn(logs, user.username, 'B');
      const target = (await sessionsOf(logs, b)).find((row) => row.current)!;
      const ended = await logs.request({ method: 'DELETE', url: `/api/sessions/${target.id}`, headers: a });
      assert.equal(ended.statusCode, 200, ended.body);
      assert.equal((await logs.request({ method: 'GET', url: '/api/me', headers: b })).statusCode, 401);
      assert.equal((await logs.request({ method: 'GET', url: '/api/me', headers: a })).statusCode, 200);
      const again = await logs.request({ method: 'DELETE', url: `/api/sessions/${target.id}`, headers: a });
      assert.equal(again.statusCode, 404);
      const other = await logs.userWith(['logs:read']);
      const someoneElses = (await sessionsOf(logs, other.headers)).find((row) => row.current)!;
      const refused = await logs.request({ method: 'DELETE', url: `/api/sessions/${someoneElses.id}`, headers: a });
      assert.equal(refused.statusCode, 404, "another person's session is not yours to end");
      assert.equal((await logs.request({ method: 'GET', url: '/api/me', headers: other.headers })).statusCode, 200);
    });

    test('ending all others keeps this one', async () => {
      const user = await logs.userWith(['logs:read']);
      const keep = await signIn(logs, user.username, 'Keep');
      const others = [await signIn(logs, user.username, 'X'), await signIn(logs, user.username, 'Y')];
      const response = await logs.request({ method: 'DELETE', url: '/api/sessions', headers: keep });
      assert.equal(response.statusCode, 200);
      assert.equal(response.json().ended, 3, 'two signed in here and the one userWith opened');
      for (const headers of others) assert.equal((await logs.request({ method: 'GET', url: '/api/me', headers })).statusCode, 401);
      assert.equal((await logs.request({ method: 'GET', url: '/api/me', headers: keep })).statusCode, 200);
      assert.deepEqual(
        (await sessionsOf(logs, keep)).map((row) => row.user_agent),
        ['Keep'],
      );
    });

    test("an administrator lists and ends a user's sessions; audited with who ended them", async () => {
      const user = await logs.userWith(['logs:read']);
      const one = await signIn(logs, user.username, 'One');
      await signIn(logs, user.username, 'Two');
      const admin = await logs.admin();
      const listed = await sessionsOf(logs, admin, `/api/users/${user.id}/sessions`);
      assert.ok(listed.length >= 3);
      assert.ok(listed.every((row) => !row.current));
      const target = listed.find((row) => row.user_agent === 'One')!;
      const ended = await logs.request({ method: 'DELETE', url: `/api/users/${user.id}/sessions/${target.id}`, headers: admin });
      assert.equal(ended.statusCode, 200, ended.body);
      assert.equal((await logs.request({ method: 'GET', url: '/api/me', headers: one })).statusCode, 401);
      const all = await logs.request({ method: 'DELETE', url: `/api/users/${user.id}/sessions`, headers: admin });
      assert.equal(all.json().ended, listed.length - 1);
      assert.deepEqual(await sessionsOf(logs, admin, `/api/users/${user.id}/sessions`), []);

      const audit = await logs.request({
        method: 'GET',
        url: '/api/v1/log-audit/search?action=auth.session_end&limit=100',
        headers: admin,
      });
      const rows = (audit.json().data as { actor: string; target_id: string; details: Record<string, unknown> }[]).filter(
        (row) => row.target_id === user.id,
      );
      assert.ok(rows.some((row) => row.actor === LOGS_ADMIN && row.details.by === 'administrator' && row.details.session === target.id));
      assert.ok(rows.some((row) => row.actor === LOGS_ADMIN && row.details.scope === 'all'));
    });

    test("without users:manage, or on a more powerful user, or another tenant's: refused", async () => {
      const user = await logs.userWith(['logs:read']);
      const viewer = await logs.userWith(['logs:read']);
      const denied = await logs.request({ method: 'GET', url: `/api/users/${user.id}/sessions`, headers: viewer.headers });
      assert.equal(denied.statusCode, 403);
      const manager = await logs.userWith(['users:manage']);
      const admins = await logs.request({ method: 'GET', url: '/api/users', headers: await logs.admin() });
      const adminId = (admins.json().users as { id: string; username: string }[]).find((row) => row.username === LOGS_ADMIN)?.id;
      assert.ok(adminId, admins.body.slice(0, 200));
      const upward = await logs.request({ method: 'DELETE', url: `/api/users/${adminId}/sessions`, headers: manager.headers });
      assert.equal(upward.statusCode, 403, 'not the sessions of someone more powerful');
      const tenant = await logs.request({
        method: 'POST',
        url: '/api/tenants',
        headers: await logs.admin(),
        payload: { name: 'elsewhere' },
      });
      const stranger = await logs.userWith(['logs:read'], { tenantId: tenant.json().id });
      const across = await logs.request({ method: 'GET', url: `/api/users/${stranger.id}/sessions`, headers: manager.headers });
      assert.equal(across.statusCode, 404);
    });
  });
}
