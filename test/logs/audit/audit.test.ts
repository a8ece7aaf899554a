import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { parse } from 'csv-parse/sync';
import ExcelJS from 'exceljs';
import { DIALECTS } from '../../helpers/databases.js';
import { startTestLogs, uniqueName, type TestLogs } from '../../helpers/logs.js';

const BULK_ROWS = 2_100;

for (const dialect of DIALECTS) {
  describe(`logs audit [${dialect}]`, () => {
    let logs: TestLogs;
    let headers: Record<string, string>;
    before(async () => {
      logs = await startTestLogs(dialect);
      headers = await logs.admin();
      // Rows written straight to the table (more than two export pages), one of them hostile.
      const base = Date.parse('2026-03-01T00:00:00.000Z');
      const rows = Array.from({ length: BULK_ROWS }, (_, i) => ({
        id: randomUUID(),
        tenant_id: 'default',
        at: new Date(base + i * 1000).toISOString(),
        actor_id: null,
        actor: i === 0 ? '=HYPERLINK("http://evil.example","click")' : `batch-${i % 7}`,
        action: 'batch.event',
        target_type: null,
        target_id: null,
        outcome: 'success' as const,
        ip: i === 1 ? '+62 21 555' : '10.0.0.1',
        user_agent: i === 2 ? '@SUM(A1:A2)' : null,
        request_id: null,
        details: i === 3 ? JSON.stringify({ note: '-2+3' }) : null,
      }));
      for (let i = 0; i < rows.length; i += 500)
        await logs.database.db
          .insertInto('logs_audit')
          .values(rows.slice(i, i + 500))
          .execute();
    });
    after(async () => logs.close());

    test('search: filters by action, actor, text and time; paginated; newest first', async () => {
      const byAction = await logs.request({ method: 'GET', url: '/api/v1/log-audit/search?action=batch.event&limit=10&page=3', headers });
      assert.equal(byAction.statusCode, 200);
      const body = byAction.json();
      assert.equal(body.total, BULK_ROWS);
      assert.equal(body.page, 3);
      assert.equal(body.limit, 10);
      assert.equal(body.pages, 210);
      assert.equal(body.data.length, 10);
      assert.equal(body.data[0].at, new Date(Date.parse('2026-03-01T00:00:00.000Z') + (BULK_ROWS - 21) * 1000).toISOString());

      const byActor = await logs.request({ method: 'GET', url: '/api/v1/log-audit/search?actor=batch-3', headers });
      assert.equal(byActor.json().total, 300);
      const text = await logs.request({ method: 'GET', url: `/api/v1/log-audit/search?q=${encodeURIComponent('EVIL.example')}`, headers });
      assert.equal(text.json().total, 1);
      const range = await logs.request({
        method: 'GET',
        url: '/api/v1/log-audit/search?action=batch.event&from=2026-03-01T00:00:10Z&to=2026-03-01T00:00:20Z',
        headers,
      });
      assert.equal(range.json().total, 10);
      const wildcard = await logs.request({ method: 'GET', url: '/api/v1/log-audit/search?q=%25', headers });
      assert.equal(wildcard.json().total, 0, 'a % in q matches a literal %');
      assert.equal((await logs.request({ method: 'GET', url: '/api/v1/log-audit/search?from=soon', headers })).statusCode, 400);
      assert.equal((await logs.request({ method: 'GET', url: '/api/v1/log-audit/search?limit=5000', headers })).statusCode, 400);
    });

    test('CSV export: streamed, parsed back whole, formula cells escaped, correct headers, audited', async () => {
      const response = await logs.request({ method: 'GET', url: '/api/v1/log-audit/export/csv?action=batch.event', headers });
      assert.equal(response.statusCode, 200);
      assert.equal(response.headers['content-type'], 'text/csv; charset=utf-8');
      assert.match(String(response.headers['content-disposition']), /^attachment; filename="audit-[\w-]+\.csv"$/);
      const records = parse(response.body, { columns: true, bom: true }) as Record<string, string>[];
      assert.equal(records.length, BULK_ROWS);
      assert.deepEqual(Object.keys(records[0]!), [
        'at',
        'actor',
        'actor_id',
        'action',
        'outcome',
        'target_type',
        'target_id',
        'ip',
        'user_agent',
        'request_id',
        'details',
        'tenant_id',
      ]);
      assert.equal(new Set(records.map((r) => r.at)).size, BULK_ROWS, 'no row twice across pages');
      const hostile = records.find((r) => r.actor!.includes('HYPERLINK'))!;
      assert.equal(hostile.actor, `'=HYPERLINK("http://evil.example","click")`);
      assert.ok(records.some((r) => r.ip === "'+62 21 555"));
      assert.ok(records.some((r) => r.user_agent === "'@SUM(A1:A2)"));
      for (const record of records)
        for (const cell of Object.values(record)) assert.ok(!/^[=+\-@\t\r]/.test(cell), `unescaped cell ${cell}`);

      const audited = await logs.request({ method: 'GET', url: '/api/v1/log-audit/search?action=audit.export', headers });
      assert.equal(audited.json().data[0].details.format, 'csv');
    });

    test('Excel export: a real XLSX that exceljs opens, every row, correct headers', async () => {
      const response = await logs.request({ method: 'GET', url: '/api/v1/log-audit/export/excel?action=batch.event', headers });
      assert.equal(response.statusCode, 200);
      assert.equal(response.headers['content-type'], 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
      assert.match(String(response.headers['content-disposition']), /^attachment; filename="audit-[\w-]+\.xlsx"$/);
      const workbook = new ExcelJS.Workbook();
      await workbook.xlsx.load(response.rawPayload as never);
      const sheet = workbook.getWorksheet('Audit')!;
      assert.equal(sheet.rowCount, BULK_ROWS + 1);
      assert.equal(sheet.getRow(1).getCell(1).value, 'at');
      assert.equal(sheet.getRow(1).getCell(4).value, 'action');
      assert.equal(sheet.getRow(2).getCell(4).value, 'batch.event');
      const actors = Array.from({ length: BULK_ROWS }, (_, i) => sheet.getRow(i + 2).getCell(2).value);
      // In XLSX the hostile text is a plain string cell, never a formula.
      assert.ok(actors.includes('=HYPERLINK("http://evil.example","click")'));
    });

    test('audit rows stay within their tenant', async () => {
      const tenant = (await logs.request({ method: 'POST', url: '/api/tenants', headers, payload: { name: uniqueName('t') } })).json();
      const auditor = await logs.userWith(['audit:read', 'audit:export'], { tenantId: tenant.id });
      const search = await logs.request({ method: 'GET', url: '/api/v1/log-audit/search?action=batch.event', headers: auditor.headers });
      assert.equal(search.json().total, 0);
      const csv = await logs.request({ method: 'GET', url: '/api/v1/log-audit/export/csv', headers: auditor.headers });
      const records = parse(csv.body, { columns: true, bom: true }) as Record<string, string>[];
      assert.ok(records.length >= 1);
      assert.ok(records.every((r) => r.tenant_id === tenant.id));
    });
  });
}
