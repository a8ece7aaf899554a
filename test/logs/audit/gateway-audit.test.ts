import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DIALECTS } from '../../helpers/databases.js';
import { LOGS_ADMIN, startTestLogs, type TestLogs } from '../../helpers/logs.js';

/** One OTLP/JSON log record shaped like the gateway's audit events. */
function auditExport(action: string, at: number) {
  const attr = (key: string, value: string) => ({ key, value: { stringValue: value } });
  return {
    resourceLogs: [
      {
        resource: { attributes: [attr('service.name', 'gerbang-gateway')] },
        scopeLogs: [
          {
            scope: { name: 'gerbang-gateway' },
            logRecords: [
              {
                timeUnixNano: String(at * 1_000_000),
                severityText: 'INFO',
                body: { stringValue: `${action} success` },
                attributes: [
                  attr('log.type', 'audit'),
                  attr('event.action', action),
                  attr('event.outcome', 'success'),
                  attr('audit.actor', '19800101'),
                  attr('client.address', '10.1.2.3'),
                ],
              },
            ],
          },
        ],
      },
    ],
  };
}

const basic = (username: string, password: string) => ({
  authorization: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`,
});

for (const dialect of DIALECTS) {
  describe(`gateway audit events in the logs audit trail [${dialect}]`, () => {
    let logs: TestLogs;
    before(async () => {
      logs = await startTestLogs(dialect);
    });
    after(async () => logs.close());

    const auditActions = async () =>
      (await logs.request({ method: 'GET', url: '/api/v1/log-audit/search?q=gateway.&limit=100', headers: await logs.admin() }))
        .json()
        .data.map((row: { action: string }) => row.action);

    test("records shipped by the gateway's ingest account join the audit trail with their own time", async () => {
      const account = await logs.provisionIngestAccount('gateway');
      const at = logs.clock.ms - 5_000;
      const response = await logs.request({
        method: 'POST',
        url: '/v1/logs',
        headers: basic(account.username, account.password),
        payload: auditExport('user.delete', at),
      });
      assert.equal(response.statusCode, 200);
      const rows = (
        await logs.request({ method: 'GET', url: '/api/v1/log-audit/search?action=gateway.user.delete', headers: await logs.admin() })
      ).json().data;
      assert.equal(rows.length, 1);
      assert.equal(rows[0].actor, '19800101');
      assert.equal(rows[0].ip, '10.1.2.3');
      assert.equal(rows[0].at, new Date(at).toISOString());
      const again = await logs.provisionIngestAccount('gateway');
      assert.notEqual(again.password, account.password, 'a new password at every start');
      assert.equal(
        (
          await logs.request({
            method: 'POST',
            url: '/v1/logs',
            headers: basic('gateway', account.password),
            payload: auditExport('x', at),
          })
        ).statusCode,
        401,
        'the old one is void',
      );
    });

    test("any other account's audit-shaped records stay plain logs", async () => {
      const shipper = await logs.userWith(['logs:write']);
      const response = await logs.request({
        method: 'POST',
        url: '/v1/logs',
        headers: shipper.headers,
        payload: auditExport('user.forged', logs.clock.ms),
      });
      assert.equal(response.statusCode, 200);
      assert.ok(!(await auditActions()).includes('gateway.user.forged'));
    });

    test('the ingest account never takes over an existing account of the same name', async () => {
      await assert.rejects(logs.provisionIngestAccount(LOGS_ADMIN), /not an ingest-only account/);
    });
  });
}
