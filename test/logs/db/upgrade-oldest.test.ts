/**
 * The oldest supported data directory (test/helpers/oldest-data.ts: the first complete version's
 * schema, with its tenants, users, events, alert rules, dashboard counts and gateway users) upgraded
 * to the current one on both dialects: everything is still there and answers through the API.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { buildLogsService, type LogsService } from '../../../src/logs/app.js';
import { loadLogsConfig } from '../../../src/logs/config.js';
import { logsMigrations } from '../../../src/logs/db/migrations/index.js';
import { buildGateway, type Gateway } from '../../../src/gateway/app.js';
import { loadGatewayConfig } from '../../../src/gateway/config.js';
import { gatewayMigrations } from '../../../src/gateway/db/migrations/index.js';
import { hashPassword } from '../../../src/shared/auth/passwords.js';
import { openDatabase } from '../../../src/shared/db/database.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../../helpers/databases.js';
import { LOGS_ADMIN_PASSWORD, PASSWORD } from '../../helpers/logs.js';
import {
  insertOldEvents,
  migrateAsOlderVersion,
  OLD_T0,
  OLDEST_GATEWAY_HISTORY,
  OLDEST_LOGS_HISTORY,
  oldMessage,
} from '../../helpers/oldest-data.js';

const EVENTS = 600;
const CREATED = '2026-11-20T00:00:00.000Z';

for (const dialect of DIALECTS) {
  describe(`upgrade from the oldest data directory [${dialect}]`, () => {
    let logsDb: TestDatabase;
    let gatewayDb: TestDatabase;
    let logs: LogsService;
    let gateway: Gateway;

    before(async () => {
      logsDb = await createTestDatabase(dialect);
      gatewayDb = await createTestDatabase(dialect);
      const passwordHash = await hashPassword(PASSWORD);

      const oldLogs = await openDatabase<any>(logsDb.url);
      await migrateAsOlderVersion(oldLogs.db, logsMigrations, 'logs', OLDEST_LOGS_HISTORY);
      const { db } = oldLogs;
      await sql`INSERT INTO logs_tenants (id, name, retention_days, created_at, updated_at)
        VALUES ('acme', 'Acme', 3650, ${CREATED}, ${CREATED})`.execute(db);
      await sql`INSERT INTO logs_users (id, tenant_id, username, email, password_hash, created_at, updated_at)
        VALUES ('u-old', 'acme', 'old.viewer', 'old@acme.test', ${passwordHash}, ${CREATED}, ${CREATED})`.execute(db);
      await sql`INSERT INTO logs_users (id, tenant_id, username, email, password_hash, created_at, updated_at)
        VALUES ('a-old', 'default', 'old.admin', 'admin@acme.test', ${passwordHash}, ${CREATED}, ${CREATED})`.execute(db);
      await sql`INSERT INTO logs_user_roles (user_id, role_id) VALUES ('u-old', 'viewer'), ('a-old', 'admin')`.execute(db);
      await sql`INSERT INTO logs_alert_rules (id, tenant_id, name, query, filters, window_ms, condition, threshold, interval_ms,
          severity, labels, enabled, created_at, updated_at)
        VALUES ('r-old', 'acme', 'disk full', 'disk AND full', '[]', 300000, 'above', 10, 60000, 'critical', '{"team":"ops"}', 1,
          ${CREATED}, ${CREATED})`.execute(db);
      await sql`INSERT INTO logs_ingest_source_minutes (tenant_id, minute, source, received, stored, rejected)
        VALUES ('acme', ${OLD_T0}, 'bulk', 600, 600, 0)`.execute(db);
      await insertOldEvents(db, dialect, 'acme', EVENTS);
      await oldLogs.close();

      const oldGateway = await openDatabase<any>(gatewayDb.url);
      await migrateAsOlderVersion(oldGateway.db, gatewayMigrations, 'gateway', OLDEST_GATEWAY_HISTORY);
      const { rows } = await sql<{ id: string }>`SELECT id FROM hak_akses ORDER BY is_admin LIMIT 1`.execute(oldGateway.db);
      await sql`INSERT INTO users (id, no_pegawai, nama, email, tipe_pegawai, hak_akses_id, password_hash, password_changed_at,
          created_at, updated_at)
        VALUES ('g-old', '19870001', 'Pegawai Lama', 'lama@instansi.test', 'PNS', ${rows[0]!.id}, ${passwordHash}, ${new Date().toISOString()},
          ${CREATED}, ${CREATED})`.execute(oldGateway.db);
      await oldGateway.close();

      // The current version starts on them: every later migration runs.
      logs = await buildLogsService({
        config: loadLogsConfig({
          LOGS_DATABASE_URL: logsDb.url,
          LOGS_ADMIN_PASSWORD,
          LOGS_MFA_REQUIRED_PERMISSIONS: 'none',
          LOG_LEVEL: 'silent',
          LOGS_RETENTION_INTERVAL: '0',
          LOGS_SELF_METRICS_INTERVAL: '0',
        }),
      });
      gateway = await buildGateway({
        config: loadGatewayConfig({
          GATEWAY_DATABASE_URL: gatewayDb.url,
          GATEWAY_ADMIN_PASSWORD: LOGS_ADMIN_PASSWORD,
          LOG_LEVEL: 'silent',
        }),
      });
      await gateway.app.ready();
    });
    after(async () => {
      await logs?.app.close();
      await gateway?.app.close();
      await logsDb?.drop();
      await gatewayDb?.drop();
    });

    const loginAs = async (username: string, password: string) => {
      const response = await logs.app.inject({ method: 'POST', url: '/api/login', payload: { username, password } });
      assert.equal(response.statusCode, 200, response.body);
      return { authorization: `Bearer ${response.json().token.access_token as string}` };
    };

    test('the old user logs in and finds every old event, by words, fields and time', async () => {
      const headers = await loginAs('old.viewer', PASSWORD);
      const search = async (q: string) => {
        const timeRange = { from: new Date(OLD_T0).toISOString(), to: new Date(OLD_T0 + EVENTS * 1000).toISOString() };
        const response = await logs.app.inject({
          method: 'POST',
          url: '/api/v1/logs/list/paginate',
          headers,
          payload: { query: q, timeRange, limit: 1, trackTotal: true },
        });
        assert.equal(response.statusCode, 200, response.body);
        return response.json() as { total: number };
      };
      assert.equal((await search('')).total, EVENTS);
      assert.equal((await search('full')).total, Math.ceil(EVENTS / 7));
      assert.equal((await search('level:error')).total, Math.floor(EVENTS / 3));
      assert.equal((await search('status:203')).total, EVENTS / 4);
      assert.equal((await search(`"${oldMessage(42)}"`)).total, 1);
    });

    test('tenants, alert rules and dashboard counts are still there', async () => {
      const admin = await loginAs('old.admin', PASSWORD);
      const tenants = await logs.app.inject({ method: 'GET', url: '/api/tenants', headers: admin });
      assert.equal(tenants.statusCode, 200, tenants.body);
      assert.ok(JSON.stringify(tenants.json()).includes('"Acme"'));
      const rules = await logs.app.inject({ method: 'GET', url: '/api/v1/alerts/rules', headers: await loginAs('old.viewer', PASSWORD) });
      assert.equal(rules.statusCode, 200, rules.body);
      assert.ok(JSON.stringify(rules.json()).includes('"disk full"'));
      const { rows } = await sql<{ received: number }>`SELECT received FROM logs_ingest_source_minutes WHERE tenant_id = 'acme'`.execute(
        logs.database.db,
      );
      assert.deepEqual(
        rows.map((row) => Number(row.received)),
        [600],
      );
    });

    test('the old gateway user logs in', async () => {
      const response = await gateway.app.inject({
        method: 'POST',
        url: '/api/v1/auth/login',
        payload: { no_pegawai: '19870001', kata_sandi: PASSWORD },
      });
      assert.equal(response.statusCode, 200, response.body);
    });
  });
}
