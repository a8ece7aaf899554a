import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { ADMIN_PASSWORD } from '../helpers/gateway.js';
import { LOGS_ADMIN, LOGS_ADMIN_PASSWORD, uniqueName } from '../helpers/logs.js';
import { killHard, startLogsProcess } from '../helpers/logs-process.js';
import { runCli, startCli, type CliProcess } from '../helpers/cli-process.js';
import { closedPort } from '../helpers/upstream.js';
import { CLI_FILE } from '../helpers/node-args.js';

/**
 * docs/operations.md, "Who holds a database" and "Backup and restore", with real processes: a
 * service holds a lock on its SQLite database for its life; a second process on the same files and a
 * restore are refused while it lives, and the lock goes with the process however it ends.
 */

const temporaryDirs: string[] = [];
const running: CliProcess[] = [];
after(async () => {
  for (const service of running) await stop(service, 'SIGKILL');
  for (const dir of temporaryDirs) rmSync(dir, { recursive: true, force: true });
});

function temporaryDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  temporaryDirs.push(dir);
  return dir;
}

async function stop(service: CliProcess, signal: NodeJS.Signals): Promise<void> {
  if (service.child.exitCode !== null || service.child.signalCode !== null) return;
  const exited = once(service.child, 'exit');
  service.child.kill(signal);
  await exited;
}

function sha256(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

function mode(path: string): string {
  return (statSync(path).mode & 0o777).toString(8);
}

const basic = `Basic ${Buffer.from(`${LOGS_ADMIN}:${LOGS_ADMIN_PASSWORD}`).toString('base64')}`;

async function ingest(logsUrl: string, messages: string[]): Promise<void> {
  const body = messages.map((message) => `{"index":{}}\n${JSON.stringify({ message })}\n`).join('');
  const response = await fetch(`${logsUrl}/api/v1/_elastic/_bulk`, {
    method: 'POST',
    headers: { authorization: basic, 'content-type': 'application/x-ndjson' },
    body,
  });
  assert.equal(response.status, 200, await response.text());
}

/** Entries whose message starts with `marker` (under `all` the gateway's own telemetry arrives too). */
async function countEntries(database: string, marker: string): Promise<number> {
  const { default: SQLite } = await import('better-sqlite3');
  const db = new SQLite(database, { readonly: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM log_entries WHERE message LIKE ?').get(`${marker}%`) as { n: number }).n;
  } finally {
    db.close();
  }
}

/** The owner record beside a lock: who holds it. */
function ownerOf(database: string): { pid: number; command: string } {
  return JSON.parse(readFileSync(`${database}.lock-owner`, 'utf8')) as { pid: number; command: string };
}

describe('a second process on the same SQLite files', () => {
  test('a second logs service refuses to start with one line naming the first; once the first is killed (SIGKILL) a new one starts', async () => {
    const dir = temporaryDir('gerbang-lock-logs-');
    const database = join(dir, 'logs.sqlite');
    const first = await startLogsProcess(`sqlite:${database}`, await closedPort());
    try {
      const second = await runCli(
        ['logs'],
        {
          HOST: '127.0.0.1',
          LOGS_PORT: String(await closedPort()),
          LOGS_DATABASE_URL: `sqlite:${database}`,
          LOGS_ADMIN_PASSWORD,
          LOGS_MFA_REQUIRED_PERMISSIONS: 'none',
          LOG_LEVEL: 'info',
        },
        60_000,
      );
      assert.equal(second.status, 1);
      assert.equal(second.stderr.split('\n').length, 2, `one line: ${second.stderr}`);
      assert.match(
        second.stderr,
        new RegExp(`^gerbang logs: the logs database ${database} is in use by pid ${first.pid} \\(cli\\.[jt]s logs, since `),
      );
      assert.doesNotMatch(second.stdout, /Server listening/);
      assert.deepEqual(ownerOf(database), { ...ownerOf(database), pid: first.pid, command: `${CLI_FILE} logs` });
    } finally {
      await killHard(first);
    }
    // No shutdown hook ran: the kernel released the lock with the process.
    const third = await startLogsProcess(`sqlite:${database}`, await closedPort());
    assert.equal(ownerOf(database).pid, third.pid);
    await killHard(third);
  });

  test("the gateway's workers share their primary's database; a second gateway refuses to start; the lock goes with a killed primary", async () => {
    const dir = temporaryDir('gerbang-lock-gateway-');
    const env = { DATA_DIR: dir, GATEWAY_PORT: '0', GATEWAY_ADMIN_PASSWORD: ADMIN_PASSWORD };
    const primary = startCli(['gateway'], { ...env, GATEWAY_WORKERS: '2' });
    running.push(primary);
    // Both workers listen: neither was refused by its own primary's lock.
    await primary.waitFor((line) => line.msg.startsWith('Server listening'));
    await primary.waitFor(
      (line) =>
        line.msg.startsWith('Server listening') && line.pid !== primary.lines.find((l) => l.msg.startsWith('Server listening'))!.pid,
    );
    const database = join(dir, 'gateway.sqlite');
    assert.equal(ownerOf(database).pid, primary.child.pid);

    const second = await runCli(['gateway'], { ...env, HOST: '127.0.0.1', GATEWAY_WORKERS: '1', LOG_LEVEL: 'info' }, 60_000);
    assert.equal(second.status, 1);
    assert.match(
      second.stderr,
      new RegExp(
        `^gerbang gateway: the gateway database ${database} is in use by pid ${primary.child.pid} \\(cli\\.[jt]s gateway, since [^\\n]+\\n$`,
      ),
    );
    assert.doesNotMatch(second.stdout, /Server listening/);

    await stop(primary, 'SIGKILL');
    const next = startCli(['gateway'], { ...env, GATEWAY_WORKERS: '1' });
    running.push(next);
    await next.waitFor((line) => line.msg.startsWith('Server listening'));
    assert.equal(ownerOf(database).pid, next.child.pid);
    await stop(next, 'SIGTERM');
  });
});

describe('restore onto running services, and a service restarted by `all`', () => {
  test('restore (with and without --force) and migrate are refused, name the holder and change nothing; a killed service restarted by the supervisor holds the lock again', async () => {
    const dir = temporaryDir('gerbang-lock-all-');
    const live = join(dir, 'live');
    const all = startCli(['all'], {
      DATA_DIR: live,
      GATEWAY_PORT: '0',
      LOGS_PORT: '0',
      GATEWAY_ADMIN_PASSWORD: ADMIN_PASSWORD,
      LOGS_ADMIN_PASSWORD,
      LOGS_MFA_REQUIRED_PERMISSIONS: 'none',
      LOGS_RETENTION_INTERVAL: '0',
      LOGS_SELF_METRICS_INTERVAL: '0',
    });
    running.push(all);
    const listening = await all.waitFor((line) => line.msg === 'services listening');
    const logsUrl = `http://127.0.0.1:${(listening.services as { logs: number }).logs}`;
    const pidOf = (service: string) =>
      all.lines.filter((line) => line.service === service && /^service (started|restarted)$/.test(line.msg)).at(-1)!.servicePid as number;
    const marker = uniqueName('restore').toLowerCase();
    await ingest(
      logsUrl,
      Array.from({ length: 50 }, (_, i) => `${marker} before ${i}`),
    );
    const backupDir = join(dir, 'backup');
    const taken = await runCli(['backup', backupDir], { DATA_DIR: live });
    assert.equal(taken.status, 0, taken.stderr);
    await ingest(
      logsUrl,
      Array.from({ length: 50 }, (_, i) => `${marker} after ${i}`),
    );
    const logsDatabase = join(live, 'logs.sqlite');
    const inode = statSync(logsDatabase).ino;

    for (const args of [
      ['restore', backupDir],
      ['restore', backupDir, '--force'],
    ]) {
      const refused = await runCli(args, { DATA_DIR: live });
      assert.equal(refused.status, 1, args.join(' '));
      assert.match(
        refused.stderr,
        new RegExp(
          `^gerbang restore: restore refused: the gateway database \\S+ is in use by pid ${pidOf('gateway')} \\(cli\\.[jt]s gateway, since [^)]+\\): stop it first\\n$`,
        ),
      );
    }
    // Nor does `migrate` change a schema beneath running services.
    const migrate = await runCli(['migrate'], { DATA_DIR: live });
    assert.equal(migrate.status, 1);
    assert.match(
      migrate.stderr,
      new RegExp(
        `^gerbang migrate: the gateway database \\S+ is in use by pid ${pidOf('gateway')} \\(cli\\.[jt]s gateway, since [^)]+\\): stop it first \\(a service migrates its own database when it starts\\)\\n$`,
      ),
    );
    // The running service still writes into the same file, and nothing it acknowledged is lost.
    assert.equal(statSync(logsDatabase).ino, inode);
    await ingest(logsUrl, [`${marker} later`]);

    // A logs service killed by SIGKILL is restarted by the supervisor and holds the lock again.
    const killed = pidOf('logs');
    const from = all.lines.length;
    process.kill(killed, 'SIGKILL');
    await all.waitFor((line) => line.service === 'logs' && line.msg === 'service restarted', { from });
    assert.notEqual(pidOf('logs'), killed);
    assert.equal(ownerOf(logsDatabase).pid, pidOf('logs'));
    assert.equal((await fetch(`${logsUrl}/readyz`)).status, 200);
    // (The gateway's database elsewhere, unheld: the logs database is the one refused.)
    const refusedAgain = await runCli(['restore', backupDir, '--force'], {
      DATA_DIR: live,
      GATEWAY_DATABASE_URL: `sqlite:${join(dir, 'elsewhere', 'gateway.sqlite')}`,
    });
    assert.equal(refusedAgain.status, 1);
    assert.match(refusedAgain.stderr, new RegExp(`the logs database \\S+ is in use by pid ${pidOf('logs')} `));

    await stop(all, 'SIGTERM');
    assert.equal(await countEntries(logsDatabase, marker), 101, 'every acknowledged event is in the live database');
  });
});

describe('restore: verified before anything is replaced', () => {
  test('a database open in any other process is refused; a corrupt backup that matches its manifest changes nothing; a killed restore’s leftovers are cleaned', async () => {
    const dir = temporaryDir('gerbang-restore-');
    const live = join(dir, 'live');
    const port = await closedPort();
    // Both databases, created before the logs service holds its own.
    assert.equal((await runCli(['migrate'], { DATA_DIR: live })).status, 0);
    const logs = await startLogsProcess(`sqlite:${join(live, 'logs.sqlite')}`, port);
    const marker = uniqueName('verified').toLowerCase();
    try {
      await ingest(
        `http://127.0.0.1:${port}`,
        Array.from({ length: 20 }, (_, i) => `${marker} ${i}`),
      );
      const good = join(dir, 'good');
      assert.equal((await runCli(['backup', good], { DATA_DIR: live })).status, 0);
      await ingest(
        `http://127.0.0.1:${port}`,
        Array.from({ length: 5 }, (_, i) => `${marker} newer ${i}`),
      );
    } finally {
      await killHard(logs);
    }
    const databases = ['gateway.sqlite', 'logs.sqlite'].map((file) => join(live, file));

    // Any other connection (here a plain SQLite one in this process) keeps restore away.
    const { default: SQLite } = await import('better-sqlite3');
    const open = new SQLite(databases[1]!);
    open.pragma('journal_mode = WAL');
    const openRefused = await runCli(['restore', join(dir, 'good'), '--force'], { DATA_DIR: live });
    open.close();
    assert.equal(openRefused.status, 1);
    assert.match(
      openRefused.stderr,
      /^gerbang restore: restore refused: \S+logs\.sqlite \(logs\) is open in another process: stop it first\n$/,
    );

    // A corrupt copy of the logs database whose manifest was rewritten to match it.
    const corrupt = join(dir, 'corrupt');
    mkdirSync(corrupt);
    for (const file of ['gateway.sqlite', 'logs.sqlite', 'manifest.json'])
      writeFileSync(join(corrupt, file), readFileSync(join(dir, 'good', file)));
    const bytes = readFileSync(join(corrupt, 'logs.sqlite'));
    // Its last pages overwritten: the schema and the migration history still read, quick_check does not pass.
    for (let at = Math.floor((bytes.length * 0.9) / 4096) * 4096; at < bytes.length; at += 1) bytes[at] = (at * 7919) & 0xff;
    writeFileSync(join(corrupt, 'logs.sqlite'), bytes);
    const manifest = JSON.parse(readFileSync(join(corrupt, 'manifest.json'), 'utf8')) as {
      databases: { name: string; sha256: string; bytes: number }[];
    };
    const entry = manifest.databases.find((saved) => saved.name === 'logs')!;
    entry.sha256 = createHash('sha256').update(bytes).digest('hex');
    entry.bytes = bytes.length;
    writeFileSync(join(corrupt, 'manifest.json'), JSON.stringify(manifest));

    // What a restore killed midway leaves beside the targets.
    writeFileSync(join(live, 'logs.sqlite.restoring'), 'half a copy');
    const before = databases.map(sha256);
    const refused = await runCli(['restore', corrupt, '--force'], { DATA_DIR: live });
    assert.equal(refused.status, 1);
    assert.match(
      refused.stderr,
      // quick_check lists the damage, or SQLite stops at the first damaged page it reads.
      /^gerbang restore: logs: \S+ is not a sound database \((quick_check found \d+ problem\(s\), the first: [^\n]+|database disk image is malformed)\): nothing restored\n$/,
    );
    assert.deepEqual(
      databases.map(sha256),
      before,
      'neither database was touched (the gateway copy was sound, but is not swapped in alone)',
    );
    assert.deepEqual(
      readdirSync(live).filter((file) => file.includes('.restoring')),
      [],
      'no staged copy is left behind',
    );
    assert.equal(await countEntries(databases[1]!, marker), 25);

    // The sound backup goes in: the state it was taken in.
    writeFileSync(join(live, 'logs.sqlite.restoring'), 'half a copy');
    const restored = await runCli(['restore', join(dir, 'good'), '--force'], { DATA_DIR: live });
    assert.equal(restored.status, 0, restored.stderr);
    assert.match(restored.stdout, /^restored gateway and logs from the backup of /);
    assert.equal(await countEntries(databases[1]!, marker), 20);
    assert.deepEqual(
      readdirSync(live).filter((file) => file.includes('.restoring')),
      [],
    );
    for (const database of databases) assert.equal(mode(database), '600');
    const started = await startLogsProcess(`sqlite:${databases[1]}`, port);
    assert.equal((await fetch(`http://127.0.0.1:${port}/readyz`)).status, 200);
    await killHard(started);
  });
});

describe('file modes', () => {
  test('databases and their -wal, -shm and lock files are 0600 in a 0700 directory; so is a backup; an older 0644 database is tightened', async () => {
    const dir = temporaryDir('gerbang-modes-');
    const live = join(dir, 'a', 'data');
    assert.equal((await runCli(['migrate'], { DATA_DIR: live })).status, 0);
    assert.equal(mode(join(dir, 'a')), '700');
    assert.equal(mode(live), '700');
    const logs = await startLogsProcess(`sqlite:${join(live, 'logs.sqlite')}`, await closedPort());
    try {
      const files = readdirSync(live);
      for (const file of [
        'gateway.sqlite',
        'logs.sqlite',
        'logs.sqlite-wal',
        'logs.sqlite-shm',
        'logs.sqlite.lock',
        'logs.sqlite.lock-owner',
      ])
        assert.ok(files.includes(file), `${file} in ${files.join(' ')}`);
      for (const file of files) assert.equal(mode(join(live, file)), '600', file);

      const backupDir = join(dir, 'b', 'backup');
      assert.equal((await runCli(['backup', backupDir], { DATA_DIR: live })).status, 0);
      assert.equal(mode(backupDir), '700');
      assert.deepEqual(readdirSync(backupDir).sort(), ['gateway.sqlite', 'logs.sqlite', 'manifest.json']);
      for (const file of readdirSync(backupDir)) assert.equal(mode(join(backupDir, file)), '600', file);

      const restoredDir = join(dir, 'restored');
      assert.equal((await runCli(['restore', backupDir], { DATA_DIR: restoredDir })).status, 0);
      assert.equal(mode(restoredDir), '700');
      for (const file of readdirSync(restoredDir)) assert.equal(mode(join(restoredDir, file)), '600', file);

      // A database from an older version (0644) is 0600 once a service or command opens it.
      chmodSync(join(restoredDir, 'gateway.sqlite'), 0o644);
      assert.equal((await runCli(['migrate'], { DATA_DIR: restoredDir })).status, 0);
      assert.equal(mode(join(restoredDir, 'gateway.sqlite')), '600');
      assert.ok(!existsSync(join(restoredDir, 'gateway.sqlite-wal')) || mode(join(restoredDir, 'gateway.sqlite-wal')) === '600');
    } finally {
      await killHard(logs);
    }
  });
});
