/**
 * The console's interactions at 10M events (issue 41): a store of generated events (one day, 20
 * services, 50 hosts: bench/logs-store/generate.ts) built through the store's own write path, the
 * logs service started on it as `npm start` starts it (scripts/start.mjs: the compiled build of this
 * worktree, not tsx), and Debian's Chromium driven by puppeteer-core through each interaction of the
 * explorer N times. Each is timed in the page, from the user's action (the click's pointerdown, the
 * Enter's keydown) to the frame after the answer is drawn (the DOM change the user sees, watched by a
 * MutationObserver); an export has started when the first bytes of the file are shown as received.
 * Prints p50/p95/max per interaction (ms); with BENCH_RECORD=1 writes the section
 * "## Console at 10M events: issue 41" of docs/benchmarks.md.
 *
 *   node --max-semi-space-size=64 --import tsx bench/console-interactions.ts [--events 10000000] [--runs 20]
 *     [--url postgres://…] [--build-only] [--cpu-prof DIR] [--only search,zoom,…] [--cold] [--verbose]
 *
 * The store is kept and reused (keyed by events and dialect) under BENCH_CONSOLE_DIR (default
 * /tmp/gerbang-bench-console); with --url the PostgreSQL database given is used (its log tables are
 * built once, marked by a row of their own, and reused).
 */
import '../src/shared/runtime-flags.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { createReadStream, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import puppeteer, { type Browser, type CDPSession, type Page } from 'puppeteer-core';
import { openDatabase } from '../src/shared/db/database.js';
import { migrateToLatest } from '../src/shared/db/migrator.js';
import { createLogStore, sqliteThreadDialect, type LogEntry } from '../src/logs/modules/store/index.js';
import { logsMigrations } from '../src/logs/db/migrations/index.js';
import { CONSOLE_QUERIES } from './logs-store/console-queries.js';
import { DAY, DAY_START, generateEvents } from './logs-store/generate.js';

const { values: args } = parseArgs({
  options: {
    events: { type: 'string', default: '10000000' },
    runs: { type: 'string', default: '20' },
    url: { type: 'string' },
    'build-only': { type: 'boolean', default: false },
    'cpu-prof': { type: 'string' },
    only: { type: 'string' },
    headful: { type: 'boolean', default: false },
    verbose: { type: 'boolean', default: false },
    cold: { type: 'boolean', default: false },
  },
});
const EVENTS = Number(args.events);
const RUNS = Number(args.runs);
const dialect = args.url ? 'postgres' : 'sqlite';
const ROOT = join(import.meta.dirname, '..');
const BASE_DIR = process.env.BENCH_CONSOLE_DIR || '/tmp/gerbang-bench-console';
const dataDir = join(BASE_DIR, `${dialect}-${EVENTS}`);
const ADMIN_PASSWORD = 'Admin#Passw0rd';
const TENANT = 'default';
const HOUR = 3_600_000;
const MINUTE = 60_000;
/** Runs slower than this are reported one by one, with their API calls. */
const SLOW_MS = 250;

const log = (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);

// ---- the store ----------------------------------------------------------------------------------
const builtMark = join(dataDir, 'built.json');

async function buildStore(): Promise<void> {
  mkdirSync(dataDir, { recursive: true });
  const url = args.url ?? `sqlite:${join(dataDir, 'logs.sqlite')}`;
  // Which store was built where: another PostgreSQL database given is built anew.
  const marker = {
    events: EVENTS,
    dialect,
    day: new Date(DAY_START).toISOString(),
    url: args.url ? args.url.replace(/\/\/[^@]*@/, '//') : 'logs.sqlite',
  };
  if (existsSync(builtMark) && readFileSync(builtMark, 'utf8') === JSON.stringify(marker)) {
    log(`reusing the store in ${dataDir}`);
    return;
  }
  if (dialect === 'sqlite') for (const suffix of ['', '-wal', '-shm']) rmSync(join(dataDir, `logs.sqlite${suffix}`), { force: true });
  const database = await openDatabase<any>(url, { sqliteThread: sqliteThreadDialect });
  if (dialect === 'postgres') {
    // A clean slate in the given database: every table of the logs service.
    const { sql } = await import('kysely');
    await sql`DROP SCHEMA public CASCADE; CREATE SCHEMA public`.execute(database.db);
  }
  await migrateToLatest(database.db, logsMigrations, 'logs');
  const store = createLogStore(database.db, database.dialect, {});
  const start = performance.now();
  let batch: LogEntry[] = [];
  let done = 0;
  for (const entry of generateEvents(EVENTS, 42, 1)) {
    batch.push(entry);
    if (batch.length === 5000) {
      await store.append(TENANT, batch);
      done += batch.length;
      batch = [];
      if (done % 500_000 === 0) log(`built ${done} (${Math.round(done / ((performance.now() - start) / 1000))} events/s)`);
    }
  }
  if (batch.length) await store.append(TENANT, batch);
  if (dialect === 'postgres') {
    // What autovacuum does within a minute of a partition filling (run.ts does the same).
    const { sql } = await import('kysely');
    await sql`ANALYZE`.execute(database.db);
  }
  await database.close();
  writeFileSync(builtMark, JSON.stringify(marker));
  log(`store of ${EVENTS} events built in ${Math.round((performance.now() - start) / 1000)} s`);
}

await buildStore();
if (args['build-only']) process.exit(0);

// ---- the service, as `npm start` runs it ---------------------------------------------------------
interface Service {
  logs: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

async function startService(): Promise<Service> {
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    GATEWAY_PORT: '0',
    LOGS_PORT: '0',
    LOG_LEVEL: 'info',
    GATEWAY_ADMIN_PASSWORD: ADMIN_PASSWORD,
    LOGS_ADMIN_PASSWORD: ADMIN_PASSWORD,
    LOGS_MFA_REQUIRED_PERMISSIONS: 'none',
    LOGS_LOGIN_RATE_PER_ADDRESS: '10000',
    LOGS_API_RATE_PER_USER: '100000',
    // The generated day is in the past: no retention sweep while measuring.
    LOGS_RETENTION_DAYS: '36500',
  };
  if (args.url) env.LOGS_DATABASE_URL = args.url;
  // Node 20 refuses --cpu-prof in NODE_OPTIONS: given to the service's process itself (start.mjs runs the services in it).
  const profile = args['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${args['cpu-prof']}`] : [];
  if (args['cpu-prof']) mkdirSync(args['cpu-prof'], { recursive: true });
  const child = spawn(process.execPath, [...profile, 'scripts/start.mjs'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stderr!.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ports = await new Promise<{ logs: number }>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (text) => {
      try {
        const line = JSON.parse(text) as { msg: string; services?: { logs: number } };
        if (line.msg === 'services listening') resolve(line.services!);
      } catch {
        output = (output + text + '\n').slice(-4000);
      }
    });
    void exited.then(() => reject(new Error(`npm start exited before listening:\n${output}`)));
  });
  return {
    logs: `http://127.0.0.1:${ports.logs}`,
    child,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function request(base: string, method: string, path: string, token?: string, body?: unknown): Promise<any> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : {};
}

// ---- timing in the page -------------------------------------------------------------------------
/**
 * Arms the page: the next pointerdown or keydown is the user's action (its event time), and the
 * timing ends in the frame after `done` (the body of a function of no arguments, evaluated in the
 * page at every DOM change) first holds.
 */
async function arm(page: Page, done: string): Promise<void> {
  await page.evaluate(`(() => {
    const bench = (window.__bench = { start: undefined });
    performance.setResourceTimingBufferSize(1000);
    performance.clearResourceTimings();
    const mark = (event) => { if (bench.start === undefined) bench.start = event.timeStamp; };
    addEventListener('pointerdown', mark, { capture: true, once: true });
    addEventListener('keydown', mark, { capture: true, once: true });
    const check = () => { try { return (() => { ${done} })(); } catch { return false; } };
    bench.result = new Promise((resolve, reject) => {
      const timeout = setTimeout(() => { observer.disconnect(); reject(new Error('not drawn within 60 s')); }, 60000);
      const observer = new MutationObserver(() => {
        if (bench.start === undefined || !check()) return;
        observer.disconnect();
        clearTimeout(timeout);
        requestAnimationFrame(() => resolve(performance.now() - bench.start));
      });
      observer.observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
    });
  })()`);
}

/** The API calls made since the action: path, time to the first byte and to the last (ms), for a slow run's report. */
let lastCalls: string[] = [];
async function drawnMs(page: Page): Promise<number> {
  const ms = (await page.evaluate('window.__bench.result')) as number;
  lastCalls = (await page.evaluate(`performance.getEntriesByType('resource')
    .filter((entry) => entry.name.includes('/api/') && entry.startTime >= window.__bench.start - 1)
    .map((entry) => new URL(entry.name).pathname + ' ' + Math.round(entry.responseStart - entry.startTime) + '/' + Math.round(entry.responseEnd - entry.startTime) + ' ms')`)) as string[];
  return ms;
}

/** Marks the page's current #status as the old one: a fresh, filled one is the new search drawn. */
const markOld = (page: Page) => page.evaluate(`document.querySelector('#status')?.setAttribute('data-old', '1')`);
const NEW_STATUS = `const s = document.querySelector('#status'); return Boolean(s && !s.hasAttribute('data-old') && /entr|No /.test(s.textContent));`;
const waitStatus = (page: Page) =>
  page.waitForFunction(() => {
    const s = document.querySelector('#status');
    return Boolean(s && !s.hasAttribute('data-old') && /entr|No /.test(s.textContent ?? ''));
  });

// ---- the interactions ---------------------------------------------------------------------------
/** A 1-hour window of the generated day, a different one each run. */
const hour = (i: number) => {
  const from = DAY_START + ((i * 7) % 23) * HOUR + 13 * MINUTE;
  return { from: new Date(from).toISOString(), to: new Date(from + HOUR - 1).toISOString() };
};
const QUERIES = CONSOLE_QUERIES;
const FIELDS = ['level', 'service', 'host', 'http.method', 'http.route', 'http.status_code', 'k8s.pod.name', 'duration_ms'];

interface Context {
  page: Page;
  base: string;
  token: string;
  session: CDPSession;
  downloads: string;
}

const explore = (ctx: Context, query: string, range: { from: string; to: string }, extra = '') =>
  `${ctx.base}/console/#/explore?q=${encodeURIComponent(query)}&from=${encodeURIComponent(range.from)}&to=${encodeURIComponent(range.to)}${extra}`;

/** Opens a search (not timed) and waits for it drawn. */
async function open(ctx: Context, url: string): Promise<void> {
  await markOld(ctx.page);
  await ctx.page.goto(url);
  await waitStatus(ctx.page);
}

type Interaction = (ctx: Context, i: number) => Promise<number>;

const interactions: Record<string, Interaction> = {
  /** A query typed into the box; Enter runs it: the count, histogram and first 500 entries drawn. */
  async search(ctx, i) {
    await open(ctx, explore(ctx, QUERIES[(i + 1) % QUERIES.length]!, hour(i)));
    await ctx.page.$eval('#query', (input, q) => ((input as HTMLInputElement).value = q), QUERIES[i % QUERIES.length]!);
    await ctx.page.focus('#query');
    await markOld(ctx.page);
    await arm(ctx.page, NEW_STATUS);
    await ctx.page.keyboard.press('Enter');
    return drawnMs(ctx.page);
  },
  /** A click on a bar of the whole day's histogram zooms to it: the zoomed search drawn. */
  async zoom(ctx, i) {
    const day = { from: new Date(DAY_START).toISOString(), to: new Date(DAY_START + DAY - 1).toISOString() };
    await open(ctx, explore(ctx, QUERIES[i % QUERIES.length]!, day));
    const bars = await ctx.page.$$('#histogram rect.bar');
    await markOld(ctx.page);
    await arm(ctx.page, NEW_STATUS);
    await bars[(i * 7) % bars.length]!.click();
    return drawnMs(ctx.page);
  },
  /** A field of the sidebar opened: its type, coverage and top values for the query and range drawn. */
  async fieldStatistics(ctx, i) {
    const field = FIELDS[i % FIELDS.length]!;
    await open(ctx, explore(ctx, QUERIES[i % QUERIES.length]!, hour(i)));
    const toggle = await ctx.page.waitForSelector(`#fields li[data-field="${field}"] button.field`);
    await arm(ctx.page, `return Boolean(document.querySelector('#fields li[data-field="${field}"] .field-summary')?.textContent);`);
    await toggle!.click();
    return drawnMs(ctx.page);
  },
  /** An entry opened in the side panel, then its surrounding entries: the list drawn around it. */
  async context(ctx, i) {
    await open(ctx, explore(ctx, QUERIES[i % QUERIES.length]!, hour(i)));
    const rows = await ctx.page.$$('#results tr.entry button.expand');
    if (rows.length === 0) return NaN;
    // One of the rows on screen (the list draws more as it scrolls).
    await rows[(i * 3) % Math.min(rows.length, 8)]!.click();
    const show = await ctx.page.waitForSelector('#context-show');
    await arm(ctx.page, `return Boolean(document.querySelector('#context-list li.context-self'));`);
    await show!.click();
    return drawnMs(ctx.page);
  },
  /** A field added as a column from the sidebar: the table drawn again with it. */
  async columns(ctx, i) {
    const field = FIELDS.filter((name) => !['level', 'service', 'host'].includes(name))[i % 5]!;
    await open(ctx, explore(ctx, QUERIES[i % QUERIES.length]!, hour(i)));
    const add = await ctx.page.waitForSelector(`#fields li[data-field="${field}"] button.add-column`);
    await markOld(ctx.page);
    await arm(
      ctx.page,
      `${NEW_STATUS.replace('return ', 'const fresh = ')} return fresh && Boolean(document.querySelector('#results-table th[data-column="${field}"]'));`,
    );
    await add!.click();
    return drawnMs(ctx.page);
  },
  /** A saved search opened from the list: its search drawn under its name. */
  async savedSearch(ctx, i) {
    await open(ctx, explore(ctx, QUERIES[(i + 3) % QUERIES.length]!, hour(i + 5)));
    await ctx.page.click('#saved-searches summary');
    const link = await ctx.page.waitForSelector(`#saved-list li:nth-child(${(i % 10) + 1}) a`);
    await markOld(ctx.page);
    await arm(
      ctx.page,
      `${NEW_STATUS.replace('return ', 'const fresh = ')} return fresh && Boolean(document.querySelector('#saved-current')?.textContent);`,
    );
    await link!.click();
    return drawnMs(ctx.page);
  },
  /**
   * Export of the search on screen as CSV started: from the click to the first bytes of the streamed
   * file shown as received ("Exporting… 64.0 KiB"); then the run waits for the file saved.
   */
  async exportStarted(ctx, i) {
    await open(ctx, explore(ctx, QUERIES[i % QUERIES.length]!, hour(i), '&cols=host,http.status_code,message'));
    const finished = new Promise<void>((resolve) => {
      const progress = (event: { state: string }) => {
        if (event.state === 'inProgress') return;
        ctx.session.off('Browser.downloadProgress', progress);
        resolve();
      };
      ctx.session.on('Browser.downloadProgress', progress);
    });
    await arm(ctx.page, `return /\\d/.test(document.querySelector('#export-message')?.textContent ?? '');`);
    await ctx.page.click('#export-csv');
    const ms = await drawnMs(ctx.page);
    await finished;
    rmSync(ctx.downloads, { recursive: true, force: true });
    mkdirSync(ctx.downloads, { recursive: true });
    return ms;
  },
};

// ---- the run ------------------------------------------------------------------------------------
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
const round = (ms: number) => Math.round(ms);

// The day in the page cache, as on a service whose recent hours are read all day: the file read once
// (run.ts warms the same way with a first pass). A cold cache is another measurement (--cold).
if (dialect === 'sqlite' && !args.cold) {
  const start = performance.now();
  for await (const _chunk of createReadStream(join(dataDir, 'logs.sqlite'), { highWaterMark: 4 << 20 }));
  log(`store file read into the page cache in ${Math.round(performance.now() - start)} ms`);
}
const service = await startService();
log(`logs service at ${service.logs} on ${dataDir}${args.url ? ` (${args.url.replace(/\/\/[^@]*@/, '//')})` : ''}`);
const browser: Browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  headless: !args.headful,
  args: ['--no-sandbox', '--disable-dev-shm-usage', '--no-first-run', '--disable-background-networking', '--disable-component-update'],
  protocolTimeout: 120_000,
});
const results: { name: string; p50: number; p95: number; max: number; runs: number }[] = [];
const loadBefore = loadavg();
try {
  const token = (await request(service.logs, 'POST', '/api/login', undefined, { username: 'admin', password: ADMIN_PASSWORD })).token
    .access_token as string;
  // Ten saved searches to open (kept from an earlier run on a reused store).
  const saved = (await request(service.logs, 'GET', '/api/v1/logs/saved-searches', token)).data as { name: string }[];
  for (let n = 0; n < 10; n += 1) {
    const name = `bench ${String(n).padStart(2, '0')}`;
    if (saved.some((one) => one.name === name)) continue;
    const window = hour(n * 3 + 1);
    await request(service.logs, 'POST', '/api/v1/logs/saved-searches', token, {
      name,
      query: QUERIES[(n * 3) % QUERIES.length],
      range: window,
      columns: n % 2 ? ['service', 'host', 'http.route', 'message'] : [],
      sort: n % 3 ? 'desc' : 'asc',
    });
  }

  const page = await browser.newPage();
  page.setDefaultTimeout(60_000);
  await page.setViewport({ width: 1440, height: 900 });
  await page.goto(`${service.logs}/`, { waitUntil: 'load' });
  await page.waitForSelector('#username');
  await page.type('#username', 'admin');
  await page.type('#password', ADMIN_PASSWORD);
  await Promise.all([page.waitForSelector('#whoami'), page.click('#signin')]);
  const session = await browser.target().createCDPSession();
  const downloads = join(BASE_DIR, 'downloads');
  mkdirSync(downloads, { recursive: true });
  await session.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: downloads, eventsEnabled: true });
  const ctx: Context = { page, base: service.logs, token, session, downloads };

  const chosen = args.only ? args.only.split(',') : Object.keys(interactions);
  for (const name of chosen) {
    const interaction = interactions[name];
    if (!interaction) throw new Error(`no interaction ${name}: ${Object.keys(interactions).join(', ')}`);
    await interaction(ctx, RUNS); // warm-up (not counted): the console's code and the route's statements
    const times: number[] = [];
    for (let i = 0; i < RUNS; i += 1) {
      lastCalls = [];
      const ms = await interaction(ctx, i);
      if (Number.isFinite(ms)) times.push(ms);
      // A slow run named with what it asked (the run's query: QUERIES[i], field FIELDS[i]) and its calls.
      if (ms > SLOW_MS || args.verbose)
        log(
          `  ${name} #${i} (${QUERIES[i % QUERIES.length]}; ${FIELDS[i % FIELDS.length]}): ${Math.round(ms)} ms; ${lastCalls.join(', ')}`,
        );
    }
    times.sort((a, b) => a - b);
    const result = {
      name,
      p50: round(percentile(times, 50)),
      p95: round(percentile(times, 95)),
      max: round(times.at(-1)!),
      runs: times.length,
    };
    results.push(result);
    log(`${name}: p50 ${result.p50} ms, p95 ${result.p95} ms, max ${result.max} ms (${result.runs} runs)`);
  }
} finally {
  await browser.close();
  await service.stop();
}

const loadAfter = loadavg();
const summary = {
  at: new Date().toISOString(),
  dialect,
  events: EVENTS,
  runs: RUNS,
  cores: cpus().length,
  load: { before: loadBefore.map((n) => Number(n.toFixed(2))), after: loadAfter.map((n) => Number(n.toFixed(2))) },
  results,
};
process.stdout.write(`${JSON.stringify(summary)}\n`);
console.table(results);

if (process.env.BENCH_RECORD === '1') {
  // The section's block of this dialect (between its markers) is written anew; the rest of the
  // section (the notes written by hand) stays.
  const file = join(ROOT, 'docs', 'benchmarks.md');
  const heading = '## Console at 10M events: issue 41';
  const [startMarker, endMarker] = [`<!-- console-interactions:${dialect} -->`, `<!-- /console-interactions:${dialect} -->`];
  const rows = results.map((r) => `| ${r.name} | ${r.p50} | ${r.p95} | ${r.max} | ${r.p95 < 300 ? 'yes' : '**no**'} |`);
  const block = [
    startMarker,
    `**${dialect === 'sqlite' ? 'SQLite' : 'PostgreSQL'}**, ${summary.at.slice(0, 16).replace('T', ' ')} UTC: ${EVENTS.toLocaleString('en')} events over one day,`,
    `${RUNS} runs of each interaction after one warm-up, ${summary.cores} cores, load average ${summary.load.before[0]} before and`,
    `${summary.load.after[0]} after (\`bench/console-interactions.ts${args.url ? ' --url …' : ''}\`).`,
    '',
    '| interaction | p50 ms | p95 ms | max ms | under 300 ms at p95 |',
    '|---|---|---|---|---|',
    ...rows,
    endMarker,
  ].join('\n');
  let text = readFileSync(file, 'utf8');
  const at = text.indexOf(startMarker);
  if (at !== -1) text = text.slice(0, at) + block + text.slice(text.indexOf(endMarker, at) + endMarker.length);
  else if (text.includes(heading)) {
    const after = text.indexOf('\n', text.indexOf(heading)) + 1;
    text = `${text.slice(0, after)}\n${block}\n${text.slice(after)}`;
  } else text = `${text.trimEnd()}\n\n${heading}\n\n${block}\n`;
  writeFileSync(file, text);
  log(`recorded in ${file}`);
}
