import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadGatewayConfig } from '../../../src/gateway/config.js';
import { loadLogsConfig } from '../../../src/logs/config.js';
import { ConfigError } from '../../../src/shared/config/env.js';
import { DIALECTS } from '../../helpers/databases.js';
import { eventually } from '../../helpers/eventually.js';
import { startTestGateway, type TestGateway } from '../../helpers/gateway.js';
import { listenOnLoopback } from '../../helpers/listen.js';
import { bearer, startTestLogs, type TestLogs } from '../../helpers/logs.js';

const KEY = 'k'.repeat(20) + 'ShipperKey0123456789';
const otlpLog = (body: string) => ({
  resourceLogs: [
    {
      resource: { attributes: [{ key: 'service.name', value: { stringValue: 'key-test' } }] },
      scopeLogs: [{ logRecords: [{ timeUnixNano: String(Date.now() * 1e6), severityText: 'INFO', body: { stringValue: body } }] }],
    },
  ],
});

/**
 * The gateway's shipper authenticates with a key (LOGS_GATEWAY_SHIPPER_KEY / GATEWAY_TELEMETRY_KEY)
 * that is outside the login lockout: a stranger's wrong passwords for the shipper's (guessable)
 * name lock that name, and the gateway's telemetry is still accepted. Real logs service listening
 * on loopback, real gateway shipping to it, both dialects.
 */
for (const dialect of DIALECTS) {
  describe(`the gateway's shipper key [${dialect}]`, () => {
    let logs: TestLogs;
    let logsUrl: string;
    let gateway: TestGateway;
    before(async () => {
      // The lockout as deployed: five failures per name.
      logs = await startTestLogs(dialect, {
        LOGS_SELF_METRICS_INTERVAL: '0',
        LOGS_GATEWAY_SHIPPER_KEY: KEY,
        LOGS_LOGIN_MAX_FAILURES_PER_USERNAME: '5',
      });
      logsUrl = `http://127.0.0.1:${await listenOnLoopback(logs.app)}`;
      gateway = await startTestGateway('sqlite', {
        GATEWAY_TELEMETRY_URL: logsUrl,
        GATEWAY_TELEMETRY_KEY: KEY,
        GATEWAY_TELEMETRY_INTERVAL: '20ms',
      });
    });
    after(async () => {
      await gateway.close();
      await logs.close();
    });

    test("six wrong passwords for the shipper's name lock the name, and the gateway's telemetry is still accepted", async () => {
      const basic = `Basic ${Buffer.from('gateway:Wrong#Pass1').toString('base64')}`;
      for (let i = 0; i < 6; i += 1) {
        await fetch(`${logsUrl}/api/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ username: 'gateway', password: 'Wrong#Pass1' }),
        });
        const ingest = await fetch(`${logsUrl}/v1/logs`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: basic },
          body: JSON.stringify(otlpLog('stranger')),
        });
        assert.ok([401, 429].includes(ingest.status), String(ingest.status));
      }
      const locked = await fetch(`${logsUrl}/api/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'gateway', password: 'Wrong#Pass1' }),
      });
      assert.equal(locked.status, 429, 'the name is locked: the attack took place');

      const withKey = await fetch(`${logsUrl}/v1/logs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
        body: JSON.stringify(otlpLog('shipped with the key')),
      });
      assert.equal(withKey.status, 200, await withKey.text());

      // And the gateway's own shipping, through its real exporter.
      const token = await gateway.login();
      assert.equal(
        (await gateway.request({ method: 'GET', url: '/api/v1/auth/profile', headers: { authorization: token } })).statusCode,
        200,
      );
      const headers = await logs.admin();
      const range = { from: new Date(Date.now() - 3_600_000).toISOString(), to: new Date(Date.now() + 3_600_000).toISOString() };
      await eventually(async () => {
        const search = await logs.request({
          method: 'POST',
          url: '/api/v1/logs/list/paginate',
          headers,
          payload: { query: 'service:gerbang-gateway', timeRange: range, limit: 100 },
        });
        const messages = search.json().data.map((entry: { message: string }) => entry.message);
        assert.ok(messages.includes('GET /api/v1/auth/profile 200'), messages.join(' | '));
      });
      assert.equal(gateway.telemetry.stats().logs.failedBatches, 0, 'no batch was refused');
    });

    test('the key is ingestion only, and a wrong key is refused', async () => {
      const wrong = await fetch(`${logsUrl}/v1/logs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}x` },
        body: JSON.stringify(otlpLog('x')),
      });
      assert.equal(wrong.status, 401);
      for (const url of ['/api/users', '/api/me', '/api/roles']) {
        assert.equal((await logs.request({ method: 'GET', url, headers: bearer(KEY) })).statusCode, 401, url);
      }
      const search = await logs.request({
        method: 'POST',
        url: '/api/v1/logs/list/paginate',
        headers: bearer(KEY),
        payload: { query: '*', limit: 1 },
      });
      assert.equal(search.statusCode, 401);
    });
  });
}

describe('shipper key settings', () => {
  test('a short key, or a key together with a username/password, stops the start with the variable named', () => {
    const refused = (load: () => unknown, variable: string) =>
      assert.throws(load, (error: unknown) => error instanceof ConfigError && error.message.includes(variable));
    refused(() => loadLogsConfig({ LOGS_GATEWAY_SHIPPER_KEY: 'short' }), 'LOGS_GATEWAY_SHIPPER_KEY');
    refused(() => loadGatewayConfig({ GATEWAY_TELEMETRY_KEY: 'short' }), 'GATEWAY_TELEMETRY_KEY');
    refused(
      () =>
        loadGatewayConfig({
          GATEWAY_TELEMETRY_KEY: KEY,
          GATEWAY_TELEMETRY_USERNAME: 'gateway',
          GATEWAY_TELEMETRY_PASSWORD: 'Ship#Secret1',
        }),
      'GATEWAY_TELEMETRY_KEY',
    );
    for (const bad of ['-0.1', '1.5', 'half', '1e-3']) {
      refused(() => loadGatewayConfig({ GATEWAY_TELEMETRY_SAMPLE_RATIO: bad }), 'GATEWAY_TELEMETRY_SAMPLE_RATIO');
    }
    assert.equal(loadGatewayConfig({ GATEWAY_TELEMETRY_SAMPLE_RATIO: '0.25' }).telemetry.sampleRatio, 0.25);
    assert.equal(loadGatewayConfig({}).telemetry.sampleRatio, 0.1, 'a tenth of traces by default (and every failed one)');
  });
});
