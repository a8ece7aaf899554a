// The console's account page and sign-in's second factor in Chromium, against a fresh `npm start`:
// an authenticator app enrolled with the QR code drawn by the page (the code computed here from the
// key the page shows), the recovery codes shown once and downloaded, sign-in asking for a code;
// a passkey registered and used with Chromium's virtual authenticator (DevTools protocol); the
// sessions list with how each began, and ending the others. Waits are on responses and selectors.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'puppeteer-core';
import { totpCode } from '../../src/shared/mfa/totp.js';
import { closedPort } from '../helpers/upstream.js';
import {
  ADMIN,
  ADMIN_PASSWORD,
  assertAccessible,
  launchChromium,
  newPage,
  PASSWORD,
  saveDownloads,
  screenshot,
  signIn,
  startSystem,
  textOf,
  type System,
} from './harness.js';

const STEP_MS = 30_000;

async function signOut(page: Page): Promise<void> {
  await Promise.all([page.waitForSelector('#username'), page.click('#signout')]);
}

async function openAccount(page: Page): Promise<void> {
  await page.evaluate(() => (location.hash = '#/account'));
  await page.waitForSelector('#account-page #sessions');
}

/** The method of the session this page signed in with, as the sessions table shows it. */
async function currentMethod(page: Page): Promise<string> {
  return page.$eval('#sessions', (table) => {
    const row = [...table.querySelectorAll('tbody tr')].find((tr) => tr.querySelector('strong'));
    return row?.children[4]?.textContent ?? '';
  });
}

describe('console account: second factor, passkeys, sessions in Chromium', { timeout: 600_000 }, () => {
  let system: System;
  let browser: Browser;
  let base: string;
  before(async () => {
    // Passkeys need a domain (not an address) as relying party: the console is opened at localhost.
    const port = await closedPort();
    base = `http://localhost:${port}`;
    browser = await launchChromium();
    system = await startSystem({ LOGS_PORT: String(port), LOGS_WEBAUTHN_RP_ID: 'localhost', LOGS_WEBAUTHN_ORIGIN: base });
  });
  after(async () => {
    await browser?.close();
    await system?.stop();
  });

  test('an authenticator app enrolled from the QR code, recovery codes once, then sign-in asks for a code', async () => {
    const user = await system.api.userWith(['logs:read'], 'totpuser');
    const page = await newPage(browser);
    await signIn(page, base, user, PASSWORD);
    await openAccount(page);
    await page.waitForSelector('#totp-setup');
    await assertAccessible(page, 'account page');
    await screenshot(page, 'account');

    await page.click('#totp-setup');
    await page.waitForSelector('#totp-qr path');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'enrol-code', 'focus goes to the code');
    const qrPath = await page.$eval('#totp-qr path', (path) => path.getAttribute('d') ?? '');
    assert.ok(qrPath.length > 1000, 'the QR code is drawn by the page');
    const secret = (await textOf(page, '#totp-secret')).replace(/\s+/g, '');
    assert.match(secret, /^[A-Z2-7]{32}$/);
    await assertAccessible(page, 'enrolment');
    await screenshot(page, 'account-enrol');

    await page.keyboard.type('000000');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => (document.querySelector('#enrol-error')?.textContent ?? '') !== '');
    assert.equal(await textOf(page, '#enrol-error'), 'invalid credentials');
    const confirmed = page.waitForResponse((response) => response.url().endsWith('/api/mfa/totp/confirm') && response.status() === 200);
    await page.keyboard.type(totpCode(secret, Date.now()));
    await page.keyboard.press('Enter');
    await confirmed;
    await page.waitForSelector('#recovery-codes');
    const codes = await page.$$eval('#recovery-codes li', (items) => items.map((item) => item.textContent ?? ''));
    assert.equal(codes.length, 10);
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'recovery-download');
    await assertAccessible(page, 'recovery codes');
    await screenshot(page, 'account-recovery-codes');
    const downloads = await saveDownloads(page);
    const saved = downloads.next();
    await page.keyboard.press('Enter');
    const file = readFileSync(await saved, 'utf8');
    for (const code of codes) assert.ok(file.includes(code), `${code} is in the downloaded file`);
    await page.click('#recovery-done');
    await page.waitForFunction(() => document.querySelector('#totp-state')?.textContent === 'Authenticator app: on');
    assert.equal(await page.$('#recovery-codes'), null, 'the codes are not shown again');

    await signOut(page);
    await page.type('#username', user);
    await page.type('#password', PASSWORD);
    await page.keyboard.press('Enter');
    await page.waitForSelector('#mfa-code');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'mfa-code');
    await assertAccessible(page, 'code prompt');
    await screenshot(page, 'signin-code');
    await page.keyboard.type('123456');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.querySelector('#mfa-error')?.textContent === 'invalid credentials');
    // The confirming code's step is spent: the next step's code (inside the one step of drift).
    await page.keyboard.type(totpCode(secret, Date.now() + STEP_MS));
    await page.keyboard.press('Enter');
    await page.waitForSelector('#whoami');
    await openAccount(page);
    assert.equal(await currentMethod(page), 'password+totp');

    // A recovery code instead of the app.
    await signOut(page);
    await page.type('#username', user);
    await page.type('#password', PASSWORD);
    await page.keyboard.press('Enter');
    await page.waitForSelector('#mfa-code');
    await page.keyboard.type(codes[0]!);
    await page.keyboard.press('Enter');
    await page.waitForSelector('#whoami');
    await openAccount(page);
    assert.equal(await currentMethod(page), 'password+recovery_code');
    await page.waitForFunction(() => document.querySelector('#recovery-left')?.textContent?.endsWith(': 9'));
    assert.deepEqual(page.problems, []);
    await page.close();
  });

  test('new recovery codes from the account page with a current code: shown once with a download; the old ones stop working', async () => {
    const user = await system.api.userWith(['logs:read'], 'regenuser');
    const page = await newPage(browser);
    await signIn(page, base, user, PASSWORD);
    await openAccount(page);
    await page.waitForSelector('#totp-setup');
    await page.click('#totp-setup');
    await page.waitForSelector('#totp-secret');
    const secret = (await textOf(page, '#totp-secret')).replace(/\s+/g, '');
    await page.keyboard.type(totpCode(secret, Date.now()));
    await page.keyboard.press('Enter');
    await page.waitForSelector('#recovery-codes');
    const old = await page.$$eval('#recovery-codes li', (items) => items.map((item) => item.textContent ?? ''));
    await page.click('#recovery-done');
    await page.waitForSelector('#recovery-new-code');

    await page.type('#recovery-new-code', '000000');
    await page.click('#recovery-new button[type=submit]');
    await page.waitForFunction(() => document.querySelector('#recovery-new-error')?.textContent === 'invalid credentials');
    await page.$eval('#recovery-new-code', (input) => ((input as HTMLInputElement).value = ''));
    // The confirming code's step is spent: the next step's code (inside the one step of drift).
    await page.type('#recovery-new-code', totpCode(secret, Date.now() + STEP_MS));
    const made = page.waitForResponse((response) => response.url().endsWith('/api/mfa/recovery-codes'));
    await page.click('#recovery-new button[type=submit]');
    assert.equal((await made).status(), 200);
    await page.waitForSelector('#recovery-codes');
    const fresh = await page.$$eval('#recovery-codes li', (items) => items.map((item) => item.textContent ?? ''));
    assert.equal(fresh.length, 10);
    assert.ok(!fresh.some((code) => old.includes(code)), 'all new');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'recovery-download');
    await assertAccessible(page, 'new recovery codes');
    const downloads = await saveDownloads(page);
    const saved = downloads.next();
    await page.keyboard.press('Enter');
    const file = readFileSync(await saved, 'utf8');
    for (const code of fresh) assert.ok(file.includes(code), `${code} is in the downloaded file`);
    await page.click('#recovery-done');
    await page.waitForFunction(() => document.querySelector('#recovery-left')?.textContent?.endsWith(': 10'));
    assert.equal(await page.$('#recovery-codes'), null, 'the codes are not shown again');

    const challenge = async () =>
      (
        (await system.api.request('POST', '/api/login', { body: { username: user, password: PASSWORD } })).body as {
          mfa: { challenge: string };
        }
      ).mfa.challenge;
    const withOld = await system.api.request('POST', '/api/login/mfa', { body: { challenge: await challenge(), code: old[0] } });
    assert.equal(withOld.status, 401, 'an old code no longer signs in');
    const withNew = await system.api.request('POST', '/api/login/mfa', { body: { challenge: await challenge(), code: fresh[0] } });
    assert.equal(withNew.status, 200, 'a new one does');
    assert.deepEqual(page.problems, []);
    await page.close();
  });

  test("a passkey registered and used with Chromium's virtual authenticator; sessions listed and the others ended", async () => {
    const user = await system.api.userWith(['logs:read'], 'passkeyuser');
    const other = await system.api.login(user, PASSWORD);
    const page = await newPage(browser);
    const cdp = await page.createCDPSession();
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
    });
    await signIn(page, base, user, PASSWORD);
    await openAccount(page);
    await page.waitForSelector('#no-passkeys');
    await page.type('#passkey-name', 'Laptop');
    const registered = page.waitForResponse(
      (response) => response.url().endsWith('/api/passkeys') && response.request().method() === 'POST',
    );
    await page.click('#passkey-add');
    assert.equal((await registered).status(), 201);
    await page.waitForSelector('#passkeys');
    assert.equal(await page.$eval('#passkeys tbody td', (cell) => cell.textContent), 'Laptop');
    await assertAccessible(page, 'passkeys');
    await screenshot(page, 'account-passkeys');

    await signOut(page);
    await assertAccessible(page, 'sign-in with the passkey button');
    const signedIn = page.waitForResponse((response) => response.url().endsWith('/api/login/passkey'));
    await page.focus('#passkey-signin');
    await page.keyboard.press('Enter');
    assert.equal((await signedIn).status(), 200);
    await page.waitForSelector('#whoami');
    assert.equal(await textOf(page, '#whoami'), user);
    await openAccount(page);
    assert.equal(await currentMethod(page), 'passkey');
    // The passkey's last use is shown (the third column).
    await page.waitForFunction(() => /\d{4}-\d\d-\d\d/.test(document.querySelector('#passkeys tbody td:nth-child(3)')?.textContent ?? ''));

    // The sessions: this one, the API's and the password one signed out above (ended); end the others.
    const rows = await page.$$eval('#sessions tbody tr', (trs) => trs.length);
    assert.equal(rows, 2, 'this session and the one the API opened');
    await screenshot(page, 'account-sessions');
    const ended = page.waitForResponse((response) => response.url().endsWith('/api/sessions') && response.request().method() === 'DELETE');
    await page.click('#end-others');
    assert.equal((await ended).status(), 200);
    await page.waitForFunction(() => document.querySelector('#sessions-notice')?.textContent?.endsWith(' 1'));
    const refused = await system.api.request('GET', '/api/me', { token: other.access_token });
    assert.equal(refused.status, 401, 'the other session is refused at once');
    const mine = await page.$$eval('#sessions tbody tr', (trs) => trs.length);
    assert.equal(mine, 1);
    assert.deepEqual(page.problems, []);
    await page.close();
  });

  test("an administrator ends a user's sessions, removes their second factor and a passkey from the account page", async () => {
    const { users } = await system.api.asAdmin('GET', '/api/users');
    const target = (users as { id: string; username: string }[]).find((user) => user.username === 'totpuser')!;
    const held = await system.api.request('POST', '/api/login', { body: { username: 'totpuser', password: PASSWORD } });
    assert.equal(held.status, 401, 'totpuser has a second factor (the first test)');
    const page = await newPage(browser);
    await signIn(page, base, ADMIN, ADMIN_PASSWORD);
    await page.evaluate((id) => (location.hash = `#/account?user=${id}`), target.id);
    await page.waitForSelector('#user-sessions');
    await assertAccessible(page, "a user's sessions");
    await screenshot(page, 'account-user-security');
    const before = await page.$$eval('#user-sessions tbody tr', (trs) => trs.length);
    assert.ok(before >= 1, 'the sessions totpuser signed in with');
    await page.click('#user-end-all');
    await page.waitForFunction((count) => document.querySelector('#user-security-notice')?.textContent?.endsWith(` ${count}`), {}, before);
    assert.equal(await page.$$eval('#user-sessions tbody tr', (trs) => trs.length), 0);
    await page.click('#user-remove-mfa');
    await page.waitForSelector('dialog #confirm-yes');
    await page.click('#confirm-yes');
    await page.waitForFunction(() => document.querySelector('#user-security-notice')?.textContent === 'The authenticator app was removed.');
    const plain = await system.api.request('POST', '/api/login', { body: { username: 'totpuser', password: PASSWORD } });
    assert.equal(plain.status, 200, 'a password alone again');

    // The passkey passkeyuser registered (the second test), removed by the administrator.
    const holder = (users as { id: string; username: string }[]).find((user) => user.username === 'passkeyuser')!;
    await page.evaluate((id) => (location.hash = `#/account?user=${id}`), holder.id);
    await page.waitForFunction(() => document.querySelector('#user-passkeys tbody td')?.textContent === 'Laptop');
    await assertAccessible(page, "a user's passkeys");
    await page.click('#user-passkeys .remove-user-passkey');
    await page.waitForSelector('dialog #confirm-yes');
    const removed = page.waitForResponse((response) => /\/api\/users\/[^/]+\/passkeys\//.test(response.url()));
    await page.click('#confirm-yes');
    assert.equal((await removed).status(), 200);
    await page.waitForFunction(() => document.querySelector('#user-security-notice')?.textContent === 'The passkey was removed.');
    assert.equal(await page.$$eval('#user-passkeys tbody tr', (trs) => trs.length), 0);
    const left = await system.api.asAdmin('GET', `/api/users/${holder.id}/passkeys`);
    assert.deepEqual(left.passkeys, []);
    assert.deepEqual(page.problems, []);
    await page.close();
  });
});

describe('console sign-in of an account that must enrol a second factor (LOGS_MFA_REQUIRED_PERMISSIONS)', { timeout: 600_000 }, () => {
  let system: System;
  let browser: Browser;
  before(async () => {
    browser = await launchChromium();
    system = await startSystem({ LOGS_MFA_REQUIRED_PERMISSIONS: 'users:manage' });
  });
  after(async () => {
    await browser?.close();
    await system?.stop();
  });

  test('the administrator enrols at sign-in, before any page of the console, then signs in with a code', async () => {
    const page = await newPage(browser);
    await page.goto(`${system.logs}/`, { waitUntil: 'load' });
    await page.waitForSelector('#username');
    await page.type('#username', ADMIN);
    await page.type('#password', ADMIN_PASSWORD);
    await page.keyboard.press('Enter');
    await page.waitForSelector('#enrol-required');
    await page.waitForSelector('#totp-qr');
    assert.equal(await page.$('#whoami'), null, 'no console before enrolment');
    await assertAccessible(page, 'enrolment at sign-in');
    await screenshot(page, 'signin-enrol');
    const secret = (await textOf(page, '#totp-secret')).replace(/\s+/g, '');
    await page.keyboard.type(totpCode(secret, Date.now()));
    await page.keyboard.press('Enter');
    await page.waitForSelector('#recovery-codes');
    await page.click('#recovery-done');
    await page.waitForSelector('#whoami');
    assert.equal(await textOf(page, '#whoami'), ADMIN);

    await signOut(page);
    await page.type('#username', ADMIN);
    await page.type('#password', ADMIN_PASSWORD);
    await page.keyboard.press('Enter');
    await page.waitForSelector('#mfa-code');
    await page.keyboard.type(totpCode(secret, Date.now() + STEP_MS));
    await page.keyboard.press('Enter');
    await page.waitForSelector('#whoami');
    assert.deepEqual(page.problems, []);
    await page.close();
  });
});
