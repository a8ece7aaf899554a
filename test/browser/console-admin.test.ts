// Administration and permissions in Chromium against a fresh `npm start` on SQLite: tenants, users,
// roles and API keys created, changed and deleted with the API's validation messages at the field
// they name; an API key's secret shown once and revoked; a user holding only logs:read seeing only
// what that allows; and a 403 from the API shown plainly. axe-core and a screenshot on each page.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'puppeteer-core';
import {
  ADMIN,
  ADMIN_PASSWORD,
  PASSWORD,
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

/** Fills a form field by id (replacing what is there). */
const fill = (page: Page, id: string, value: string) =>
  page.$eval(
    `#${id}`,
    (node, text) => {
      (node as HTMLInputElement).value = text;
    },
    value,
  );

/** Submits the form and waits for the API's answer to it. */
async function submit(page: Page, form: string, path: RegExp): Promise<number> {
  const answered = page.waitForResponse((response) => path.test(new URL(response.url()).pathname) && response.request().method() !== 'GET');
  await page.click(`#${form}-submit`);
  return (await answered).status();
}

/** The message shown under a field, once there is one. */
async function fieldError(page: Page, form: string, field: string): Promise<string> {
  const selector = `#${form}-${field}-error`;
  await page.waitForFunction((s) => (document.querySelector(s)?.textContent ?? '') !== '', {}, selector);
  return textOf(page, selector);
}

const rowOf = (list: string, name: string) => `#${list}-table tr[data-name="${name}"]`;

async function confirmDelete(page: Page, list: string, name: string): Promise<void> {
  await page.click(`${rowOf(list, name)} button.delete`);
  await page.waitForSelector('dialog.confirm[open]');
  await page.click('#confirm-yes');
}

describe('console administration and permissions in Chromium', { timeout: 900_000 }, () => {
  let system: System;
  let browser: Browser;
  let page: Page & { problems: string[] };

  before(async () => {
    browser = await launchChromium();
    system = await startSystem();
    page = await newPage(browser);
    await signIn(page, system.logs, ADMIN, ADMIN_PASSWORD);
  });
  after(async () => {
    await browser?.close();
    await system?.stop();
  });

  test('tenants: the API messages at the field, created, changed, deleted; a refused delete says why', async () => {
    await page.goto(`${system.logs}/console/#/admin?view=tenants`);
    await page.waitForSelector('#tenants-table');
    assert.equal(await submit(page, 'tenants-form', /^\/api\/tenants$/), 400);
    assert.equal(await fieldError(page, 'tenants-form', 'name'), 'body/name must NOT have fewer than 1 characters');
    assert.equal(await page.$eval('#tenants-form-name', (node) => node.getAttribute('aria-invalid')), 'true');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'tenants-form-name', 'focus goes to the field');

    await fill(page, 'tenants-form-name', 'default');
    assert.equal(await submit(page, 'tenants-form', /^\/api\/tenants$/), 400);
    assert.equal(await fieldError(page, 'tenants-form', 'name'), 'tenant "default" already exists');

    const name = `${MARK}-jakarta`;
    await fill(page, 'tenants-form-name', name);
    await fill(page, 'tenants-form-retention_days', '0');
    assert.equal(await submit(page, 'tenants-form', /^\/api\/tenants$/), 400);
    assert.equal(await fieldError(page, 'tenants-form', 'retention_days'), 'body/retention_days must be >= 1');
    assert.equal(await page.$eval('#tenants-form-name-error', (node) => node.textContent), '', 'only the field at fault is marked');
    await assertAccessible(page, 'tenant form with errors');
    await screenshot(page, 'admin-form-errors');

    await fill(page, 'tenants-form-retention_days', '14');
    assert.equal(await submit(page, 'tenants-form', /^\/api\/tenants$/), 201);
    await page.waitForSelector(rowOf('tenants', name));
    assert.match(await textOf(page, rowOf('tenants', name)), /14/);

    await page.click(`${rowOf('tenants', name)} button.edit`);
    await page.waitForFunction((n) => document.querySelector('#tenants-form legend')?.textContent?.includes(n), {}, name);
    assert.equal(await page.$eval('#tenants-form-retention_days', (node) => (node as HTMLInputElement).value), '14');
    await fill(page, 'tenants-form-retention_days', '20');
    assert.equal(await submit(page, 'tenants-form', /^\/api\/tenants\/[\w-]+$/), 200);
    await page.waitForFunction((s) => document.querySelector(s)?.textContent?.includes('20'), {}, rowOf('tenants', name));
    await assertAccessible(page, 'tenants');
    await screenshot(page, 'admin-tenants');

    await confirmDelete(page, 'tenants', name);
    await page.waitForFunction((s) => document.querySelector(s) === null, {}, rowOf('tenants', name));
    const tenants = (await system.api.asAdmin('GET', '/api/tenants')).tenants as { name: string }[];
    assert.ok(!tenants.some((tenant) => tenant.name === name));

    await confirmDelete(page, 'tenants', 'default');
    await page.waitForSelector('#tenants-status [role=alert]');
    assert.match(await textOf(page, '#tenants-status'), /the default tenant and your own tenant cannot be deleted/);
    assert.deepEqual(page.problems, []);
  });

  test('users: a bad e-mail and a weak password are shown at their fields; a user created, changed, deleted', async () => {
    await page.goto(`${system.logs}/console/#/admin?view=users`);
    await page.waitForSelector('#users-table');
    const username = `${MARK}user`;
    await fill(page, 'users-form-username', username);
    await fill(page, 'users-form-email', 'not-an-address');
    await fill(page, 'users-form-password', 'short');
    assert.equal(await submit(page, 'users-form', /^\/api\/users$/), 400);
    assert.equal(await fieldError(page, 'users-form', 'email'), 'body/email must match format "email"');
    await fill(page, 'users-form-email', `${username}@example.go.id`);
    assert.equal(await submit(page, 'users-form', /^\/api\/users$/), 400);
    assert.match(await fieldError(page, 'users-form', 'password'), /^password: /);
    assert.equal(await page.$eval('#users-form-email-error', (node) => node.textContent), '');

    await fill(page, 'users-form-password', PASSWORD);
    await page.click('#users-form-roles-viewer');
    assert.equal(await submit(page, 'users-form', /^\/api\/users$/), 201);
    await page.waitForSelector(rowOf('users', username));
    assert.match(await textOf(page, rowOf('users', username)), /viewer/);
    await assertAccessible(page, 'users');
    await screenshot(page, 'admin-users');

    await page.click(`${rowOf('users', username)} button.edit`);
    await page.waitForSelector('#users-cancel');
    assert.equal(await page.$('#users-form-username'), null, 'a username is not changed');
    await fill(page, 'users-form-email', `${username}@jakarta.go.id`);
    assert.equal(await submit(page, 'users-form', /^\/api\/users\/[\w-]+$/), 200);
    await page.waitForFunction((s) => document.querySelector(s)?.textContent?.includes('@jakarta.go.id'), {}, rowOf('users', username));

    await confirmDelete(page, 'users', username);
    await page.waitForFunction((s) => document.querySelector(s) === null, {}, rowOf('users', username));
    assert.deepEqual(page.problems, []);
  });

  test('roles: permissions as checkboxes, built-in roles fixed; a role created, changed, deleted', async () => {
    await page.goto(`${system.logs}/console/#/admin?view=roles`);
    await page.waitForSelector('#roles-table');
    assert.equal(await page.$(`${rowOf('roles', 'admin')} button.edit`), null, 'built-in roles cannot be changed');
    assert.equal(await submit(page, 'roles-form', /^\/api\/roles$/), 400);
    assert.equal(await fieldError(page, 'roles-form', 'name'), 'body/name must NOT have fewer than 1 characters');

    const name = `${MARK}-auditor`;
    await fill(page, 'roles-form-name', name);
    await page.click('#roles-form-permissions-audit_read');
    assert.equal(await submit(page, 'roles-form', /^\/api\/roles$/), 201);
    await page.waitForSelector(rowOf('roles', name));

    await page.click(`${rowOf('roles', name)} button.edit`);
    await page.waitForSelector('#roles-cancel');
    assert.equal(await page.$eval('#roles-form-permissions-audit_read', (node) => (node as HTMLInputElement).checked), true);
    await page.click('#roles-form-permissions-audit_export');
    assert.equal(await submit(page, 'roles-form', /^\/api\/roles\/[\w-]+$/), 200);
    await page.waitForFunction((s) => document.querySelector(s)?.textContent?.includes('audit:export'), {}, rowOf('roles', name));
    await assertAccessible(page, 'roles');
    await screenshot(page, 'admin-roles');

    await confirmDelete(page, 'roles', name);
    await page.waitForFunction((s) => document.querySelector(s) === null, {}, rowOf('roles', name));
    assert.deepEqual(page.problems, []);
  });

  test('API keys: the messages at the field; the secret shown once and working; revoked, it stops', async () => {
    await page.goto(`${system.logs}/console/#/keys`);
    await page.waitForSelector('#keys-table');
    const name = `${MARK} shipper`;
    await fill(page, 'keys-form-name', name);
    assert.equal(await submit(page, 'keys-form', /^\/api\/v1\/api-keys$/), 400);
    assert.equal(await fieldError(page, 'keys-form', 'permissions'), 'body/permissions must NOT have fewer than 1 items');
    await page.click('#keys-form-permissions-logs_read');
    await fill(page, 'keys-form-expires_at', '2020-01-01T00:00:00');
    assert.equal(await submit(page, 'keys-form', /^\/api\/v1\/api-keys$/), 400);
    assert.equal(await fieldError(page, 'keys-form', 'expires_at'), 'expires_at must be in the future');

    await fill(page, 'keys-form-expires_at', '');
    assert.equal(await submit(page, 'keys-form', /^\/api\/v1\/api-keys$/), 201);
    await page.waitForSelector('#new-key-secret');
    const header = await page.$eval('#new-key-secret', (node) => (node as HTMLInputElement).value);
    assert.match(header, /^ApiKey [A-Za-z0-9+/=]+$/);
    const used = await system.api.request('GET', '/api/v1/logs/fields', { headers: { authorization: header } });
    assert.equal(used.status, 200, 'the key shown works');
    await page.waitForSelector(rowOf('keys', name));
    await assertAccessible(page, 'API keys with a new key');
    await screenshot(page, 'api-keys');

    // Shown once: drawn again, the page has no secret.
    await page.reload({ waitUntil: 'load' });
    await page.waitForSelector(rowOf('keys', name));
    assert.equal(await page.$('#new-key-secret'), null);
    assert.ok(!(await page.content()).includes(header.slice(7)), 'the secret is nowhere on the page');

    await confirmDelete(page, 'keys', name);
    await page.waitForFunction((s) => /Revoked/.test(document.querySelector(s)?.textContent ?? ''), {}, rowOf('keys', name));
    assert.equal((await system.api.request('GET', '/api/v1/logs/fields', { headers: { authorization: header } })).status, 401);
    assert.deepEqual(page.problems, []);
  });

  test('a user holding only logs:read sees only explore and their API keys; other pages say no, and nothing is refused by the API', async () => {
    const reader = await system.api.userWith(['logs:read'], `${MARK}reader`);
    await system.api.ship([{ '@timestamp': new Date().toISOString(), message: `${MARK} traced`, trace_id: 'ef'.repeat(16) }]);
    const other = await newPage(browser);
    const refused: string[] = [];
    other.on('response', (response) => {
      if (response.status() === 403) refused.push(response.url());
    });
    await signIn(other, system.logs, reader, PASSWORD);
    assert.deepEqual(await other.$$eval('#pages a', (links) => links.map((link) => link.id)), ['nav-explore', 'nav-keys', 'nav-account']);
    assert.equal(await other.$('#tenant'), null, 'no tenant switcher without tenants:manage');
    for (const path of ['dashboards', 'alerts', 'apm', 'infra', 'audit', 'admin']) {
      await other.goto(`${system.logs}/console/#/${path}`);
      await other.waitForSelector('#not-allowed');
    }
    await screenshot(other, 'not-allowed');

    await other.goto(`${system.logs}/console/#/explore?q=${encodeURIComponent(`"${MARK} traced"`)}&range=15m`);
    await other.waitForFunction(() => document.querySelector('#status')?.textContent === '1 entry');
    await other.click('#results tr.entry button.expand');
    await other.waitForSelector('#entry-detail');
    assert.equal(await other.$('#trace-link'), null, 'no link to traces without dashboard:read');
    assert.match(await textOf(other, '#entry-detail'), /efefefef/);
    await assertAccessible(other, 'explore as a logs:read user');

    await other.goto(`${system.logs}/console/#/keys`);
    await other.waitForSelector('#keys-form');
    assert.deepEqual(
      await other.$$eval('#keys-form input[name=permissions]', (boxes) => boxes.map((box) => (box as HTMLInputElement).value)),
      ['logs:read'],
    );
    assert.equal(await other.$('#keys-user'), null, "another user's keys need users:manage");
    assert.deepEqual(refused, [], 'the console asked for nothing the user may not have');
    assert.deepEqual(other.problems, []);
    await other.close();
  });

  test('a 403 from the API (a permission taken away after sign-in) is shown plainly', async () => {
    const username = await system.api.userWith(['logs:read', 'dashboard:read'], `${MARK}watcher`);
    const other = await newPage(browser);
    await signIn(other, system.logs, username, PASSWORD);
    assert.ok(await other.$('#nav-dashboards'), 'offered at sign-in');
    const roles = (await system.api.asAdmin('GET', '/api/roles')).roles as { id: string; name: string }[];
    const role = roles.find((r) => r.name === `${MARK}watcher-role`)!;
    await system.api.asAdmin('PUT', `/api/roles/${role.id}`, { permissions: ['logs:read'] });
    const answered = other.waitForResponse((r) => r.url().includes('/api/v1/dashboard/overview'));
    await other.click('#nav-dashboards');
    assert.equal((await answered).status(), 403);
    await other.waitForSelector('#forbidden');
    assert.match(await textOf(other, '#forbidden'), /Permission denied.*\(403 permission denied\)/);
    await assertAccessible(other, 'a page refused by the API');
    await screenshot(other, 'forbidden');
    await other.close();
  });
});
