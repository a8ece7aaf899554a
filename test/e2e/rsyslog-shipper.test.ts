import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { createTestDatabase } from '../helpers/databases.js';
import { eventually } from '../helpers/eventually.js';
import { LOGS_ADMIN, LOGS_ADMIN_PASSWORD, PASSWORD, uniqueName } from '../helpers/logs.js';
import { killHard, startLogsProcess } from '../helpers/logs-process.js';
import { closedPort } from '../helpers/upstream.js';

/**
 * A real shipper: Debian's rsyslog with omelasticsearch tails two files and ships every line to the
 * Elasticsearch-compatible API of a real logs process, which is killed and restarted in the middle.
 * Every line must be found exactly once, with its level (docs/elasticsearch.md, "Shippers").
 * `.ci/run` installs the packages; where they cannot be installed the test says so and is skipped.
 */
const MODULE_DIRS = ['/usr/lib/x86_64-linux-gnu/rsyslog', '/usr/lib/aarch64-linux-gnu/rsyslog', '/usr/lib/rsyslog'];
const moduleDir = MODULE_DIRS.find((dir) => existsSync(join(dir, 'omelasticsearch.so')));
const rsyslogd = ['/usr/sbin/rsyslogd', '/sbin/rsyslogd'].find((path) => existsSync(path));
// A real shipper or no test: without it the test fails and says what to install (.ci/run installs it).
const missing =
  !moduleDir || !rsyslogd
    ? 'rsyslog with omelasticsearch is not installed (Debian: apt-get install rsyslog rsyslog-elasticsearch)'
    : undefined;

/** The configuration an operator would write (docs/elasticsearch.md), pointed at a temp dir and the test's port. */
function rsyslogConfig(dir: string, port: number, user: string): string {
  return `
global(workDirectory="${dir}/work")
module(load="imfile")
module(load="omelasticsearch")
# A unique id per line, kept across retries: the logs service stores a retried line once.
template(name="lineId" type="string" string="%uuid%")
input(type="imfile" File="${dir}/app.log" Tag="app:" Severity="warning" Facility="local0")
input(type="imfile" File="${dir}/errors.log" Tag="app:" Severity="err" Facility="local0")
action(type="omelasticsearch" server="http://127.0.0.1:${port}/api/v1/_elastic" searchIndex="rsyslog-app" bulkmode="on"
  esVersion.major="8" uid="${user}" pwd="${PASSWORD}" dynbulkid="on" bulkid="lineId"
  action.resumeRetryCount="-1" action.resumeInterval="1" queue.type="LinkedList" queue.size="100000")
`;
}

describe('rsyslog ships through a restart of the logs service', () => {
  const cleanup: (() => Promise<void> | void)[] = [];
  after(async () => {
    for (const step of cleanup.reverse()) await step();
  });

  test('every line is found exactly once, with its level', async () => {
    if (missing) assert.fail(missing);
    const dir = mkdtempSync(join(tmpdir(), 'gerbang-rsyslog-'));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    mkdirSync(join(dir, 'work'));
    const database = await createTestDatabase('sqlite');
    cleanup.push(() => database.drop());
    const port = await closedPort();
    const base = `http://127.0.0.1:${port}`;
    const marker = uniqueName('rsyslog').toLowerCase();
    const write = (file: string, from: number, count: number) =>
      appendFileSync(join(dir, file), Array.from({ length: count }, (_, i) => `line ${marker} n${from + i}\n`).join(''));
    writeFileSync(join(dir, 'app.log'), '');
    writeFileSync(join(dir, 'errors.log'), '');

    let logs = await startLogsProcess(database.url, port);
    cleanup.push(() => killHard(logs));
    const admin = async () => {
      const login = await fetch(`${base}/api/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: LOGS_ADMIN, password: LOGS_ADMIN_PASSWORD }),
      });
      const { token } = (await login.json()) as { token: { access_token: string } };
      return { authorization: `Bearer ${token.access_token}`, 'content-type': 'application/json' };
    };
    // rsyslog 8.2302 sends only HTTP Basic: a user of its own whose one role holds only logs:write.
    const post = async (path: string, body: object) => {
      const response = await fetch(`${base}${path}`, { method: 'POST', headers: await admin(), body: JSON.stringify(body) });
      assert.equal(response.status, 201, await response.text());
    };
    const shipperUser = uniqueName('rsyslog');
    await post('/api/roles', { name: `${shipperUser}-role`, permissions: ['logs:write'] });
    await post('/api/users', {
      username: shipperUser,
      email: `${shipperUser}@example.go.id`,
      password: PASSWORD,
      roles: [`${shipperUser}-role`],
    });
    writeFileSync(join(dir, 'rsyslog.conf'), rsyslogConfig(dir, port, shipperUser));
    const shipper: ChildProcess = spawn(
      rsyslogd!,
      ['-n', '-f', join(dir, 'rsyslog.conf'), '-i', join(dir, 'rsyslogd.pid'), '-M', moduleDir!],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let shipperOutput = '';
    shipper.stderr!.on('data', (chunk: Buffer) => (shipperOutput += chunk.toString()));
    cleanup.push(async () => {
      if (shipper.exitCode !== null || shipper.signalCode !== null) return;
      const exited = once(shipper, 'exit');
      shipper.kill('SIGTERM');
      await exited;
    });

    const count = async (query: string): Promise<number> => {
      const search = await fetch(`${base}/api/v1/logs/list/paginate`, {
        method: 'POST',
        headers: await admin(),
        body: JSON.stringify({ query, limit: 1 }),
      });
      assert.equal(search.status, 200);
      return ((await search.json()) as { total: number }).total;
    };
    const expectTotal = (query: string, total: number) =>
      eventually(
        async () => assert.equal(await count(query), total, `${query}\nrsyslog said:\n${shipperOutput.slice(-2000)}`),
        60_000,
        250,
      );

    write('app.log', 0, 100);
    write('errors.log', 100, 50);
    await expectTotal(`"${marker}"`, 150);

    // The logs service dies; rsyslog keeps the lines in its queue and retries until it is back.
    await killHard(logs);
    write('app.log', 150, 100);
    write('errors.log', 250, 50);
    logs = await startLogsProcess(database.url, port);
    await expectTotal(`"${marker}"`, 300);
    write('app.log', 300, 10);
    await expectTotal(`"${marker}"`, 310);

    // Exactly once: every line number is there, each one time.
    for (const n of [0, 99, 149, 150, 249, 299, 309]) assert.equal(await count(`"${marker} n${n}"`), 1, `line n${n}`);
    // rsyslog's severities, normalised: warning is warn, err is error; the index is a field.
    assert.equal(await count(`"${marker}" level:warn`), 210);
    assert.equal(await count(`"${marker}" level:error`), 100);
    assert.equal(await count(`"${marker}" _index:rsyslog-app`), 310);
    // The shipper's credentials write, and read nothing back.
    const basic = `Basic ${Buffer.from(`${shipperUser}:${PASSWORD}`).toString('base64')}`;
    const read = await fetch(`${base}/api/v1/_elastic/_search`, { method: 'POST', headers: { authorization: basic } });
    assert.equal(read.status, 403);
  });
});
