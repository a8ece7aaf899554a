// The console in a real browser (Debian's Chromium, installed by .ci/run, driven by puppeteer-core,
// which never downloads a browser): sign in, search, see the rows the API answers, sign out.
// Screenshots go to test-output/screenshots/. Waits are on selectors and responses, never sleeps.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import puppeteer, { type Browser } from 'puppeteer-core';
// @ts-expect-error a plain ES module script without types
import { buildConsole } from '../../scripts/build-console.mjs';
import { listenOnLoopback } from '../helpers/listen.js';
import { LOGS_ADMIN, LOGS_ADMIN_PASSWORD, startTestLogs, type TestLogs } from '../helpers/logs.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((path) => existsSync(path));
const SCREENSHOTS = join(process.cwd(), 'test-output', 'screenshots');

describe('web console in Chromium', { skip: CHROMIUM ? false : 'no Chromium (bash .ci/run installs it)', timeout: 90_000 }, () => {
  let logs: TestLogs;
  let browser: Browser;
  let base = '';
  const directory = mkdtempSync(join(tmpdir(), 'gerbang-console-'));
  before(async () => {
    await buildConsole(directory);
    process.env.LOGS_CONSOLE_DIR = directory;
    logs = await startTestLogs('sqlite');
    base = `http://127.0.0.1:${await listenOnLoopback(logs.app)}`;
    browser = await puppeteer.launch({ executablePath: CHROMIUM!, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
    mkdirSync(SCREENSHOTS, { recursive: true });
  });
  after(async () => {
    delete process.env.LOGS_CONSOLE_DIR;
    await browser?.close();
    await logs?.close();
    rmSync(directory, { recursive: true, force: true });
  });

  test('signs in, shows the search answer, signs out', async () => {
    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 800 });
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(String(error)));
    page.on('response', (response) => {
      const expected = /\/favicon\.ico$|\/list\/paginate$|\/histogram$/.test(response.url());
      if (response.status() >= 400 && !expected) errors.push(`${response.status()} ${response.url()}`);
    });
    await page.goto(`${base}/`, { waitUntil: 'load' });
    await page.waitForSelector('#username');
    await page.screenshot({ path: join(SCREENSHOTS, 'signin.png') });
    await page.type('#username', LOGS_ADMIN);
    await page.type('#password', LOGS_ADMIN_PASSWORD);
    const searched = page.waitForResponse((response) => response.url().endsWith('/api/v1/logs/list/paginate'));
    await page.click('button[type=submit]');
    assert.equal((await searched).status(), 200);
    await page.waitForSelector('#whoami');
    assert.equal(await page.$eval('#whoami', (node) => node.textContent), LOGS_ADMIN);
    await page.waitForSelector('#status:not(:empty)');
    await page.screenshot({ path: join(SCREENSHOTS, 'explore.png') });
    const refused = page.waitForResponse((response) => response.url().endsWith('/api/v1/logs/list/paginate'));
    await page.$eval('#query', (node) => ((node as HTMLInputElement).value = '(unclosed'));
    await page.click('form[role=search] button');
    assert.equal((await refused).status(), 400);
    await page.waitForFunction(() => /@\d+/.test(document.querySelector('#status')?.textContent ?? ''));
    await page.click('#signout');
    await page.waitForSelector('#username');
    assert.equal(await page.evaluate(() => sessionStorage.getItem('gerbang.refresh')), null);
    assert.deepEqual(
      errors.filter((e) => !/status of 400/.test(e)),
      [],
    );
  });
});
