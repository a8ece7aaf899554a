// Alerts from the console in Chromium against a fresh `npm start` on SQLite: a rule created through
// the editor (the API's refusal shown at the field it names first), edited, disabled and deleted;
// "Create an alert from this search" on the Explore page opening the editor with the query and range;
// a silenced alert kept on the Active tab as silenced, then un-silenced. axe-core and a screenshot on each.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'puppeteer-core';
import { eventually } from '../helpers/eventually.js';
import {
  ADMIN,
  ADMIN_PASSWORD,
  assertAccessible,
  launchChromium,
  newPage,
  screenshot,
  signIn,
  startSystem,
  textOf,
  type System,
} from './harness.js';

const MARK = `a${Date.now().toString(36)}`;

interface RuleView {
  id: string;
  name: string;
  query: string;
  window: string;
  enabled: boolean;
  condition: { type: string; threshold?: number };
  severity: string;
}

describe('console alerts in Chromium', { timeout: 900_000 }, () => {
  let system: System;
  let browser: Browser;
  let page: Page & { problems: string[] };

  const rules = async () => (await system.api.asAdmin('GET', '/api/v1/alerts/rules')).data as RuleView[];
  const ruleNamed = async (name: string) => (await rules()).find((rule) => rule.name === name);
  /** Types into a field of the rule editor, replacing what it holds. */
  const fill = async (name: string, value: string) => {
    const selector = `#rule-form-${name.replace(/[^\w-]/g, '_')}`;
    await page.$eval(selector, (node) => ((node as HTMLInputElement).value = ''));
    await page.type(selector, value);
  };

  before(async () => {
    browser = await launchChromium();
    system = await startSystem({ LOGS_ALERTS_EVAL_INTERVAL: '1s' });
    page = await newPage(browser);
    await signIn(page, system.logs, ADMIN, ADMIN_PASSWORD);
  });
  after(async () => {
    await browser?.close();
    await system?.stop();
  });

  test('a rule created (a field error first), edited, disabled and deleted through the editor', async () => {
    const name = `${MARK} errors`;
    await page.goto(`${system.logs}/console/#/alerts?view=rules`);
    await page.waitForSelector('#new-rule');
    await page.click('#new-rule');
    await page.waitForSelector('#rule-form');
    await fill('name', name);
    await fill('query', 'level:error');
    await fill('window', '5m');
    await page.select('#rule-form-condition_type', 'above');
    // No threshold with "above": the API refuses, and says so under the threshold field.
    const refused = page.waitForResponse((r) => r.url().endsWith('/api/v1/alerts/rules') && r.request().method() === 'POST');
    await page.click('#rule-form-submit');
    assert.equal((await refused).status(), 400);
    await page.waitForFunction(() => document.querySelector('#rule-form-condition_threshold-error')?.textContent !== '');
    assert.match(await textOf(page, '#rule-form-condition_threshold-error'), /condition\.threshold is required with above/);
    assert.equal(await page.$eval('#rule-form-condition_threshold', (n) => n.getAttribute('aria-invalid')), 'true');
    assert.equal(
      await page.$eval('#rule-form-condition_threshold', (n) => n.getAttribute('aria-describedby')),
      'rule-form-condition_threshold-error',
    );
    assert.equal(await ruleNamed(name), undefined, 'nothing was created');
    await assertAccessible(page, 'rule editor with a field error');
    await screenshot(page, 'alerts-rule-field-error');

    // A bad window is shown at the window field.
    await fill('condition.threshold', '10');
    await fill('window', '5 minutes');
    await page.click('#rule-form-submit');
    await page.waitForFunction(() => document.querySelector('#rule-form-window-error')?.textContent !== '');
    assert.match(await textOf(page, '#rule-form-window-error'), /window/);
    assert.equal(await textOf(page, '#rule-form-condition_threshold-error'), '', 'the earlier error is cleared');

    await fill('window', '5m');
    await page.click('#rule-form-submit');
    await page.waitForSelector('#rules-table');
    const created = await eventually(async () => {
      const rule = await ruleNamed(name);
      assert.ok(rule);
      return rule;
    });
    assert.deepEqual(
      [created.query, created.window, created.condition, created.enabled],
      ['level:error', '5m', { type: 'above', threshold: 10 }, true],
    );
    const row = `#rules-table tr[data-rule-id="${created.id}"]`;
    await page.waitForSelector(row);

    // Edit: the editor opens with the rule's values; the change reaches the API.
    await page.click(`${row} a.edit-rule`);
    await page.waitForSelector('#rule-form');
    assert.equal(await page.$eval('#rule-form-query', (n) => (n as HTMLInputElement).value), 'level:error');
    assert.equal(await page.$eval('#rule-form-condition_threshold', (n) => (n as HTMLInputElement).value), '10');
    await fill('window', '15m');
    await page.select('#rule-form-severity', 'critical');
    await page.click('#rule-form-submit');
    await page.waitForFunction(() => !document.querySelector('#rule-form'));
    const edited = (await ruleNamed(name))!;
    assert.equal(edited.window, '15m');
    assert.equal(edited.severity, 'critical');
    await assertAccessible(page, 'rules after an edit');
    await screenshot(page, 'alerts-rules-edited');

    // Disable, then delete (after a confirmation).
    await page.waitForSelector(`${row} button.toggle-rule`);
    await page.click(`${row} button.toggle-rule`);
    await page.waitForFunction((selector) => document.querySelector(`${selector} button.toggle-rule`)?.textContent === 'Enable', {}, row);
    assert.equal((await ruleNamed(name))!.enabled, false);
    await page.click(`${row} button.delete-rule`);
    await page.waitForSelector('dialog.confirm[open]');
    await assertAccessible(page, 'delete confirmation');
    await page.click('#confirm-yes');
    await page.waitForFunction((selector) => !document.querySelector(selector), {}, row);
    assert.equal(await ruleNamed(name), undefined, 'the rule is gone');
    assert.deepEqual(page.problems, []);
  });

  test('"Create an alert from this search" opens the editor with the query and range', async () => {
    const query = `service:checkout AND "${MARK} payment failed"`;
    await page.goto(`${system.logs}/console/#/explore?${new URLSearchParams({ q: query, range: '15m' }).toString()}`);
    await page.waitForSelector('#alert-from-search');
    await page.click('#alert-from-search');
    await page.waitForSelector('#rule-form');
    assert.equal(await page.$eval('#rule-form-query', (n) => (n as HTMLInputElement).value), query);
    assert.equal(await page.$eval('#rule-form-window', (n) => (n as HTMLInputElement).value), '15m');
    await assertAccessible(page, 'rule editor from a search');
    await screenshot(page, 'alerts-rule-from-search');

    // An absolute range becomes the window's length.
    const from = '2026-11-20T10:00:00.000Z';
    const to = '2026-11-20T12:00:00.000Z';
    await page.goto(`${system.logs}/console/#/explore?${new URLSearchParams({ q: 'level:error', from, to }).toString()}`);
    await page.waitForSelector('#alert-from-search');
    await page.click('#alert-from-search');
    await page.waitForSelector('#rule-form');
    assert.equal(await page.$eval('#rule-form-window', (n) => (n as HTMLInputElement).value), '2h');
    await fill('name', `${MARK} from search`);
    await fill('condition.threshold', '0');
    await page.click('#rule-form-submit');
    await page.waitForFunction(() => !document.querySelector('#rule-form'));
    const made = (await ruleNamed(`${MARK} from search`))!;
    assert.equal(made.query, 'level:error');
    assert.equal(made.window, '2h');
    assert.deepEqual(page.problems, []);
  });

  test('a silenced alert stays on the Active tab as silenced, and is un-silenced there', async () => {
    await system.api.asAdmin(
      'POST',
      '/api/v1/alerts/rules',
      {
        name: `${MARK} quiet`,
        query: `"${MARK} never logged"`,
        window: '1m',
        condition: { type: 'absent' },
        interval: '5s',
        severity: 'high',
      },
      201,
    );
    // The evaluator opens the alert within seconds: the Active tab, refreshed until it shows.
    await page.goto(`${system.logs}/console/#/alerts?view=active`);
    await page.waitForFunction(
      (name) => {
        const found = [...document.querySelectorAll('#alerts-table tr')].some((row) => row.textContent?.includes(name));
        if (!found) (document.querySelector('#alerts-refresh') as HTMLButtonElement | null)?.click();
        return found;
      },
      { polling: 1000, timeout: 60_000 },
      `${MARK} quiet`,
    );
    const alert = {
      id: await page.$$eval(
        '#alerts-table tr[data-alert-id]',
        (rows, name) => rows.find((row) => row.textContent?.includes(name))!.getAttribute('data-alert-id')!,
        `${MARK} quiet`,
      ),
    };
    await system.api.asAdmin('POST', `/api/v1/alerts/${alert.id}/status`, {
      status: 'silenced',
      until: new Date(Date.now() + 3_600_000).toISOString(),
    });
    const row = `#alerts-table tr[data-alert-id="${alert.id}"]`;
    await page.click('#alerts-refresh');
    await page.waitForSelector(`${row} .badge.state-silenced`);
    assert.ok(await page.$(`${row} .badge.state-silenced`), 'shown as silenced');
    const offered = await page.$$eval(`${row} .alert-actions button`, (buttons) => buttons.map((b) => b.className));
    assert.deepEqual(offered, ['to-firing', 'to-silenced', 'to-resolved'], 'un-silence, silence longer, resolve');
    await assertAccessible(page, 'active alerts with a silenced one');
    await screenshot(page, 'alerts-active-silenced');

    await page.click(`${row} button.to-firing`);
    await page.waitForSelector(`${row} .badge.state-firing`);
    assert.equal((await system.api.asAdmin('GET', `/api/v1/alerts/${alert.id}`)).state, 'firing');
    assert.deepEqual(page.problems, []);
  });
});
