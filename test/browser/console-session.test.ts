// The console's session in Chromium against a fresh `npm start` whose access tokens live 2 seconds:
// sign-in (a wrong password, the keyboard alone), the session kept past the access token's lifetime
// by rotating refresh tokens, a refresh token used twice ending the session (the API's reuse
// detection) and the console signing out, and sign-out. Waits are on responses and selectors.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, HTTPResponse, Page } from 'puppeteer-core';
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

const isRefresh = (response: HTTPResponse) => response.url().endsWith('/api/refresh') && response.request().method() === 'POST';
const refreshToken = (page: Page) => page.evaluate(() => sessionStorage.getItem('gerbang.refresh'));

describe('console session in Chromium (access tokens of 2 s)', { timeout: 600_000 }, () => {
  let system: System;
  let browser: Browser;
  before(async () => {
    browser = await launchChromium();
    system = await startSystem({ LOGS_ACCESS_TOKEN_TTL: '2s' });
  });
  after(async () => {
    await browser?.close();
    await system?.stop();
  });

  test('sign-in: the page is accessible, a wrong password shows the API message, the keyboard alone signs in', async () => {
    const page = await newPage(browser);
    await page.goto(`${system.logs}/`, { waitUntil: 'load' });
    await page.waitForSelector('#username');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'username', 'the form starts focused');
    await assertAccessible(page, 'sign-in');
    await screenshot(page, 'signin');

    await page.type('#username', ADMIN);
    await page.type('#password', 'Wrong#Passw0rd');
    const refused = page.waitForResponse((response) => response.url().endsWith('/api/login'));
    await page.keyboard.press('Enter');
    assert.equal((await refused).status(), 401);
    await page.waitForFunction(() => document.querySelector('#signin-error')?.textContent === 'invalid credentials');

    // Keyboard only: the password is selected after a failure; type over it, Enter.
    await page.keyboard.type(ADMIN_PASSWORD);
    await page.keyboard.press('Enter');
    await page.waitForSelector('#whoami');
    assert.equal(await textOf(page, '#whoami'), ADMIN);
    assert.deepEqual(page.problems, []);
    await page.close();
  });

  test('the session outlives the 2-second access token: each refresh rotates the refresh token, and calls go on', async () => {
    const page = await newPage(browser);
    await signIn(page, system.logs, ADMIN, ADMIN_PASSWORD);
    const first = await refreshToken(page);
    assert.ok(first);
    // Live tail searches every 2 s, past the token's lifetime every time.
    await page.goto(`${system.logs}/console/#/explore?range=15m&live=1`);
    const tokens = new Set<string | null>([first]);
    for (let i = 0; i < 3; i += 1) {
      const refreshed = await page.waitForResponse(isRefresh, { timeout: 30_000 });
      assert.equal(refreshed.status(), 200);
      const searched = await page.waitForResponse((r) => r.url().endsWith('/api/v1/logs/list/paginate'), { timeout: 30_000 });
      assert.equal(searched.status(), 200, 'the search after the refresh is answered');
      tokens.add(await refreshToken(page));
    }
    assert.ok(tokens.size >= 3, 'a new refresh token at each refresh');
    assert.equal(await page.$('#username'), null, 'still signed in');
    assert.deepEqual(page.problems, []);
    await page.close();
  });

  test('a refresh token used twice ends the whole session (reuse detection), and the console signs out', async () => {
    const page = await newPage(browser);
    await signIn(page, system.logs, ADMIN, ADMIN_PASSWORD);
    // A page that calls the API once, so nothing refreshes behind the test's back.
    await page.goto(`${system.logs}/console/#/keys`);
    await page.waitForSelector('#keys-table');
    const copied = (await refreshToken(page))!;
    // Someone else uses the console's refresh token first (it was copied): the API rotates it...
    const stolen = await system.api.request('POST', '/api/refresh', { body: { refresh_token: copied } });
    assert.equal(stolen.status, 200);
    // ...so the console's next refresh presents a retired token: the API revokes the session.
    const refreshed = page.waitForResponse(isRefresh, { timeout: 30_000 });
    await page.goto(`${system.logs}/console/#/explore?range=15m&live=1`);
    assert.equal((await refreshed).status(), 401);
    await page.waitForSelector('#username');
    assert.match(await textOf(page, '#signin-error'), /session has ended/);
    assert.equal(await refreshToken(page), null);
    // The whole session is gone: the other holder's new tokens too.
    const me = await system.api.request('GET', '/api/me', { token: stolen.body.token.access_token });
    assert.equal(me.status, 401);
    const again = await system.api.request('POST', '/api/refresh', { body: { refresh_token: stolen.body.token.refresh_token } });
    assert.equal(again.status, 401);
    await page.close();
  });

  test('sign-out ends the session on the server and forgets the refresh token', async () => {
    const page = await newPage(browser);
    await signIn(page, system.logs, ADMIN, ADMIN_PASSWORD);
    const token = (await refreshToken(page))!;
    const loggedOut = page.waitForResponse((r) => r.url().endsWith('/api/logout'));
    await page.click('#signout');
    assert.equal((await loggedOut).status(), 200);
    await page.waitForSelector('#username');
    assert.equal(await refreshToken(page), null);
    const reuse = await system.api.request('POST', '/api/refresh', { body: { refresh_token: token } });
    assert.equal(reuse.status, 401);
    assert.deepEqual(page.problems, []);
    await page.close();
  });
});
