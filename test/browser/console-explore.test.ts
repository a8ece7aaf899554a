// The explore page in Chromium against a fresh `npm start` on SQLite: a search whose histogram and
// rows are checked against the API's own answer to the same request, an entry's detail with its
// trace link to the waterfall, the fields sidebar (a value as a filter, and left out), the URL holding
// the search, a syntax error marked at its position, drag-to-zoom, live tail, 10,000 rows drawn a
// window at a time (and a field's values counted in the service's sample of them), the tenant switcher, the keyboard alone, a phone-sized screen and the language.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'puppeteer-core';
import {
  ADMIN,
  ADMIN_PASSWORD,
  assertAccessible,
  hashParams,
  launchChromium,
  newPage,
  screenshot,
  signIn,
  startSystem,
  textOf,
  type System,
} from './harness.js';

const MINUTE = 60_000;
const MARK = `m${Date.now().toString(36)}`;
const BIG = `${MARK}big`;
const LIVE = `${MARK}live`;
const TRACE_ID = 'ab'.repeat(16);
const ns = (ms: number) => `${BigInt(ms) * 1_000_000n}`;

/** The status line's count ("120 entries"). */
const statusIs = (page: Page, text: string) =>
  page.waitForFunction((expected) => document.querySelector('#status')?.textContent === expected, {}, text);

async function search(page: Page, query: string): Promise<void> {
  await page.$eval('#query', (node, value) => ((node as HTMLInputElement).value = value), query);
  await page.click('#search');
}

describe('console explore in Chromium', { timeout: 900_000 }, () => {
  let system: System;
  let browser: Browser;
  const now = Date.now();

  before(async () => {
    browser = await launchChromium();
    system = await startSystem();
    // 120 entries over the last 50 minutes: hosts h1 (80) and h2 (40), every fourth an error; the
    // newest belongs to a trace.
    await system.api.ship(
      Array.from({ length: 120 }, (_, i) => ({
        '@timestamp': new Date(now - 50 * MINUTE + i * 25_000).toISOString(),
        message: `${MARK} request ${i}`,
        host: i % 3 === 2 ? 'h2' : 'h1',
        level: i % 4 === 0 ? 'error' : 'info',
        service: 'checkout',
        latency: i,
        ...(i === 119 ? { trace_id: TRACE_ID, span_id: '1'.repeat(16) } : {}),
      })),
    );
    // That trace: checkout calls payments.
    const span = (service: string, spanId: string, parent: string | undefined, name: string, startMs: number, endMs: number) => ({
      resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] },
      scopeSpans: [
        {
          spans: [
            {
              traceId: TRACE_ID,
              spanId,
              ...(parent ? { parentSpanId: parent } : {}),
              name,
              kind: 2,
              startTimeUnixNano: ns(startMs),
              endTimeUnixNano: ns(endMs),
              status: { code: 1 },
            },
          ],
        },
      ],
    });
    const traceStart = now - 2 * MINUTE;
    await system.api.asAdmin('POST', '/v1/traces', {
      resourceSpans: [
        span('checkout', '1'.repeat(16), undefined, 'POST /checkout', traceStart, traceStart + 250),
        span('payments', '2'.repeat(16), '1'.repeat(16), 'charge card', traceStart + 20, traceStart + 200),
      ],
    });
    // 10,000 entries over the last 30 minutes, for the windowed table.
    for (let batch = 0; batch < 2; batch += 1)
      await system.api.ship(
        Array.from({ length: 5000 }, (_, j) => {
          const i = batch * 5000 + j;
          return { '@timestamp': new Date(now - 30 * MINUTE + i * 150).toISOString(), message: `${BIG} line ${i}`, host: 'bulk' };
        }),
      );
  });
  after(async () => {
    await browser?.close();
    await system?.stop();
  });

  test('a search: the histogram and the rows are the API answer to the same request; an entry opens whole, its trace as a waterfall', async () => {
    const page = await newPage(browser);
    await signIn(page, system.logs, ADMIN, ADMIN_PASSWORD);
    await page.waitForSelector('#query');
    const histogramRequest = page.waitForRequest((request) => request.url().endsWith('/api/v1/logs/histogram'));
    const listRequest = page.waitForRequest((request) => request.url().endsWith('/api/v1/logs/list/paginate'));
    await search(page, `"${MARK}"`);
    await statusIs(page, '120 entries');
    await page.waitForSelector('#histogram rect.bar');
    assert.equal((await hashParams(page)).q, `"${MARK}"`, 'the URL holds the search');

    // The same requests to the API: the chart's bars and the table's rows are its answer.
    const token = await system.api.admin();
    const histogram = await system.api.request('POST', '/api/v1/logs/histogram', {
      body: JSON.parse((await histogramRequest).postData()!),
      token,
    });
    const bars = await page.$$eval('#histogram rect.bar', (nodes) =>
      nodes.map((bar) => [bar.getAttribute('data-ts'), Number(bar.getAttribute('data-count'))]),
    );
    assert.deepEqual(
      bars,
      histogram.body.buckets.map((bucket: { ts: string; count: number }) => [bucket.ts, bucket.count]),
    );
    assert.equal(
      bars.reduce((sum, [, count]) => sum + Number(count), 0),
      120,
    );
    const list = await system.api.request('POST', '/api/v1/logs/list/paginate', {
      body: JSON.parse((await listRequest).postData()!),
      token,
    });
    const rows = await page.$$eval('#results tr.entry', (nodes) =>
      nodes.map((row) => ({ index: Number(row.getAttribute('aria-rowindex')) - 2, message: row.querySelector('.c-message')!.textContent })),
    );
    assert.ok(rows.length >= 10, `${rows.length} rows drawn`);
    for (const row of rows) assert.equal(row.message, list.body.data[row.index].message, `row ${row.index}`);
    assert.equal(rows[0]!.message, `${MARK} request 119`, 'newest first');
    await assertAccessible(page, 'explore');
    await screenshot(page, 'explore');

    // The newest entry opens whole: attributes, and its trace as a link to the waterfall.
    await page.click('#results tr.entry[aria-rowindex="2"] button.expand');
    await page.waitForSelector('#entry-detail');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'entry-detail', 'focus moves to the detail');
    const attributes = await page.$$eval('#entry-detail table.attributes tbody tr', (trs) =>
      Object.fromEntries(trs.map((tr) => [tr.querySelector('th')!.textContent, tr.querySelector('td')!.textContent])),
    );
    assert.equal(attributes.latency, '119');
    await assertAccessible(page, 'explore with an entry open');
    await screenshot(page, 'explore-detail');
    await page.click('#trace-link');
    await page.waitForSelector('#waterfall tr.span-row');
    const spans = await page.$$eval('#waterfall tr.span-row button.span-name', (buttons) => buttons.map((b) => b.textContent));
    assert.deepEqual(spans, ['checkout: POST /checkout', 'payments: charge card'], 'parent first, then its child');
    assert.equal((await hashParams(page)).trace, TRACE_ID);
    await assertAccessible(page, 'trace waterfall');
    await screenshot(page, 'apm-trace');
    // Back returns to the search as it was.
    await page.goBack();
    await statusIs(page, '120 entries');
    assert.deepEqual(page.problems, []);
    await page.close();
  });

  test('fields: a value keeps only it, the minus leaves it out; the URL holds the search across a reload', async () => {
    const page = await newPage(browser);
    await signIn(page, system.logs, ADMIN, ADMIN_PASSWORD);
    await page.goto(`${system.logs}/console/#/explore?q=${encodeURIComponent(`"${MARK}"`)}&range=1h`);
    await statusIs(page, '120 entries');
    const host = await page.waitForSelector('xpath/.//button[contains(@class, "field") and text()="host"]');
    await host!.click();
    await page.waitForSelector('#fields .value-row button.value');
    const values = () => page.$$eval('#fields .value-row button.value', (buttons) => buttons.map((button) => button.textContent));
    assert.deepEqual(await values(), ['h1 (80, 66.7%)', 'h2 (40, 33.3%)']);
    assert.equal(await textOf(page, '#fields li[data-field="host"] .field-summary'), 'string · in 120 / 120 (100.0%) · 2 distinct values');
    const h1 = await page.waitForSelector(
      'xpath/.//li[contains(@class, "value-row")][button[text()="h1 (80, 66.7%)"]]/button[contains(@class, "value")]',
    );
    await h1!.click();
    await statusIs(page, '80 entries');
    assert.equal((await hashParams(page)).q, `"${MARK}" host:"h1"`);

    await page.goBack();
    await statusIs(page, '120 entries');
    await (await page.waitForSelector('xpath/.//button[contains(@class, "field") and text()="host"]'))!.click();
    const leaveOut = await page.waitForSelector(
      'xpath/.//li[contains(@class, "value-row")][button[text()="h1 (80, 66.7%)"]]/button[contains(@class, "exclude")]',
    );
    await leaveOut!.click();
    await statusIs(page, '40 entries');
    assert.equal((await hashParams(page)).q, `"${MARK}" NOT host:"h1"`);

    // The statistics follow the query: of the 30 errors, 20 are on h1 and 10 on h2.
    await search(page, `"${MARK}" level:error`);
    await statusIs(page, '30 entries');
    await (await page.waitForSelector('xpath/.//button[contains(@class, "field") and text()="host"]'))!.click();
    await page.waitForFunction(() => document.querySelectorAll('#fields .value-row button.value').length === 2);
    assert.deepEqual(await values(), ['h1 (20, 66.7%)', 'h2 (10, 33.3%)']);
    await page.goBack();
    await statusIs(page, '40 entries');

    await page.reload({ waitUntil: 'load' });
    await statusIs(page, '40 entries');
    assert.equal(await page.$eval('#query', (node) => (node as HTMLInputElement).value), `"${MARK}" NOT host:"h1"`);
    assert.deepEqual(page.problems, []);
    await page.close();
  });

  test('a syntax error is marked in the query at the position the API gives', async () => {
    const page = await newPage(browser);
    await signIn(page, system.logs, ADMIN, ADMIN_PASSWORD);
    await page.waitForSelector('#query');
    const refused = page.waitForResponse((response) => response.url().endsWith('/api/v1/logs/list/paginate') && response.status() === 400);
    await search(page, 'level:error AND (host:h1');
    const body = (await (await refused).json()) as { position: number; detail: string };
    await page.waitForSelector('#query-error[data-position] mark');
    assert.equal(await page.$eval('#query-error', (node) => Number((node as HTMLElement).dataset.position)), body.position);
    assert.equal(await page.$eval('#query', (node) => node.getAttribute('aria-invalid')), 'true');
    // In plain words: the parser's sentence and the character, not the API's envelope.
    const sentence = body.detail.replace(/^query: /, '').replace(/ at position \d+$/, '');
    assert.ok(
      (await textOf(page, '#query-error')).startsWith(`The query could not be read: ${sentence} (at character ${body.position + 1})`),
      await textOf(page, '#query-error'),
    );
    assert.doesNotMatch(await textOf(page, '#query-error'), /invalid json body/);
    await assertAccessible(page, 'explore with a syntax error');
    await screenshot(page, 'explore-syntax-error');
    await page.close();
  });

  test('drag across the histogram zooms to an absolute range; a relative range with live tail shows a new entry by itself', async () => {
    const page = await newPage(browser);
    await signIn(page, system.logs, ADMIN, ADMIN_PASSWORD);
    await page.goto(`${system.logs}/console/#/explore?q=${encodeURIComponent(`"${MARK}"`)}&range=1h`);
    await statusIs(page, '120 entries');
    const box = (await (await page.$('#histogram svg'))!.boundingBox())!;
    await page.mouse.move(box.x + 2, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.4, box.y + box.height / 2, { steps: 5 });
    await page.mouse.up();
    await page.waitForFunction(() => location.hash.includes('from='));
    const zoomed = await hashParams(page);
    assert.ok(Date.parse(zoomed.to!) - Date.parse(zoomed.from!) < 30 * MINUTE, JSON.stringify(zoomed));
    // The page is drawn again for the new range: its select then says "custom".
    await page.waitForFunction(() => (document.querySelector('#range') as HTMLSelectElement | null)?.value === 'custom');
    await page.waitForFunction(() => /^\d+ entries$/.test(document.querySelector('#status')?.textContent ?? ''));
    const inRange = Number((await textOf(page, '#status')).split(' ')[0]);
    assert.ok(inRange > 0 && inRange < 120, `${inRange}`);

    await search(page, LIVE);
    await page.select('#range', '15m');
    await page.waitForFunction(() => !location.hash.includes('from='));
    await statusIs(page, 'No entries');
    await page.click('#live');
    await page.waitForFunction(() => location.hash.includes('live=1'));
    const fresh = `${LIVE} arrived`;
    await system.api.ship([{ '@timestamp': new Date().toISOString(), message: fresh, host: 'h1' }]);
    await page.waitForFunction(
      (text) => [...document.querySelectorAll('#results td.c-message')].some((cell) => cell.textContent === text),
      { timeout: 30_000 },
      fresh,
    );
    await page.close();
  });

  test('10,000 rows: scrolling loads them page by page, the table keeps only a window of them in the document', async () => {
    const page = await newPage(browser);
    await signIn(page, system.logs, ADMIN, ADMIN_PASSWORD);
    await page.goto(`${system.logs}/console/#/explore?q=${encodeURIComponent(`"${BIG}"`)}&range=1h`);
    await statusIs(page, '10,000 entries');
    const loaded = () => page.$eval('#loaded', (node) => Number((node as HTMLElement).dataset.count));
    let most = 0;
    for (let round = 0; round < 40 && (await loaded()) < 10_000; round += 1) {
      const before = await loaded();
      await page.$eval('#results', (node) => (node.scrollTop = node.scrollHeight));
      await page.waitForFunction(
        (count) => Number((document.querySelector('#loaded') as HTMLElement | null)?.dataset.count) > count,
        {},
        before,
      );
      most = Math.max(most, await page.$$eval('#results tr.entry', (rows) => rows.length));
    }
    assert.equal(await loaded(), 10_000);
    assert.ok(most < 200, `${most} rows in the document at most`);
    await page.$eval('#results', (node) => (node.scrollTop = node.scrollHeight));
    await page.waitForSelector('#results tr.entry[aria-rowindex="10001"]');
    assert.equal(await textOf(page, '#results tr.entry[aria-rowindex="10001"] .c-message'), `${BIG} line 0`, 'the oldest is last');
    assert.equal(await page.$eval('#results-table', (node) => node.getAttribute('aria-rowcount')), '10001');
    await page.$eval('#results', (node) => (node.scrollTop = node.scrollHeight / 2));
    await page.waitForSelector('#results tr.entry[aria-rowindex="5001"]');
    assert.equal(await textOf(page, '#results tr.entry[aria-rowindex="5001"] .c-message'), `${BIG} line 5000`);
    await screenshot(page, 'explore-10000');

    // Past the service's sample (2,000 matches), a field's values are of the newest matches, and the sidebar says so.
    await (await page.waitForSelector('xpath/.//button[contains(@class, "field") and text()="host"]'))!.click();
    await page.waitForFunction(() => Boolean(document.querySelector('#fields li[data-field="host"] .field-summary')?.textContent));
    assert.equal(
      await textOf(page, '#fields li[data-field="host"] .field-summary'),
      'string · in 2,000 / 2,000 (100.0%) · 1 distinct values · Counted in the newest 2,000 of 10,000 entries',
    );
    assert.deepEqual(
      await page.$$eval('#fields li[data-field="host"] .value-row button.value', (buttons) => buttons.map((button) => button.textContent)),
      ['bulk (2,000, 100.0%)'],
    );
    await page.close();
  });

  test('the tenant switcher (tenants:manage): the search runs in the chosen tenant', async () => {
    const tenant = await system.api.asAdmin('POST', '/api/tenants', { name: `${MARK}-branch` }, 201);
    await system.api.ship([{ '@timestamp': new Date().toISOString(), message: `${MARK} in the branch`, host: 'b1' }], tenant.id);
    const page = await newPage(browser);
    await signIn(page, system.logs, ADMIN, ADMIN_PASSWORD);
    await page.goto(`${system.logs}/console/#/explore?q=${encodeURIComponent(`"${MARK} in the branch"`)}&range=1h`);
    await statusIs(page, 'No entries');
    await page.waitForSelector(`#tenant option[value="${tenant.id}"]`);
    const searched = page.waitForRequest((r) => r.url().endsWith('/api/v1/logs/list/paginate'));
    await page.select('#tenant', tenant.id);
    assert.equal((await searched).headers()['x-tenant-id'], tenant.id);
    await statusIs(page, '1 entry');
    await page.select('#tenant', 'default');
    await statusIs(page, 'No entries');
    await page.close();
  });

  test('the keyboard alone: skip link, a page from the navigation, a search, an entry opened and closed', async () => {
    const page = await newPage(browser);
    await signIn(page, system.logs, ADMIN, ADMIN_PASSWORD);
    await page.waitForSelector('#query');
    const focused = () =>
      page.evaluate(() => document.activeElement?.id || document.activeElement?.className || document.activeElement?.tagName);
    const tabTo = async (check: () => Promise<boolean>, limit: number) => {
      for (let i = 0; i < limit; i += 1) {
        if (await check()) return;
        await page.keyboard.press('Tab');
      }
      assert.fail(`not reached with ${limit} tabs; at ${await focused()}`);
    };
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await page.keyboard.press('Tab');
    assert.equal(await focused(), 'skip');
    await page.keyboard.press('Enter');
    assert.equal(await focused(), 'content');

    await tabTo(async () => (await focused()) === 'query', 10);
    await page.keyboard.type(`"${MARK}"`);
    await page.keyboard.press('Enter');
    await statusIs(page, '120 entries');
    await tabTo(() => page.evaluate(() => document.activeElement?.classList.contains('expand') ?? false), 400);
    await page.keyboard.press('Enter');
    await page.waitForSelector('#entry-detail');
    assert.equal(await focused(), 'entry-detail');
    await tabTo(async () => (await focused()) === 'detail-close', 5);
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => !document.querySelector('#entry-detail'));

    // Up to the navigation and into another page.
    await page.focus('#skip');
    await tabTo(async () => (await focused()) === 'nav-audit', 20);
    await page.keyboard.press('Enter');
    await page.waitForSelector('#audit-table');
    assert.equal(await page.evaluate(() => location.hash), '#/audit');
    await page.close();
  });

  test('a phone-sized screen scrolls only vertically; the language toggle translates the page, table headers too', async () => {
    const page = await newPage(browser, { width: 375, height: 740 });
    await signIn(page, system.logs, ADMIN, ADMIN_PASSWORD);
    await page.goto(`${system.logs}/console/#/explore?q=${encodeURIComponent(`"${MARK}"`)}&range=1h`);
    await statusIs(page, '120 entries');
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 1, `the page is ${overflow}px wider than the phone`);
    const [results, fields] = await Promise.all([
      page.$eval('#results', (node) => node.getBoundingClientRect().top),
      page.$eval('#fields-title', (node) => node.getBoundingClientRect().top),
    ]);
    assert.ok(fields > results, 'on a phone the field list comes after the results');
    await screenshot(page, 'explore-phone');
    const headers = () => page.$$eval('#results-table th .label', (labels) => labels.map((label) => label.textContent));
    assert.deepEqual(await headers(), ['Time', 'Level', 'Service', 'Host', 'Message']);
    await page.click('#language');
    await page.waitForFunction(() => document.documentElement.lang === 'id');
    await page.waitForFunction(() => document.querySelector('#status')?.textContent === '120 entri');
    assert.deepEqual(await headers(), ['Waktu', 'Tingkat', 'Layanan', 'Host', 'Pesan']);
    assert.equal(await textOf(page, '#search'), 'Cari');
    assert.equal(await textOf(page, '#fields-title'), 'Bidang', '"Fields" is Bidang, not Kolom (columns)');
    await assertAccessible(page, 'explore in Indonesian on a phone');
    await page.click('#language');
    await page.waitForFunction(() => document.documentElement.lang === 'en');
    await page.close();
  });
});
