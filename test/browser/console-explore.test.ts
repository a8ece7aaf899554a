// The console's pages in a real browser (Debian's Chromium through puppeteer-core): explore (paging,
// details, the fields' values as filters, drag-to-zoom on the histogram, live tail, the back button),
// navigation by permission, the audit export, the language toggle, a phone-sized screen, and axe-core
// on every page. Waits are on selectors, responses and page functions, never sleeps.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
// @ts-expect-error a plain ES module script without types
import { buildConsole } from '../../scripts/build-console.mjs';
import { listenOnLoopback } from '../helpers/listen.js';
import { LOGS_ADMIN, LOGS_ADMIN_PASSWORD, PASSWORD, startTestLogs, uniqueName, type TestLogs } from '../helpers/logs.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((path) => existsSync(path));
const SCREENSHOTS = join(process.cwd(), 'test-output', 'screenshots');
const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const MINUTE = 60_000;

describe('web console pages in Chromium', { skip: CHROMIUM ? false : 'no Chromium (bash .ci/run installs it)', timeout: 180_000 }, () => {
  let logs: TestLogs;
  let browser: Browser;
  let base = '';
  const directory = mkdtempSync(join(tmpdir(), 'gerbang-console-'));
  const marker = uniqueName('console').toLowerCase();

  const ship = async (docs: object[]) => {
    const body = docs.map((doc) => `{"index":{}}\n${JSON.stringify(doc)}\n`).join('');
    const response = await logs.request({
      method: 'POST',
      url: '/api/v1/_elastic/_bulk',
      headers: { ...(await logs.admin()), 'content-type': 'application/x-ndjson' },
      payload: body,
    });
    assert.equal(response.json().errors, false);
  };

  /** A fresh browser context (its own sessionStorage), signed in as `username`. */
  const signedIn = async (username: string, password: string, viewport = { width: 1280, height: 900 }): Promise<Page> => {
    const context = await browser.createBrowserContext();
    const page = await context.newPage();
    // Only so that axe-core can be injected; the console's own policy is tested in console-serving.
    await page.setBypassCSP(true);
    await page.setViewport(viewport);
    await page.goto(`${base}/`, { waitUntil: 'load' });
    await page.waitForSelector('#username');
    await page.type('#username', username);
    await page.type('#password', password);
    await page.click('button[type=submit]');
    await page.waitForSelector('#whoami');
    return page;
  };

  const hashParams = (page: Page) => page.evaluate(() => Object.fromEntries(new URLSearchParams(location.hash.split('?')[1] ?? '')));

  /** No serious or critical accessibility violation on the page as it is now. */
  const accessible = async (page: Page, what: string) => {
    await page.addScriptTag({ path: AXE });
    const violations = await page.evaluate(async () => {
      const result = await (
        window as unknown as { axe: { run: () => Promise<{ violations: { id: string; impact: string }[] }> } }
      ).axe.run();
      return result.violations
        .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
        .map((violation) => violation.id);
    });
    assert.deepEqual(violations, [], `${what}: ${violations.join(', ')}`);
  };

  before(async () => {
    await buildConsole(directory);
    process.env.LOGS_CONSOLE_DIR = directory;
    logs = await startTestLogs('sqlite');
    base = `http://127.0.0.1:${await listenOnLoopback(logs.app)}`;
    browser = await puppeteer.launch({ executablePath: CHROMIUM!, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
    mkdirSync(SCREENSHOTS, { recursive: true });
    const now = Date.now();
    // 120 entries over the last 50 minutes: hosts h1 (80) and h2 (40); every fourth an error.
    await ship(
      Array.from({ length: 120 }, (_, i) => ({
        '@timestamp': new Date(now - 50 * MINUTE + i * 25_000).toISOString(),
        message: `${marker} request ${i}`,
        host: i % 3 === 2 ? 'h2' : 'h1',
        level: i % 4 === 0 ? 'error' : 'info',
        latency: i,
      })),
    );
  });
  after(async () => {
    delete process.env.LOGS_CONSOLE_DIR;
    await browser?.close();
    await logs?.close();
    rmSync(directory, { recursive: true, force: true });
  });

  test('explore: paging and the back button, details, a field value as a filter, drag to zoom, live tail', async () => {
    const page = await signedIn(LOGS_ADMIN, LOGS_ADMIN_PASSWORD);
    await page.$eval('#query', (node, value) => ((node as HTMLInputElement).value = value), `"${marker}"`);
    await page.click('form[role=search] button[type=submit]');
    await page.waitForFunction(() => document.querySelector('#status')?.textContent === '120 entries');
    await page.waitForSelector('#histogram rect.bar');
    const charted = await page.$$eval('#histogram rect.bar', (bars) =>
      bars.reduce((sum, bar) => sum + Number(bar.getAttribute('data-count')), 0),
    );
    assert.equal(charted, 120, 'the histogram counts every entry');
    assert.equal(await page.$eval('#page-number', (node) => node.textContent), 'Page 1 of 3');
    assert.equal(await page.$$eval('#results tr.entry', (rows) => rows.length), 50);
    await accessible(page, 'explore');
    await page.screenshot({ path: join(SCREENSHOTS, 'explore-page.png') });

    // Next page, then back.
    await page.click('#next');
    await page.waitForFunction(() => document.querySelector('#page-number')?.textContent === 'Page 2 of 3');
    assert.equal((await hashParams(page)).page, '2');
    await page.goBack();
    await page.waitForFunction(() => document.querySelector('#page-number')?.textContent === 'Page 1 of 3');

    // A row opens to the whole entry.
    await page.waitForSelector('#results tr.entry');
    await page.click('#results tr.entry');
    const detail = await page.$eval(
      '#results tr.detail:not([hidden]) pre',
      (node) => JSON.parse(node.textContent ?? '{}') as { attributes: { latency: number } },
    );
    assert.equal(detail.attributes.latency, 119, 'newest first');

    // The host field's values, one of them as a filter.
    await page.waitForSelector('#fields button.field');
    const hostButton = await page.waitForSelector('xpath/.//button[contains(@class, "field") and text()="host"]');
    await hostButton!.click();
    await page.waitForSelector('#fields button.value');
    const values = await page.$$eval('#fields button.value', (buttons) => buttons.map((button) => button.textContent));
    assert.deepEqual(values, ['h1 (80)', 'h2 (40)']);
    await page.click('#fields button.value');
    await page.waitForFunction(() => document.querySelector('#status')?.textContent === '80 entries');
    assert.equal((await hashParams(page)).q, `"${marker}" host:"h1"`);

    // Drag across the first half of the histogram: an absolute range, fewer entries.
    const box = (await (await page.$('#histogram svg'))!.boundingBox())!;
    await page.mouse.move(box.x + 2, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.3, box.y + box.height / 2, { steps: 5 });
    await page.mouse.up();
    await page.waitForFunction(() => location.hash.includes('from='));
    const zoomed = await hashParams(page);
    assert.ok(zoomed.from && zoomed.to && Date.parse(zoomed.to) - Date.parse(zoomed.from) < 30 * MINUTE, JSON.stringify(zoomed));
    assert.equal(await page.$eval('#range', (node) => (node as HTMLSelectElement).value), 'custom');
    await page.waitForFunction(() => /^\d+ entries$/.test(document.querySelector('#status')?.textContent ?? ''));
    const inRange = Number((await page.$eval('#status', (node) => node.textContent))!.split(' ')[0]);
    assert.ok(inRange > 0 && inRange < 80, `${inRange}`);

    // Live tail on a relative range: a new entry shows without a click.
    await page.select('#range', '15m');
    await page.waitForFunction(() => !location.hash.includes('from='));
    await page.click('#live');
    await page.waitForFunction(() => location.hash.includes('live=1'));
    const fresh = `${marker} arrived live`;
    await ship([{ '@timestamp': new Date().toISOString(), message: fresh, host: 'h1' }]);
    await page.waitForFunction(
      (text) => [...document.querySelectorAll('#results td')].some((cell) => cell.textContent === text),
      { timeout: 20_000 },
      fresh,
    );
    await page.close();
  });

  test('navigation follows permissions: a logs:read user sees explore only, and no admin page', async () => {
    const reader = await logs.userWith(['logs:read']);
    const page = await signedIn(reader.username, PASSWORD);
    assert.deepEqual(await page.$$eval('header nav a', (links) => links.map((link) => link.id)), ['nav-explore']);
    await page.goto(`${base}/console/#/admin`);
    await page.waitForSelector('#not-allowed');
    await page.close();

    const admin = await signedIn(LOGS_ADMIN, LOGS_ADMIN_PASSWORD);
    assert.deepEqual(await admin.$$eval('header nav a', (links) => links.map((link) => link.id)), [
      'nav-explore',
      'nav-alerts',
      'nav-audit',
      'nav-admin',
    ]);
    await admin.click('#nav-admin');
    await admin.waitForSelector('#admin-page table');
    assert.ok((await admin.$eval('#admin-page', (node) => node.textContent))!.includes(reader.username));
    await accessible(admin, 'admin');
    await admin.click('#nav-alerts');
    await admin.waitForSelector('#alerts-page table');
    await accessible(admin, 'alerts');
    await admin.click('#nav-audit');
    await admin.waitForSelector('#audit-page table');
    await accessible(admin, 'audit');
    const exported = admin.waitForResponse((response) => response.url().includes('/api/v1/log-audit/export/csv'));
    await admin.click('#export-csv');
    const csv = await exported;
    assert.equal(csv.status(), 200);
    assert.match(csv.headers()['content-type'] ?? '', /text\/csv/);
    await admin.close();
  });

  test('the language toggle and a phone-sized screen', async () => {
    const page = await signedIn(LOGS_ADMIN, LOGS_ADMIN_PASSWORD, { width: 375, height: 740 });
    await page.waitForSelector('#results');
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 1, `the page is ${overflow}px wider than a phone`);
    await page.screenshot({ path: join(SCREENSHOTS, 'explore-phone.png') });
    await page.click('#language');
    await page.waitForFunction(() => document.documentElement.lang === 'id');
    assert.equal(await page.$eval('form[role=search] button[type=submit]', (node) => node.textContent), 'Cari');
    await page.click('#language');
    await page.waitForFunction(() => document.documentElement.lang === 'en');
    await page.close();
  });
});
