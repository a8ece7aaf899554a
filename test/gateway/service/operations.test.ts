import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, test } from 'node:test';
import { buildGateway } from '../../../src/gateway/app.js';
import { loadGatewayConfig } from '../../../src/gateway/config.js';
import { migrateToLatest, migrationSequence } from '../../../src/shared/db/migrator.js';
import { openDatabase } from '../../../src/shared/db/database.js';
import { createTestDatabase, DIALECTS } from '../../helpers/databases.js';
import { ADMIN_PASSWORD, startTestGateway } from '../../helpers/gateway.js';

describe('gateway operations', () => {
  test('logs are JSON and never contain passwords or tokens', async () => {
    const database = await createTestDatabase('sqlite');
    const stream = new PassThrough();
    const lines: string[] = [];
    stream.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));
    const config = loadGatewayConfig({ GATEWAY_DATABASE_URL: database.url, GATEWAY_ADMIN_PASSWORD: ADMIN_PASSWORD, LOG_LEVEL: 'trace' });
    const { app } = await buildGateway({ config, logStream: stream });
    const login = await app.inject({
      method: 'POST',
      url: '/api/v1/auth/login?kata_sandi=InUrl#Secret1',
      payload: { no_pegawai: 'admin', kata_sandi: ADMIN_PASSWORD },
    });
    const token = login.json().data.token as string;
    await app.inject({
      method: 'GET',
      url: '/api/v1/auth/profile',
      headers: { authorization: token, cookie: 'access_token=secretcookie' },
    });
    await app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { no_pegawai: 'admin', kata_sandi: 'Wrong#Secret1' } });
    await app.close();
    await database.drop();
    assert.ok(lines.length > 3);
    for (const line of lines) JSON.parse(line);
    const all = lines.join('\n');
    for (const secret of [ADMIN_PASSWORD, token.slice(3, -5), 'InUrl#Secret1', 'Wrong#Secret1', 'secretcookie'])
      assert.ok(!all.includes(secret), `log holds ${secret.slice(0, 8)}…`);
  });

  test('CORS answers only the configured origins', async () => {
    const gw = await startTestGateway('sqlite', { GATEWAY_CORS_ORIGINS: 'https://portal.example.go.id' });
    const preflight = (origin: string) =>
      gw.request({ method: 'OPTIONS', url: '/api/v1/auth/login', headers: { origin, 'access-control-request-method': 'POST' } });
    assert.equal((await preflight('https://portal.example.go.id')).headers['access-control-allow-origin'], 'https://portal.example.go.id');
    assert.equal((await preflight('https://evil.example.com')).headers['access-control-allow-origin'], undefined);
    await gw.close();
    const closed = await startTestGateway('sqlite');
    const response = await closed.request({ method: 'GET', url: '/healthz', headers: { origin: 'https://portal.example.go.id' } });
    assert.equal(response.headers['access-control-allow-origin'], undefined, 'no CORS by default');
    await closed.close();
  });

  for (const dialect of DIALECTS) {
    test(`a failed migration throws, naming the migration [${dialect}]`, async () => {
      const database = await createTestDatabase(dialect);
      const { db, close } = await openDatabase(database.url);
      const broken = {
        '0001_ok': { up: async (kdb: typeof db) => void (await kdb.schema.createTable('ok_table').addColumn('id', 'text').execute()) },
        '0002_broken': { up: async (kdb: typeof db) => void (await kdb.schema.createTable('ok_table').addColumn('id', 'text').execute()) },
      };
      await assert.rejects(migrateToLatest(db, migrationSequence(broken), 'probe'), /0002_broken/);
      await close();
      await database.drop();
    });

    test(`the first administrator is created once, and readiness reports the database [${dialect}]`, async () => {
      const gw = await startTestGateway(dialect);
      const list = await gw.request({ method: 'GET', url: '/api/v1/pengguna', headers: { authorization: await gw.login() } });
      assert.equal(list.json().info.total, 1);
      assert.equal(list.json().data[0].hak_akses_id, 'admin');
      assert.equal((await gw.request({ method: 'GET', url: '/readyz' })).statusCode, 200);
      await gw.database.close();
      const notReady = await gw.request({ method: 'GET', url: '/readyz' });
      assert.equal(notReady.statusCode, 503);
      assert.equal(notReady.json().status, false);
      await gw.app.close().catch(() => {});
    });
  }
});
