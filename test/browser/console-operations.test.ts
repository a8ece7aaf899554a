// The operations pages in Chromium against a fresh `npm start` on SQLite: alerts (acknowledge,
// silence, resolve as the state machine allows, a refused change showing the API's message, active
// and all, the rules), the four dashboards refreshing, the audit trail with its CSV and Excel exports
// saved to disk and opened, APM (the service map as a graph, traces, a waterfall) and infrastructure
// (hosts, containers, Kubernetes answering 503 "not configured"). axe-core and a screenshot on each.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse } from 'csv-parse/sync';
import ExcelJS from 'exceljs';
import type { Browser, Page } from 'puppeteer-core';
import { eventually } from '../helpers/eventually.js';
import {
  ADMIN,
  ADMIN_PASSWORD,
  assertAccessible,
  hashParams,
  launchChromium,
  newPage,
  saveDownloads,
  screenshot,
  signIn,
  startSystem,
  textOf,
  type System,
} from './harness.js';

const MARK = `o${Date.now().toString(36)}`;
const ns = (ms: number) => `${BigInt(ms) * 1_000_000n}`;
const attributes = (record: Record<string, string>) =>
  Object.entries(record).map(([key, value]) => ({ key, value: { stringValue: value } }));

interface Alert {
  id: string;
  rule_name: string;
  state: string;
  acknowledged_by: string | null;
}

describe('console operations pages in Chromium', { timeout: 900_000 }, () => {
  let system: System;
  let browser: Browser;
  let page: Page & { problems: string[] };

  /** The row of an alert in the table on screen. */
  const row = (id: string) => `#alerts-table tr[data-alert-id="${id}"]`;
  const stateOf = (id: string) => page.$eval(`${row(id)} .badge[class*="state-"]`, (node) => node.className.replace(/.*state-/, ''));

  before(async () => {
    browser = await launchChromium();
    // Alert rules evaluated every second; no cluster (the Kubernetes views answer 503).
    system = await startSystem({ LOGS_ALERTS_EVAL_INTERVAL: '1s', K8S_ENABLED: 'false' });
    const now = Date.now();
    await system.api.ship(
      Array.from({ length: 30 }, (_, i) => ({
        '@timestamp': new Date(now - i * 10_000).toISOString(),
        message: `${MARK} ${i % 2 ? 'alpha' : 'beta'} event ${i}`,
        service: i % 3 ? 'checkout' : 'payments',
        level: i % 5 ? 'info' : 'error',
      })),
    );
    page = await newPage(browser);
    await signIn(page, system.logs, ADMIN, ADMIN_PASSWORD);
  });
  after(async () => {
    await browser?.close();
    await system?.stop();
  });

  test('alerts: acknowledge, silence and resolve as the state machine allows; a refused change shows the API message; rules listed', async () => {
    for (const [name, word, severity] of [
      [`${MARK} alpha rule`, 'alpha', 'high'],
      [`${MARK} beta rule`, 'beta', 'critical'],
    ] as const)
      await system.api.asAdmin(
        'POST',
        '/api/v1/alerts/rules',
        { name, query: `"${MARK} ${word}"`, window: '1h', condition: { type: 'above', threshold: 0 }, interval: '5s', severity },
        201,
      );
    // The evaluator opens both alerts within a few seconds (it runs in the service, on its clock).
    const [alpha, beta] = await eventually(
      async () => {
        const active = (await system.api.asAdmin('GET', '/api/v1/alerts/active')).data as Alert[];
        const found = [`${MARK} alpha rule`, `${MARK} beta rule`].map((name) => active.find((a) => a.rule_name === name));
        assert.ok(found.every(Boolean), JSON.stringify(active));
        return found as Alert[];
      },
      60_000,
      500,
    );

    await page.goto(`${system.logs}/console/#/alerts`);
    await page.waitForSelector(row(alpha!.id));
    assert.equal(await stateOf(alpha!.id), 'firing');
    await assertAccessible(page, 'alerts');
    await screenshot(page, 'alerts');

    // Acknowledge: the API records who.
    await page.click(`${row(alpha!.id)} button.to-acknowledged`);
    await page.waitForFunction((selector) => document.querySelector(`${selector} .state-acknowledged`) !== null, {}, row(alpha!.id));
    const acknowledged = (await system.api.asAdmin('GET', `/api/v1/alerts/${alpha!.id}`)) as Alert;
    assert.equal(acknowledged.state, 'acknowledged');
    assert.equal(acknowledged.acknowledged_by, ADMIN);
    // From acknowledged, acknowledging again is not offered.
    assert.equal(await page.$(`${row(alpha!.id)} button.to-acknowledged`), null);

    // Someone else resolves beta meanwhile; acknowledging it from the stale page is refused by the API.
    await system.api.asAdmin('POST', `/api/v1/alerts/${beta!.id}/status`, { status: 'resolved' });
    const refused = page.waitForResponse((r) => r.url().endsWith(`/api/v1/alerts/${beta!.id}/status`));
    await page.click(`${row(beta!.id)} button.to-acknowledged`);
    assert.equal((await refused).status(), 409);
    await page.waitForSelector(`${row(beta!.id)} .row-message [role=alert]`);
    assert.match(
      await textOf(page, `${row(beta!.id)} .row-message`),
      /invalid status transition: an alert that is resolved cannot become acknowledged/,
    );
    await screenshot(page, 'alerts-refused');

    // Silence alpha for an hour: it stays on the active list, marked silenced, with un-silence and
    // resolve offered; in "all" it is silenced until then.
    await page.select(`${row(alpha!.id)} select.silence-for`, '3600000');
    await page.click(`${row(alpha!.id)} button.to-silenced`);
    await page.waitForFunction((selector) => document.querySelector(`${selector} .state-silenced`) !== null, {}, row(alpha!.id));
    assert.deepEqual(
      await page.$$eval(`${row(alpha!.id)} .alert-actions button`, (buttons) => buttons.map((b) => b.className)),
      ['to-firing', 'to-silenced', 'to-resolved'],
      'on the Active tab: un-silence, silence longer, resolve',
    );
    await page.click('#tab-all');
    // Resolved beta is on "all" only: its row says the list was drawn (alpha's is on both tabs).
    await page.waitForSelector(row(beta!.id));
    assert.equal(await stateOf(alpha!.id), 'silenced');
    assert.equal(await stateOf(beta!.id), 'resolved');
    assert.equal(await page.$(`${row(beta!.id)} .alert-actions button`), null, 'resolved is final: nothing offered');
    const offered = await page.$$eval(`${row(alpha!.id)} .alert-actions button`, (buttons) => buttons.map((b) => b.className));
    assert.deepEqual(offered, ['to-firing', 'to-silenced', 'to-resolved']);
    await assertAccessible(page, 'all alerts');
    await screenshot(page, 'alerts-all');

    await page.click(`${row(alpha!.id)} button.to-resolved`);
    await page.waitForFunction((selector) => document.querySelector(`${selector} .state-resolved`) !== null, {}, row(alpha!.id));
    assert.equal(((await system.api.asAdmin('GET', `/api/v1/alerts/${alpha!.id}`)) as Alert).state, 'resolved');

    await page.click('#tab-rules');
    await page.waitForSelector('#rules-table');
    const rules = await page.$$eval('#rules-table tbody tr td:first-child', (cells) => cells.map((cell) => cell.textContent));
    assert.ok(rules.includes(`${MARK} alpha rule`) && rules.includes(`${MARK} beta rule`), rules.join(', '));
    // Disabling a rule: the API's rule says so, and the button now offers the opposite.
    const betaRule = async () =>
      ((await system.api.asAdmin('GET', '/api/v1/alerts/rules')).data as { id: string; name: string; enabled: boolean }[]).find(
        (rule) => rule.name === `${MARK} beta rule`,
      )!;
    const ruleRow = `#rules-table tr[data-rule-id="${(await betaRule()).id}"]`;
    await page.click(`${ruleRow} button.toggle-rule`);
    await page.waitForFunction(
      (selector) => document.querySelector(`${selector} button.toggle-rule`)?.textContent === 'Enable',
      {},
      ruleRow,
    );
    assert.equal((await betaRule()).enabled, false);
    await assertAccessible(page, 'alert rules');
    await screenshot(page, 'alerts-rules');
    assert.deepEqual(page.problems, []);
  });

  test('dashboards: overview, pipeline, data centers and throughput drawn as charts that refresh', async () => {
    await page.goto(`${system.logs}/console/#/dashboards?view=overview&refresh=5s`);
    await page.waitForSelector('#volume-chart path.line');
    const services = await page.$$eval('#top-services li .label', (labels) => labels.map((label) => label.textContent));
    assert.ok(services.includes('checkout') && services.includes('payments'), services.join(', '));
    assert.match(await textOf(page, '#tile-volume strong'), /^[\d,]+$/);
    // Drawn again by itself: the tick count goes up without a click.
    await page.waitForFunction(() => Number((document.querySelector('#updated') as HTMLElement).dataset.ticks) >= 2, { timeout: 30_000 });
    await assertAccessible(page, 'dashboard overview');
    await screenshot(page, 'dashboard-overview');

    await page.click('#tab-pipeline');
    await page.waitForSelector('#sources-table');
    const sources = await page.$$eval('#sources-table tbody tr td:first-child', (cells) => cells.map((cell) => cell.textContent));
    assert.ok(sources.includes('bulk') && sources.includes('otlp') && sources.includes('gateway'), sources.join(', '));
    const pipeline = await system.api.asAdmin('GET', '/api/v1/dashboard/pipeline/status');
    assert.ok((await textOf(page, '#store-status strong')).startsWith(`${pipeline.store.status} (`), 'the store as the API reports it');
    await assertAccessible(page, 'pipeline status');
    await screenshot(page, 'dashboard-pipeline');

    await page.click('#tab-dc');
    await page.waitForSelector('#dc section.site');
    assert.match(await textOf(page, '#dc section.site h3'), /^local /);
    await assertAccessible(page, 'data-center status');
    await screenshot(page, 'dashboard-dc');

    await page.click('#tab-throughput');
    await page.waitForSelector('#sources-chart path[data-series="bulk"]');
    assert.ok(await page.$('#services-chart path.line'));
    await assertAccessible(page, 'throughput');
    await screenshot(page, 'dashboard-throughput');
    assert.deepEqual(page.problems, []);
  });

  test('audit: search in the URL; the CSV and Excel exports are saved as files and open', async () => {
    await page.goto(`${system.logs}/console/#/audit`);
    await page.waitForSelector('#audit-table');
    await page.$eval('#audit-q', (node) => ((node as HTMLInputElement).value = 'auth.login'));
    await page.click('#audit-search');
    await page.waitForFunction(() => location.hash.includes('q=auth.login'));
    await page.waitForSelector('#audit-table tbody tr');
    const actions = await page.$$eval('#audit-table tbody tr td:nth-child(3)', (cells) => cells.map((cell) => cell.textContent));
    assert.ok(actions.length > 0 && actions.every((action) => action!.includes('auth.login')), actions.join(', '));
    const total = (await system.api.asAdmin('GET', '/api/v1/log-audit/search?q=auth.login&limit=1')).total as number;
    assert.equal(await textOf(page, '#audit-total'), `${total.toLocaleString('en-US')} entries`);
    await assertAccessible(page, 'audit');
    await screenshot(page, 'audit');

    const downloads = await saveDownloads(page);
    let saved = downloads.next();
    await page.click('#export-csv');
    const csvPath = await saved;
    assert.match(basename(csvPath), /^audit-[\w-]+\.csv$/);
    const records = parse(readFileSync(csvPath), { columns: true, bom: true }) as Record<string, string>[];
    assert.ok(records.length >= 1);
    // The search's filter: `q` is text in the action, actor, target, address or details (the
    // export's own audit row names the filter in its details).
    assert.ok(
      records.every((record) => JSON.stringify(record).includes('auth.login')),
      'the export has the search filter',
    );
    assert.ok(records.some((record) => record.action === 'auth.login'));

    saved = downloads.next();
    await page.click('#export-excel');
    const xlsxPath = await saved;
    assert.match(basename(xlsxPath), /^audit-[\w-]+\.xlsx$/);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.readFile(xlsxPath);
    const sheet = workbook.getWorksheet('Audit')!;
    assert.equal(sheet.getRow(1).getCell(4).value, 'action');
    assert.ok(sheet.rowCount >= 2);
    assert.deepEqual(page.problems, []);
  });

  test('APM: the service map as a graph, a service to its traces, one trace as a waterfall', async () => {
    const start = Date.now() - 60_000;
    const traceId = 'cd'.repeat(16);
    const span = (service: string, spanId: string, parent: string | null, name: string, offset: number, ms: number, error = false) => ({
      resource: { attributes: attributes({ 'service.name': service }) },
      scopeSpans: [
        {
          spans: [
            {
              traceId,
              spanId,
              ...(parent ? { parentSpanId: parent } : {}),
              name,
              kind: 2,
              startTimeUnixNano: ns(start + offset),
              endTimeUnixNano: ns(start + offset + ms),
              status: { code: error ? 2 : 1 },
            },
          ],
        },
      ],
    });
    await system.api.asAdmin('POST', '/v1/traces', {
      resourceSpans: [
        span(`${MARK}-web`, 'a'.repeat(16), null, 'GET /cart', 0, 300),
        span(`${MARK}-cart`, 'b'.repeat(16), 'a'.repeat(16), 'load cart', 10, 200),
        span(`${MARK}-db`, 'c'.repeat(16), 'b'.repeat(16), 'SELECT', 20, 50, true),
      ],
    });
    await page.goto(`${system.logs}/console/#/apm`);
    await page.waitForSelector(`#service-graph a.node[data-service="${MARK}-cart"]`);
    const edges = await page.$$eval('#service-graph g.edge', (gs) =>
      gs.map((g) => `${g.getAttribute('data-source')}>${g.getAttribute('data-target')}`),
    );
    assert.ok(edges.includes(`${MARK}-web>${MARK}-cart`) && edges.includes(`${MARK}-cart>${MARK}-db`), edges.join(', '));
    assert.ok(await page.$(`#service-graph g.edge.has-errors[data-target="${MARK}-db"]`), 'the failing call is marked');
    // Callers left of callees.
    const x = (service: string) =>
      page.$eval(`#service-graph a.node[data-service="${service}"] rect`, (rect) => Number(rect.getAttribute('x')));
    assert.ok((await x(`${MARK}-web`)) < (await x(`${MARK}-cart`)) && (await x(`${MARK}-cart`)) < (await x(`${MARK}-db`)));
    await assertAccessible(page, 'service map');
    await screenshot(page, 'apm-service-map');

    await page.click(`#service-graph a.node[data-service="${MARK}-cart"]`);
    await page.waitForSelector('#traces-table a.trace-link');
    assert.equal((await hashParams(page)).service, `${MARK}-cart`);
    await assertAccessible(page, 'traces');
    await screenshot(page, 'apm-traces');
    await page.click('#traces-table a.trace-link');
    await page.waitForSelector('#waterfall tr.span-row');
    const rows = await page.$$eval('#waterfall tr.span-row', (trs) =>
      trs.map((tr) => [tr.querySelector('button')!.textContent, tr.classList.contains('error')]),
    );
    assert.deepEqual(rows, [
      [`${MARK}-web: GET /cart`, false],
      [`${MARK}-cart: load cart`, false],
      [`${MARK}-db: SELECT`, true],
    ]);
    await page.click('#waterfall tr.span-row:nth-of-type(1) button');
    await page.waitForSelector('#waterfall tr.span-detail:not([hidden])');
    assert.deepEqual(page.problems, []);
  });

  test('infrastructure: hosts and containers as charts; Kubernetes shows "not configured" for the 503', async () => {
    const now = Date.now();
    const gauge = (name: string, unit: string, values: number[]) => ({
      name,
      unit,
      gauge: {
        dataPoints: values.map((value, i) => ({ timeUnixNano: ns(now - (values.length - i) * 60_000), asDouble: value, attributes: [] })),
      },
    });
    await system.api.asAdmin('POST', '/v1/metrics', {
      resourceMetrics: [
        {
          resource: { attributes: attributes({ 'container.id': `${MARK}-api-1`, 'host.name': `${MARK}-node` }) },
          scopeMetrics: [
            {
              metrics: [gauge('container.cpu.usage', '{cpu}', [0.2, 0.4, 0.3]), gauge('container.memory.usage', 'By', [2e8, 2.5e8, 2.2e8])],
            },
          ],
        },
        {
          resource: { attributes: attributes({ 'host.name': `${MARK}-host` }) },
          scopeMetrics: [
            {
              metrics: [gauge('system.cpu.utilization', '1', [0.25, 0.5, 0.75]), gauge('system.memory.utilization', '1', [0.5, 0.55, 0.6])],
            },
          ],
        },
      ],
    });
    await page.goto(`${system.logs}/console/#/infra`);
    await page.waitForSelector(`#hosts section.host[aria-label="${MARK}-host"] path.line`);
    assert.match(await textOf(page, `#hosts section.host[aria-label="${MARK}-host"] .facts`), /CPU75\.0%/);
    await assertAccessible(page, 'hosts');
    await screenshot(page, 'infra-hosts');

    await page.click('#tab-containers');
    await page.waitForSelector('#containers-table');
    const ids = await page.$$eval('#containers-table tbody tr td:nth-child(2)', (cells) => cells.map((cell) => cell.textContent));
    assert.ok(ids.includes(`${MARK}-api-1`), ids.join(', '));
    assert.ok(await page.$('#containers .charts path.line'));
    await assertAccessible(page, 'containers');
    await screenshot(page, 'infra-containers');

    const health = page.waitForResponse((r) => r.url().endsWith('/api/v1/k8s/cluster/health'));
    await page.click('#tab-k8s');
    assert.equal((await health).status(), 503);
    await page.waitForSelector('#k8s-not-configured');
    assert.match(await textOf(page, '#k8s-not-configured'), /Kubernetes is not configured.*503 kubernetes not configured/s);
    await assertAccessible(page, 'kubernetes');
    await screenshot(page, 'infra-kubernetes');
    assert.deepEqual(page.problems, []);
  });
  test('every page reads at 1280x800 and on a 375-pixel phone: the page never scrolls sideways', async () => {
    const pages: [name: string, hash: string, ready: string][] = [
      ['dashboards', '#/dashboards', '#volume-chart'],
      ['alerts', '#/alerts?view=all', '#alerts-table'],
      ['apm', '#/apm', '#service-graph'],
      ['apm-traces', '#/apm?view=traces', '#traces-table'],
      ['infra', '#/infra', '#hosts section.host'],
      ['audit', '#/audit', '#audit-table'],
      ['admin', '#/admin?view=users', '#users-table'],
      ['keys', '#/keys', '#keys-table'],
    ];
    for (const viewport of [
      { width: 1280, height: 800 },
      { width: 375, height: 740 },
    ]) {
      const sized = await newPage(browser, viewport);
      await signIn(sized, system.logs, ADMIN, ADMIN_PASSWORD);
      for (const [name, hash, ready] of pages) {
        await sized.goto(`${system.logs}/console/${hash}`);
        await sized.waitForSelector(ready);
        const overflow = await sized.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        assert.ok(overflow <= 1, `${name} at ${viewport.width} px: ${overflow} px too wide`);
        if (viewport.width < 500) await screenshot(sized, `phone-${name}`);
      }
      assert.deepEqual(sized.problems, []);
      await sized.close();
    }
  });
});
