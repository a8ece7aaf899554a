// What the console's browser tests share: a fresh `npm start` (supervisor, logs service, gateway) on
// SQLite in a temporary DATA_DIR, a client of its public API for setting the scene, and Debian's
// Chromium driven by puppeteer-core (never a downloaded browser). A missing Chromium fails the
// tests: .ci/run installs it. All traffic is to 127.0.0.1.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';

export const ADMIN = 'admin';
export const ADMIN_PASSWORD = 'Admin#Passw0rd';
export const PASSWORD = 'Rahasia#123';
export const SCREENSHOTS = join(process.cwd(), 'test-output', 'screenshots');
const START_TIMEOUT_MS = 300_000;
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** Debian's Chromium (`CHROMIUM_PATH` overrides); throws with the way to install it when absent. */
export function chromiumPath(): string {
  const path = process.env.CHROMIUM_PATH ?? ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((candidate) => existsSync(candidate));
  if (!path || !existsSync(path))
    throw new Error(
      'Chromium not found (/usr/bin/chromium, or CHROMIUM_PATH): install it with `bash .ci/run` or `apt-get install chromium`',
    );
  return path;
}

export function launchChromium(): Promise<Browser> {
  return puppeteer.launch({
    executablePath: chromiumPath(),
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--no-first-run', '--disable-background-networking', '--disable-component-update'],
    protocolTimeout: 120_000,
  });
}

interface Line {
  msg: string;
  services?: { logs: number; gateway: number };
  [field: string]: unknown;
}

export interface System {
  logs: string;
  gateway: string;
  api: LogsClient;
  stop(): Promise<void>;
}

/**
 * `npm start` as a user runs it (scripts/start.mjs: the content-addressed build with the console,
 * then `cli.js all`) on free ports of 127.0.0.1 and a fresh data directory; resolves once the
 * supervisor says both services listen.
 */
export async function startSystem(env: Record<string, string> = {}): Promise<System> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gerbang-console-'));
  const child: ChildProcess = spawn(process.execPath, ['scripts/start.mjs'], {
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      GATEWAY_PORT: '0',
      LOGS_PORT: '0',
      LOG_LEVEL: 'info', // the supervisor's 'services listening' line is info
      GATEWAY_ADMIN_PASSWORD: ADMIN_PASSWORD,
      LOGS_ADMIN_PASSWORD: ADMIN_PASSWORD,
      LOGS_MFA_REQUIRED_PERMISSIONS: 'none',
      // Many sign-ins from one address in a few minutes: the test, not an attack.
      LOGS_LOGIN_RATE_PER_ADDRESS: '10000',
      LOGS_API_RATE_PER_USER: '100000',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stderr!.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const listening = await new Promise<Line>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (text) => {
      try {
        const line = JSON.parse(text) as Line;
        if (line.msg === 'services listening') resolve(line);
      } catch {
        output = (output + text + '\n').slice(-4000); // tsc's output, before the services start
      }
    });
    void exited.then((code) => reject(new Error(`npm start exited with ${code} before listening:\n${output}`)));
    // The build may compile everything first: minutes on a busy machine, but not forever.
    setTimeout(() => {
      child.kill('SIGTERM');
      reject(new Error(`npm start did not listen within ${START_TIMEOUT_MS / 1000} s:\n${output}`));
    }, START_TIMEOUT_MS).unref();
  });
  const logs = `http://127.0.0.1:${listening.services!.logs}`;
  return {
    logs,
    gateway: `http://127.0.0.1:${listening.services!.gateway}`,
    // A short access-token lifetime (the session tests) means a fresh administrator token each time.
    api: new LogsClient(logs, env.LOGS_ACCESS_TOKEN_TTL ? 0 : 60_000),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface Answer {
  status: number;
  body: any;
}

/** The logs service's public API, as the tests use it to set the scene and to compare answers. */
export class LogsClient {
  private adminToken?: { token: string; at: number };
  /** `tokenMaxAgeMs`: how long an administrator token is reused (under the access token's lifetime). */
  constructor(
    readonly base: string,
    private readonly tokenMaxAgeMs = 60_000,
  ) {}

  async request(
    method: string,
    path: string,
    options: { body?: unknown; token?: string; headers?: Record<string, string> } = {},
  ): Promise<Answer> {
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    if (options.body !== undefined && !headers['content-type']) headers['content-type'] = 'application/json';
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    const response = await fetch(`${this.base}${path}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body),
      // Bounded: a request that never gets an answer fails (and `eventually` tries again) instead of hanging the test.
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : {};
    } catch {
      // not JSON: kept as text
    }
    return { status: response.status, body };
  }

  async login(username = ADMIN, password = ADMIN_PASSWORD): Promise<{ access_token: string; refresh_token: string }> {
    const answer = await this.request('POST', '/api/login', { body: { username, password } });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    return answer.body.token;
  }

  /** The administrator's access token (a fresh one once the last is `tokenMaxAgeMs` old). */
  async admin(): Promise<string> {
    if (!this.adminToken || Date.now() - this.adminToken.at > this.tokenMaxAgeMs)
      this.adminToken = { token: (await this.login()).access_token, at: Date.now() };
    return this.adminToken.token;
  }

  /** A request as the administrator that must answer `status`. */
  async asAdmin(method: string, path: string, body?: unknown, status = 200, headers: Record<string, string> = {}): Promise<any> {
    const answer = await this.request(method, path, { body, token: await this.admin(), headers });
    assert.equal(answer.status, status, `${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body;
  }

  /** Ships documents through the Elasticsearch bulk API (into `tenant` when given). */
  async ship(docs: object[], tenant?: string): Promise<void> {
    const body = docs.map((doc) => `{"index":{}}\n${JSON.stringify(doc)}\n`).join('');
    const answer = await this.asAdmin('POST', '/api/v1/_elastic/_bulk', body, 200, {
      'content-type': 'application/x-ndjson',
      ...(tenant ? { 'x-tenant-id': tenant } : {}),
    });
    assert.equal(answer.errors, false, JSON.stringify(answer).slice(0, 500));
  }

  /** A role with exactly `permissions` and a user holding it; returns the username. */
  async userWith(permissions: string[], name: string): Promise<string> {
    await this.asAdmin('POST', '/api/roles', { name: `${name}-role`, permissions }, 201);
    await this.asAdmin(
      'POST',
      '/api/users',
      { username: name, email: `${name}@example.go.id`, password: PASSWORD, roles: [`${name}-role`] },
      201,
    );
    return name;
  }
}

/** A page in a browser context of its own (its own sessionStorage) that records script errors and CSP violations. */
export async function newPage(browser: Browser, viewport = { width: 1280, height: 800 }): Promise<Page & { problems: string[] }> {
  const context = await browser.createBrowserContext();
  const page = (await context.newPage()) as Page & { problems: string[] };
  page.problems = [];
  page.on('pageerror', (error) => page.problems.push(`page error: ${String(error)}`));
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) page.problems.push(`csp: ${message.text()}`);
  });
  page.setDefaultTimeout(60_000);
  await page.setViewport(viewport);
  return page;
}

/** Opens the console and signs in through its form. */
export async function signIn(page: Page, base: string, username: string, password: string): Promise<void> {
  await page.goto(`${base}/`, { waitUntil: 'load' });
  await page.waitForSelector('#username');
  await page.type('#username', username);
  await page.type('#password', password);
  await Promise.all([page.waitForSelector('#whoami'), page.click('#signin')]);
}

/**
 * No serious or critical accessibility violation (axe-core) on the page as it is now. axe is
 * evaluated through the DevTools protocol, which the console's Content-Security-Policy does not
 * govern, so the policy stays on.
 */
export async function assertAccessible(page: Page, what: string): Promise<void> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const result = await (
      window as unknown as { axe: { run: () => Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> } }
    ).axe.run();
    return result.violations
      .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
      .map((violation) => `${violation.id} at ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`);
  });
  assert.deepEqual(violations, [], `${what}: ${violations.join('; ')}`);
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** Lets the page save downloads into a fresh directory; `next()` resolves with the path of the next finished one. */
export async function saveDownloads(page: Page): Promise<{ dir: string; next: () => Promise<string> }> {
  const dir = mkdtempSync(join(tmpdir(), 'gerbang-downloads-'));
  const session = await page.browser().target().createCDPSession();
  const context = page.browserContext() as unknown as { id?: string };
  await session.send('Browser.setDownloadBehavior', {
    behavior: 'allow',
    downloadPath: dir,
    eventsEnabled: true,
    ...(context.id ? { browserContextId: context.id } : {}),
  });
  return {
    dir,
    next: () =>
      new Promise<string>((resolve, reject) => {
        let name = '';
        const begin = (event: { suggestedFilename: string }) => (name = event.suggestedFilename);
        const progress = (event: { state: string }) => {
          if (event.state === 'inProgress') return;
          session.off('Browser.downloadWillBegin', begin);
          session.off('Browser.downloadProgress', progress);
          if (event.state === 'completed') resolve(join(dir, name));
          else reject(new Error(`download ${event.state}`));
        };
        session.on('Browser.downloadWillBegin', begin);
        session.on('Browser.downloadProgress', progress);
      }),
  };
}

/** The files of a directory (for assertions on downloads). */
export const filesIn = (dir: string): string[] => readdirSync(dir);

export const hashParams = (page: Page): Promise<Record<string, string>> =>
  page.evaluate(() => Object.fromEntries(new URLSearchParams(location.hash.split('?')[1] ?? '')));

export const textOf = (page: Page, selector: string): Promise<string> => page.$eval(selector, (node) => node.textContent ?? '');
