// The explorer's everyday tools in Chromium against a fresh `npm start`: the query's terms marked; columns added from the
// sidebar and from an entry, moved and removed, kept in the URL; oldest first; scrolling past the
// 10,000th entry; saved searches saved, opened by a logs:read user (who may not change them),
// renamed and deleted, per tenant; the export of the search on screen with its columns; an entry in
// the side panel (Escape, copy, surrounding entries, a JSON message's keys as filters); the service
// out of reach (said plainly, retried), dark mode, the favicon and compressed assets; times in the
// browser's zone or UTC.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { parse } from 'csv-parse/sync';
import type { Browser, Page } from 'puppeteer-core';
import {
  ADMIN,
  ADMIN_PASSWORD,
  PASSWORD,
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

const MINUTE = 60_000;
const MARK = `d${Date.now().toString(36)}`;
const DEEP = `${MARK}deep`;

const statusIs = (page: Page, text: string) =>
  page.waitForFunction((expected) => document.querySelector('#status')?.textContent === expected, {}, text);
const headers = (page: Page) => page.$$eval('#results-table th .label', (labels) => labels.map((label) => label.textContent));
const explore = (system: System, query: string, extra = '') =>
  `${system.logs}/console/#/explore?q=${encodeURIComponent(query)}&range=1h${extra}`;

describe('console explore, the everyday tools, in Chromium', { timeout: 900_000 }, () => {
  let system: System;
  let browser: Browser;
  const now = Date.now();

  before(async () => {
    browser = await launchChromium();
    system = await startSystem();
    // 40 entries over the last 40 minutes on hosts h0..h3; every tenth a JSON message.
    await system.api.ship(
      Array.from({ length: 40 }, (_, i) => ({
        '@timestamp': new Date(now - 40 * MINUTE + i * MINUTE).toISOString(),
        message: i % 10 === 5 ? JSON.stringify({ event: 'payment', user: `u${i}`, mark: MARK }) : `${MARK} step ${i}`,
        host: `h${i % 4}`,
        level: i % 5 === 0 ? 'error' : 'info',
        service: 'orders',
        latency: i,
      })),
    );
    // 10,600 entries in the last 30 minutes: more than the 10,000 the console used to reach.
    for (let batch = 0; batch < 2; batch += 1)
      await system.api.ship(
        Array.from({ length: 5300 }, (_, j) => {
          const i = batch * 5300 + j;
          return { '@timestamp': new Date(now - 30 * MINUTE + i * 150).toISOString(), message: `${DEEP} line ${i}`, host: 'bulk' };
        }),
      );
  });
  after(async () => {
    await browser?.close();
    await system?.stop();
  });

  test('columns: added from the sidebar and from an entry, moved, removed, kept in the URL; oldest first', async () => {
    const page = await newPage(browser);
    await signIn(page, system.logs, ADMIN, ADMIN_PASSWORD);
    await page.goto(explore(system, `"${MARK}" step`));
    await statusIs(page, '36 entries');
    assert.deepEqual(await headers(page), ['Time', 'Level', 'Service', 'Host', 'Message']);
    // The query's terms are marked in the messages.
    assert.deepEqual(
      await page.$$eval('#results tr.entry[aria-rowindex="2"] .c-message mark', (marks) => marks.map((mark) => mark.textContent)),
      [MARK, 'step'],
    );
    await (await page.waitForSelector('#fields li[data-field="latency"] button.add-column'))!.click();
    await page.waitForFunction(() => document.querySelectorAll('#results-table th .label').length === 6);
    await statusIs(page, '36 entries');
    assert.deepEqual(await headers(page), ['Time', 'Level', 'Service', 'Host', 'Message', 'latency']);
    assert.equal((await hashParams(page)).cols, 'level,service,host,message,latency');
    assert.equal(await textOf(page, '#results tr.entry[aria-rowindex="2"] .c-field'), '39', 'the newest first, its latency');

    await page.click('#results-table th[data-column="latency"] button[aria-label="Move left: latency"]');
    await page.waitForFunction(() => new URLSearchParams(location.hash.split('?')[1]).get('cols') === 'level,service,host,latency,message');
    // The page drawn again, its rows loaded (the header's layout settles with them): then the next click.
    await page.waitForFunction(
      () => document.querySelector('#results-table th[data-column="latency"] + th')?.getAttribute('data-column') === 'message',
    );
    await statusIs(page, '36 entries');
    await page.click('#results-table th[data-column="service"] button[aria-label="Remove column: Service"]');
    await page.waitForFunction(() => new URLSearchParams(location.hash.split('?')[1]).get('cols') === 'level,host,latency,message');
    await page.reload({ waitUntil: 'load' });
    await statusIs(page, '36 entries');
    assert.deepEqual(await headers(page), ['Time', 'Level', 'Host', 'latency', 'Message']);

    await page.click('#sort-order');
    await page.waitForFunction(() => location.hash.includes('sort=asc'));
    await statusIs(page, '36 entries');
    await page.waitForFunction(() => document.querySelector('#results tr.entry[aria-rowindex="2"] .c-field')?.textContent === '0');
    assert.equal(await page.$eval('#results-table th.c-time', (th) => th.getAttribute('aria-sort')), 'ascending');

    // From an entry's attribute.
    await page.goto(explore(system, `"${MARK}" step`, '&cols=message'));
    await statusIs(page, '36 entries');
    assert.deepEqual(await headers(page), ['Time', 'Message']);
    await page.click('#results tr.entry button.expand');
    await (await page.waitForSelector('#entry-detail button[aria-label="Add as a column: latency"]'))!.click();
    await page.waitForFunction(() => new URLSearchParams(location.hash.split('?')[1]).get('cols') === 'message,latency');
    await assertAccessible(page, 'explore with chosen columns');
    await screenshot(page, 'explore-columns');
    assert.deepEqual(page.problems, []);
    await page.close();
  });

  test('past the 10,000th entry: scrolling keeps loading by searchAfter until the oldest of the range', async () => {
    const page = await newPage(browser);
    await signIn(page, system.logs, ADMIN, ADMIN_PASSWORD);
    await page.goto(explore(system, `"${DEEP}"`));
    await statusIs(page, '10,000+ entries');
    const loaded = () => page.$eval('#loaded', (node) => Number((node as HTMLElement).dataset.count));
    for (let round = 0; round < 40 && (await loaded()) < 10_600; round += 1) {
      const before = await loaded();
      await page.$eval('#results', (node) => (node.scrollTop = node.scrollHeight));
      await page.waitForFunction(
        (count) => Number((document.querySelector('#loaded') as HTMLElement | null)?.dataset.count) > count,
        {},
        before,
      );
    }
    assert.equal(await loaded(), 10_600);
    await statusIs(page, '10,600 entries');
    await page.$eval('#results', (node) => (node.scrollTop = node.scrollHeight));
    await page.waitForSelector('#results tr.entry[aria-rowindex="10601"]');
    assert.equal(await textOf(page, '#results tr.entry[aria-rowindex="10601"] .c-message'), `${DEEP} line 0`, 'the oldest is reached');
    await page.close();
  });

  test('saved searches: saved with a name, opened by a logs:read user who may not change it, renamed and deleted by its owner, per tenant', async () => {
    const page = await newPage(browser);
    await signIn(page, system.logs, ADMIN, ADMIN_PASSWORD);
    await page.goto(explore(system, `"${MARK}" level:error`, '&cols=host,message&sort=asc'));
    await statusIs(page, '8 entries');
    await page.click('#save-search');
    await page.waitForSelector('dialog #saved-name');
    await assertAccessible(page, 'the save dialog');
    await page.type('#saved-name', 'Order errors');
    await page.click('#saved-save');
    await page.waitForFunction(() => location.hash.includes('saved='));
    await page.waitForFunction(() => document.querySelector('#saved-current')?.textContent === 'Order errors');
    const id = (await hashParams(page)).saved!;
    await screenshot(page, 'explore-saved-search');

    // A name already taken is refused at the field, in the API's words.
    await page.click('#save-search-new');
    await page.waitForSelector('dialog #saved-name');
    await page.type('#saved-name', 'Order errors');
    await page.click('#saved-save');
    await page.waitForFunction(() => /already exists/.test(document.querySelector('#saved-name-error')?.textContent ?? ''));
    await page.keyboard.press('Escape');

    // A reader opens it: the query, columns and order come back; no rename or delete offered.
    const reader = await system.api.userWith(['logs:read'], `${MARK}reader`);
    const other = await newPage(browser);
    await signIn(other, system.logs, reader, PASSWORD);
    await other.goto(`${system.logs}/console/#/explore`);
    await other.click('#saved-searches summary');
    const link = await other.waitForSelector(`#saved-list li[data-id="${id}"] a`);
    assert.equal(await other.$(`#saved-list li[data-id="${id}"] .saved-rename`), null);
    assert.equal(await other.$(`#saved-list li[data-id="${id}"] .saved-delete`), null);
    await link!.click();
    await statusIs(other, '8 entries');
    const opened = await hashParams(other);
    assert.deepEqual([opened.q, opened.cols, opened.sort, opened.range], [`"${MARK}" level:error`, 'host,message', 'asc', '1h']);
    assert.deepEqual(await headers(other), ['Time', 'Host', 'Message']);
    await assertAccessible(other, 'a saved search opened by a logs:read user');
    await other.close();

    // Another tenant has none of them.
    const tenant = await system.api.asAdmin('POST', '/api/tenants', { name: `${MARK}-t` }, 201);
    await page.reload({ waitUntil: 'load' });
    await page.waitForSelector(`#tenant option[value="${tenant.id}"]`);
    await page.select('#tenant', tenant.id);
    await page.waitForFunction(() => document.querySelector('#saved-list')?.textContent === 'No saved searches yet.');
    await page.select('#tenant', 'default');
    await page.waitForSelector(`#saved-list li[data-id="${id}"]`);

    // The owner renames, then deletes it.
    await page.click('#saved-searches summary');
    await page.click(`#saved-list li[data-id="${id}"] .saved-rename`);
    await page.waitForSelector('dialog #saved-name');
    await page.$eval('#saved-name', (input) => ((input as HTMLInputElement).value = 'Order errors, oldest first'));
    await page.click('#saved-save');
    await page.waitForFunction(
      (saved) => document.querySelector(`#saved-list li[data-id="${saved}"] a`)?.textContent === 'Order errors, oldest first',
      {},
      id,
    );
    await page.click(`#saved-list li[data-id="${id}"] .saved-delete`);
    await page.click('#confirm-yes');
    await page.waitForFunction((saved) => !document.querySelector(`#saved-list li[data-id="${saved}"]`), {}, id);
    assert.deepEqual(page.problems, []);
    await page.close();
  });

  test('export: the search on screen as CSV with its columns, and as NDJSON', async () => {
    const page = await newPage(browser);
    await signIn(page, system.logs, ADMIN, ADMIN_PASSWORD);
    const downloads = await saveDownloads(page);
    await page.goto(explore(system, `"${MARK}" step`, '&cols=host,latency'));
    await statusIs(page, '36 entries');
    const saved = downloads.next();
    await page.click('#export-csv');
    const rows = parse(readFileSync(await saved, 'utf8'), { bom: true }) as string[][];
    assert.deepEqual(rows[0], ['@timestamp', 'host', 'latency']);
    assert.equal(rows.length, 37);
    assert.deepEqual(rows[1]!.slice(1), ['h3', '39'], 'newest first, as on screen');
    // What was saved is said beside the buttons: the file, its size and its columns.
    await page.waitForFunction(() => document.querySelector('#export-message')?.textContent?.startsWith('Saved '));
    assert.match(await textOf(page, '#export-message'), /^Saved logs-[\dT-]+Z\.csv \(\d+(\.\d)? (B|KiB)\): @timestamp, host, latency$/);
    await assertAccessible(page, 'an export saved');
    await screenshot(page, 'explore-export');

    const lines = downloads.next();
    await page.click('#export-ndjson');
    const entries = readFileSync(await lines, 'utf8')
      .trimEnd()
      .split('\n');
    assert.equal(entries.length, 36);
    assert.deepEqual(Object.keys(JSON.parse(entries[0]!)), ['@timestamp', 'host', 'latency']);
    await page.close();
  });

  test('an entry in the side panel beside the list: copy, surrounding entries of its host, a JSON message pretty-printed with its keys as filters, Escape closes', async () => {
    const page = await newPage(browser);
    await signIn(page, system.logs, ADMIN, ADMIN_PASSWORD);
    await page.browserContext().overridePermissions(system.logs, ['clipboard-read', 'clipboard-write', 'clipboard-sanitized-write']);
    await page.goto(explore(system, `"${MARK}" step 20`));
    await statusIs(page, '1 entry');
    await page.click('#results tr.entry button.expand');
    await page.waitForSelector('#entry-detail');
    // Beside the list: the list stays on screen, to the panel's left.
    const [panel, list] = await Promise.all([
      page.$eval('#entry-detail', (node) => node.getBoundingClientRect().toJSON() as DOMRect),
      page.$eval('#results', (node) => node.getBoundingClientRect().toJSON() as DOMRect),
    ]);
    assert.ok(list.left < panel.left && panel.right <= 1280, `list ${JSON.stringify(list)}, panel ${JSON.stringify(panel)}`);

    await page.click('#detail-copy');
    await page.waitForFunction(() => document.querySelector('#entry-detail .panel-head [role="status"]')?.textContent === 'Copied');
    const copied = JSON.parse(await page.evaluate(() => navigator.clipboard.readText())) as { message: string };
    assert.equal(copied.message, `${MARK} step 20`);

    await page.click('#context-show');
    await page.waitForSelector('#context-list li.context-self');
    const around = await page.$$eval('#context-list li', (items) => items.map((item) => item.textContent ?? ''));
    // Host h0: entries 0, 4, 8, … (every fourth); 20 is the sixth, with 5 before it and 4 (24..36) after.
    assert.equal(around.length, 10);
    assert.match(around[5]!, new RegExp(`${MARK} step 20$`));
    assert.match(around[0]!, new RegExp(`${MARK} step 0$`));
    assert.match(around[9]!, new RegExp(`${MARK} step 36$`));
    await assertAccessible(page, 'an entry in the side panel');
    await screenshot(page, 'explore-side-panel');
    await page.keyboard.press('Escape');
    await page.waitForFunction(() => !document.querySelector('#entry-detail'));
    assert.equal(await page.evaluate(() => document.activeElement?.className), 'expand', 'focus back on the row');

    // A JSON message: pretty-printed, its keys offered as filters.
    await page.goto(explore(system, `"${MARK}" payment`));
    await statusIs(page, '4 entries');
    await page.click('#results tr.entry button.expand');
    await page.waitForSelector('#entry-detail .json-message');
    assert.match(await textOf(page, '#entry-detail .json-message'), /^\{\n {2}"event": "payment",\n {2}"user": "u35",/);
    await page.click('#json-keys button[aria-label="Only user: u35"]');
    await statusIs(page, '1 entry');
    assert.equal((await hashParams(page)).q, `"${MARK}" payment "user u35"`);
    assert.deepEqual(page.problems, []);
    await page.close();
  });

  test('patterns: the messages of the search grouped, with counts and shares; a click narrows the search to one', async () => {
    const page = await newPage(browser);
    await signIn(page, system.logs, ADMIN, ADMIN_PASSWORD);
    await page.goto(explore(system, `"${MARK}"`));
    await statusIs(page, '40 entries');
    await page.click('#patterns summary');
    await page.waitForSelector('#patterns-table');
    const rows = await page.$$eval('#patterns-table tbody tr', (trs) =>
      trs.map((tr) => [...tr.cells].slice(0, 3).map((td) => td.textContent)),
    );
    // The mark holds digits: a variable, like the step number.
    assert.deepEqual(rows, [
      ['36', '90.0%', '<*> step <*>'],
      ['4', '10.0%', '<*>'],
    ]);
    assert.equal(await textOf(page, '#patterns-note'), '40 entries');
    await assertAccessible(page, 'patterns');
    await screenshot(page, 'explore-patterns');
    await page.click('#patterns-table button[aria-label="Only: <*> step <*>"]');
    await statusIs(page, '36 entries');
    assert.equal((await hashParams(page)).q, `"${MARK}" "step"`);
    await page.close();
  });

  test('histogram: stacked by level with a legend and a time axis; a click on a bar zooms to it', async () => {
    const page = await newPage(browser);
    await signIn(page, system.logs, ADMIN, ADMIN_PASSWORD);
    await page.goto(explore(system, `"${MARK}" step`));
    await statusIs(page, '36 entries');
    await page.waitForSelector('#histogram-legend');
    const legend = await page.$$eval('#histogram-legend li', (items) => items.map((item) => item.textContent));
    assert.deepEqual(legend.slice(1), ['error 4', 'info 32']);
    assert.match(legend[0]!, /^Highest bar: \d+$/);
    assert.equal(await page.$$eval('#histogram rect.segment.stack-error', (rects) => rects.length), 4);
    assert.equal(await page.$$eval('#histogram-axis span', (spans) => spans.length), 3);
    const bar = await page.$$eval('#histogram rect.bar', (bars) => {
      const index = bars.findIndex((node) => Number(node.getAttribute('data-count')) > 0);
      return { index, ts: bars[index]!.getAttribute('data-ts'), count: Number(bars[index]!.getAttribute('data-count')) };
    });
    const bars = await page.$$('#histogram rect.bar');
    await bars[bar.index]!.click();
    await page.waitForFunction(() => location.hash.includes('from='));
    assert.equal((await hashParams(page)).from, bar.ts);
    await statusIs(page, bar.count === 1 ? '1 entry' : `${bar.count} entries`);
    await page.close();
  });

  test("times: in the browser's zone by default, to the millisecond and named; UTC by the switch, remembered; the range inputs in the same zone", async () => {
    const page = await newPage(browser);
    await page.emulateTimezone('Asia/Jakarta');
    await signIn(page, system.logs, ADMIN, ADMIN_PASSWORD);
    const at = now - 40 * MINUTE + 3 * MINUTE; // the entry "step 3"
    const wall = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
    const shown = () => page.$eval('#results tr.entry button.expand', (button) => button.textContent);
    await page.goto(explore(system, `"${MARK} step 3"`));
    await statusIs(page, '1 entry');
    assert.equal(await shown(), `${wall(at + 7 * 60 * MINUTE)} GMT+7`, 'Jakarta: UTC+7, with milliseconds and the zone');
    await screenshot(page, 'explore-time-zone');

    await page.click('#time-zone');
    await page.waitForFunction(() => document.querySelector('#time-zone')?.getAttribute('aria-pressed') === 'true');
    await page.waitForFunction(
      (expected) => document.querySelector('#results tr.entry button.expand')?.textContent === expected,
      {},
      `${wall(at)} UTC`,
    );
    await page.reload();
    await page.waitForFunction(
      (expected) => document.querySelector('#results tr.entry button.expand')?.textContent === expected,
      {},
      `${wall(at)} UTC`,
    );

    // Back to the browser's zone: an absolute range typed in it is read in it.
    await page.click('#time-zone');
    await page.waitForFunction(() => document.querySelector('#time-zone')?.getAttribute('aria-pressed') === 'false');
    await page.select('#range', 'custom');
    assert.equal(await textOf(page, 'label[for="from"]'), 'From (GMT+7)');
    const local = (ms: number) => new Date(ms + 7 * 60 * MINUTE).toISOString().slice(0, 19);
    const from = Math.floor((at - MINUTE) / 1000) * 1000;
    const to = Math.floor((at + MINUTE) / 1000) * 1000;
    await page.$eval('#from', (input, value) => ((input as HTMLInputElement).value = value), local(from));
    await page.$eval('#to', (input, value) => ((input as HTMLInputElement).value = value), local(to));
    await page.click('#search');
    await page.waitForFunction(() => location.hash.includes('from='));
    const params = await hashParams(page);
    assert.equal(params.from, new Date(from).toISOString());
    assert.equal(params.to, new Date(to).toISOString());
    await statusIs(page, '1 entry');
    await assertAccessible(page, 'explore with the time-zone switch');
    await page.close();
  });

  test('query help: field names and values suggested while typing, queries run before remembered in this browser', async () => {
    const page = await newPage(browser);
    await signIn(page, system.logs, ADMIN, ADMIN_PASSWORD);
    await page.goto(explore(system, `"${MARK}"`));
    await statusIs(page, '40 entries');
    const options = () => page.$$eval('#query-suggestions option', (nodes) => nodes.map((node) => (node as HTMLOptionElement).value));
    const typed = async (text: string, expected: string) => {
      await page.$eval('#query', (node) => ((node as HTMLInputElement).value = ''));
      await page.focus('#query');
      await page.keyboard.type(text);
      await page.waitForFunction(
        (value) => [...document.querySelectorAll('#query-suggestions option')].some((node) => (node as HTMLOptionElement).value === value),
        {},
        expected,
      );
    };
    await typed(`"${MARK}" lat`, `"${MARK}" latency:`);
    await typed(`"${MARK}" level:er`, `"${MARK}" level:"error"`);
    assert.ok(!(await options()).includes(`"${MARK}" level:"info"`), 'only values containing what is typed');
    // The suggestion taken (as the browser's list does), and run.
    await page.$eval('#query', (node, value) => ((node as HTMLInputElement).value = value), `"${MARK}" level:"error"`);
    await page.keyboard.press('Enter');
    await statusIs(page, '8 entries');
    // A relative range typed (now-2h); something else is refused at the box.
    await page.select('#range', 'relative');
    await page.waitForFunction(() => document.activeElement?.id === 'relative');
    await page.keyboard.type('yesterday');
    await page.keyboard.press('Enter');
    assert.equal(await page.$eval('#relative', (node) => (node as HTMLInputElement).validity.valid), false);
    assert.equal((await hashParams(page)).range, '1h');
    await page.$eval('#relative', (node) => ((node as HTMLInputElement).value = ''));
    await page.type('#relative', 'now-2h');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => location.hash.includes('range=now-2h'));
    await statusIs(page, '8 entries');
    assert.equal(await page.$eval('#range', (node) => (node as HTMLSelectElement).value), 'now-2h');
    // Another visit: the query run is offered again.
    await page.goto(explore(system, 'something else'));
    await typed(MARK, `"${MARK}" level:"error"`);
    await page.close();
  });

  test('everyday quality: compressed assets and no 404 on a cold load, the service out of reach said plainly and retried, dashboards never "Updated" beside an error', async () => {
    const page = await newPage(browser);
    const missing: string[] = [];
    const encodings = new Map<string, string>();
    page.on('response', (response) => {
      if (response.status() === 404) missing.push(response.url());
      if (response.url().includes('/console/assets/')) encodings.set(response.url(), response.headers()['content-encoding'] ?? '');
    });
    await signIn(page, system.logs, ADMIN, ADMIN_PASSWORD);
    assert.deepEqual(missing, [], 'nothing missing on a cold load (the favicon included)');
    const scripts = [...encodings].filter(([url]) => /\.(js|css)$/.test(url));
    assert.ok(scripts.length >= 2 && scripts.every(([, encoding]) => encoding === 'br'), JSON.stringify(scripts));

    await page.goto(explore(system, `"${MARK}" step`));
    await statusIs(page, '36 entries');
    await page.setOfflineMode(true);
    await page.$eval('#query', (node, value) => ((node as HTMLInputElement).value = value), `"${MARK}" step 3`);
    await page.click('#search');
    await page.waitForSelector('#status .unreachable');
    assert.match(await textOf(page, '#status'), /^The logs service is not reachable; retrying… Retry now$/);
    await assertAccessible(page, 'the service out of reach');
    await page.setOfflineMode(false);
    await page.click('#status button.retry');
    await statusIs(page, '1 entry');

    await page.goto(`${system.logs}/console/#/dashboards?refresh=5s`);
    await page.waitForFunction(() => document.querySelector('#updated')?.textContent?.startsWith('Updated'));
    await page.setOfflineMode(true);
    await page.waitForFunction(() => (document.querySelector('#updated') as HTMLElement | null)?.dataset.failed === 'true', {
      timeout: 30_000,
    });
    assert.match(await textOf(page, '#updated'), /^Update failed at /);
    assert.match(await textOf(page, '#dashboard-content'), /not reachable/);
    await page.setOfflineMode(false);
    await page.waitForFunction(() => (document.querySelector('#updated') as HTMLElement | null)?.dataset.failed === 'false', {
      timeout: 30_000,
    });
    await page.close();
  });

  test('dark mode follows the system, a switch overrides it and is remembered; no serious axe violation in it', async () => {
    const page = await newPage(browser);
    await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'dark' }]);
    await signIn(page, system.logs, ADMIN, ADMIN_PASSWORD);
    await page.goto(explore(system, `"${MARK}" step`));
    await statusIs(page, '36 entries');
    const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    assert.equal(await background(), 'rgb(21, 24, 28)', 'dark, as the system prefers');
    assert.equal(await textOf(page, '#theme'), 'Light mode');
    await page.click('#results tr.entry button.expand');
    await page.waitForSelector('#entry-detail');
    await assertAccessible(page, 'explore in dark mode');
    await screenshot(page, 'explore-dark');
    await page.keyboard.press('Escape');
    await page.click('#theme');
    await page.waitForFunction(() => document.documentElement.dataset.theme === 'light');
    assert.equal(await background(), 'rgb(246, 247, 249)');
    await page.reload({ waitUntil: 'load' });
    await statusIs(page, '36 entries');
    assert.equal(await background(), 'rgb(246, 247, 249)', 'the choice is kept');
    assert.equal(await page.$eval('#theme', (node) => node.getAttribute('aria-pressed')), 'false');
    await page.close();
  });
});
