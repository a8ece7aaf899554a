import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { loadSigningKey } from '../../src/shared/auth/signing-keys.js';
import { openDatabase } from '../../src/shared/db/database.js';
import { DIALECTS } from '../helpers/databases.js';
import { startTestGateway } from '../helpers/gateway.js';
import { LOGS_ADMIN, LOGS_ADMIN_PASSWORD, PASSWORD, startTestLogs, uniqueName } from '../helpers/logs.js';
import { killHard, startLogsProcess } from '../helpers/logs-process.js';
import { ftsTableName } from '../../src/logs/modules/store/sqlite/fts-hours.js';
import { closedPort } from '../helpers/upstream.js';
import { totpCode } from '../../src/shared/mfa/totp.js';
import { LOGS_NODE_OPTIONS } from '../../src/logs/node-options.js';
import { nodeArgs } from '../helpers/node-args.js';

/** The real CLI (docs/operations.md): help, exit codes, logs-reset-password, backup and restore. */
const cli = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [...nodeArgs('src/cli.ts'), ...args], {
    env: { ...process.env, LOG_LEVEL: 'silent', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });

/** The same, without blocking this process (its requests go on meanwhile). */
function cliAsync(args: string[], env: Record<string, string>): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...nodeArgs('src/cli.ts'), ...args], { env: { ...process.env, ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.once('exit', (status) => resolve({ status, stdout, stderr })));
}

describe('gerbang CLI: help and usage', () => {
  test('--help and help <command> explain and exit 0; no command, an unknown one or a missing argument exit 2 with the usage', () => {
    const help = cli(['--help']);
    assert.equal(help.status, 0, help.stderr);
    for (const command of [
      'all',
      'gateway',
      'logs',
      'migrate',
      'reset-password',
      'logs-reset-password',
      'rotate-signing-keys',
      'backup',
      'restore',
      'help',
    ]) {
      assert.match(help.stdout, new RegExp(`^  ${command}\\b`, 'm'));
    }
    const one = cli(['help', 'backup']);
    assert.equal(one.status, 0);
    assert.match(one.stdout, /^usage: gerbang backup <dir>/);
    assert.equal(cli(['backup', '--help']).status, 0);
    for (const args of [[], ['frobnicate'], ['help', 'frobnicate']]) {
      const result = cli(args);
      assert.equal(result.status, 2, args.join(' '));
      assert.match(result.stderr, /^usage: gerbang <command>/);
      assert.equal(result.stdout, '');
    }
    const missing = cli(['logs-reset-password']);
    assert.equal(missing.status, 2);
    assert.equal(missing.stderr, 'usage: gerbang logs-reset-password <username> [--remove-second-factor]\n');
  });
});

for (const dialect of DIALECTS) {
  describe(`gerbang CLI: logs-reset-password [${dialect}]`, () => {
    test("a new password, the user's sessions ended, audited in the user's tenant; an unknown user exits 1", async () => {
      const logs = await startTestLogs(dialect);
      try {
        const user = await logs.userWith(['logs:read']);
        const session = await logs.login(user.username, PASSWORD);
        const result = cli(['logs-reset-password', user.username], { LOGS_DATABASE_URL: logs.url });
        assert.equal(result.status, 0, result.stderr);
        const password = /new password for \S+: (\S+)/.exec(result.stdout)?.[1];
        assert.ok(password, result.stdout);
        const me = await logs.request({ method: 'GET', url: '/api/me', headers: { authorization: `Bearer ${session.access_token}` } });
        assert.equal(me.statusCode, 401, 'sessions are ended');
        await assert.rejects(logs.login(user.username, PASSWORD));
        await logs.login(user.username, password);
        const audit = await logs.request({
          method: 'GET',
          url: '/api/v1/log-audit/search?action=user.reset_password',
          headers: await logs.admin(),
        });
        const row = (audit.json().data as { actor: string; target_id: string }[]).find((entry) => entry.target_id === user.id);
        assert.equal(row?.actor, 'cli');

        const unknown = cli(['logs-reset-password', 'nobody-here'], { LOGS_DATABASE_URL: logs.url });
        assert.equal(unknown.status, 1);
        assert.match(unknown.stderr, /no logs user "nobody-here"/);
      } finally {
        await logs.close();
      }
    });
  });
}

for (const dialect of DIALECTS) {
  describe(`gerbang CLI: logs-reset-password --remove-second-factor [${dialect}]`, () => {
    test('only with the flag are the authenticator and recovery codes removed (audited): the user then signs in with the new password alone', async () => {
      const logs = await startTestLogs(dialect);
      try {
        const user = await logs.userWith(['logs:read']);
        const headers = { authorization: `Bearer ${(await logs.login(user.username, PASSWORD)).access_token}` };
        const start = await logs.request({ method: 'POST', url: '/api/mfa/totp/start', headers });
        const secret: string = start.json().secret;
        const code = totpCode(secret, logs.clock.ms);
        const confirm = await logs.request({ method: 'POST', url: '/api/mfa/totp/confirm', headers, payload: { code } });
        assert.equal(confirm.statusCode, 200, confirm.body);
        const login = (password: string) =>
          logs.request({ method: 'POST', url: '/api/login', payload: { username: user.username, password } });

        const plain = cli(['logs-reset-password', user.username], { LOGS_DATABASE_URL: logs.url });
        assert.equal(plain.status, 0, plain.stderr);
        assert.doesNotMatch(plain.stdout, /second factor/);
        const asked = await login(/new password for \S+: (\S+)/.exec(plain.stdout)![1]!);
        assert.equal(asked.statusCode, 401, 'without the flag the code is still asked for');
        assert.ok(asked.json().mfa.challenge);

        const removed = cli(['logs-reset-password', user.username, '--remove-second-factor'], { LOGS_DATABASE_URL: logs.url });
        assert.equal(removed.status, 0, removed.stderr);
        assert.match(removed.stdout, /^second factor removed/m);
        assert.equal((await login(/new password for \S+: (\S+)/.exec(removed.stdout)![1]!)).statusCode, 200, 'the password alone');
        const audit = await logs.request({
          method: 'GET',
          url: '/api/v1/log-audit/search?action=auth.mfa_remove',
          headers: await logs.admin(),
        });
        const row = (audit.json().data as { actor: string; target_id: string; details: unknown }[]).find(
          (entry) => entry.target_id === user.id,
        );
        assert.equal(row?.actor, 'cli');
        assert.match(JSON.stringify(row?.details), /"by":"cli"/);

        const again = cli(['logs-reset-password', user.username, '--remove-second-factor'], { LOGS_DATABASE_URL: logs.url });
        assert.equal(again.status, 0, again.stderr);
        assert.match(again.stdout, /^no second factor was enrolled$/m);
      } finally {
        await logs.close();
      }
    });
  });
}

for (const dialect of DIALECTS) {
  describe(`gerbang CLI: logs-reset-password lifts the lockout [${dialect}]`, () => {
    test('a locked-out user gets in with the new password at once; a shipper sending an old Basic password never locks the interactive login', async () => {
      // The lockout as deployed: five failures per username.
      const logs = await startTestLogs(dialect, { LOGS_LOGIN_MAX_FAILURES_PER_USERNAME: '5' });
      try {
        const login = (username: string, password: string) =>
          logs.request({ method: 'POST', url: '/api/login', payload: { username, password } });
        const user = await logs.userWith(['logs:read']);
        for (let i = 0; i < 5; i += 1) assert.equal((await login(user.username, 'Wrong#Pass1')).statusCode, 401);
        assert.equal((await login(user.username, PASSWORD)).statusCode, 429, 'locked out, even with the right password');
        const reset = cli(['logs-reset-password', user.username], { LOGS_DATABASE_URL: logs.url });
        assert.equal(reset.status, 0, reset.stderr);
        const password = /new password for \S+: (\S+)/.exec(reset.stdout)![1]!;
        assert.equal((await login(user.username, password)).statusCode, 200, 'the new password works at once');

        // A shipper still sending the administrator's old password over HTTP Basic.
        const ship = (password: string) =>
          logs.request({
            method: 'POST',
            url: '/api/v1/_elastic/_bulk',
            headers: {
              authorization: `Basic ${Buffer.from(`${LOGS_ADMIN}:${password}`).toString('base64')}`,
              'content-type': 'application/x-ndjson',
            },
            payload: '{"index":{}}\n{"message":"shipped"}\n',
          });
        const statuses = [];
        for (let i = 0; i < 8; i += 1) statuses.push((await ship('Old#Passw0rd')).statusCode);
        assert.deepEqual(statuses, [401, 401, 401, 401, 401, 429, 429, 429], 'its own Basic credential is locked');
        assert.equal((await login(LOGS_ADMIN, LOGS_ADMIN_PASSWORD)).statusCode, 200, 'the administrator still logs in');
        assert.equal((await ship(LOGS_ADMIN_PASSWORD)).statusCode, 429, 'Basic stays locked for its window');
        const adminReset = cli(['logs-reset-password', LOGS_ADMIN], { LOGS_DATABASE_URL: logs.url });
        assert.equal(adminReset.status, 0, adminReset.stderr);
        const adminPassword = /new password for \S+: (\S+)/.exec(adminReset.stdout)![1]!;
        assert.equal((await ship(adminPassword)).statusCode, 200, 'the reset lifted the Basic lockout too');
      } finally {
        await logs.close();
      }
    });
  });
}

for (const dialect of DIALECTS) {
  describe(`gerbang CLI: rotate-signing-keys [${dialect}]`, () => {
    test('a new signing key per service, the old ones still verifying; --prune keeps only the newest', async () => {
      const logs = await startTestLogs(dialect);
      const gateway = await startTestGateway(dialect);
      try {
        const env = { LOGS_DATABASE_URL: logs.url, GATEWAY_DATABASE_URL: gateway.databaseUrl };
        const before = await keysOf(logs.url, 'logs_signing_keys');
        // At the default LOG_LEVEL: one printed line per service and nothing else (docs/operations.md).
        const rotated = await cliAsync(['rotate-signing-keys'], { ...env, LOG_LEVEL: 'info' });
        assert.equal(rotated.status, 0, rotated.stderr);
        assert.match(
          rotated.stdout,
          /^gateway: new signing key \S+, 1 older key\(s\) kept for verification\nlogs: new signing key (\S+), 1 older key\(s\) kept for verification\n$/,
        );
        assert.equal(rotated.stderr, '');
        const after = await keysOf(logs.url, 'logs_signing_keys');
        assert.notEqual(after.kid, before.kid, 'a restarted instance signs with the new key');
        assert.ok(after.publicKeys.has(before.kid), 'and still verifies tokens of the old one');
        assert.match(rotated.stdout, new RegExp(`logs: new signing key ${after.kid},`));
        const pruned = await cliAsync(['rotate-signing-keys', '--prune'], { ...env, LOG_LEVEL: 'info' });
        assert.equal(pruned.status, 0, pruned.stderr);
        assert.match(
          pruned.stdout,
          new RegExp(
            `^gateway: signing key \\S+ kept, 1 older key\\(s\\) removed\nlogs: signing key ${after.kid} kept, 1 older key\\(s\\) removed\n$`,
          ),
        );
        assert.deepEqual([...(await keysOf(logs.url, 'logs_signing_keys')).publicKeys.keys()], [after.kid]);
      } finally {
        await logs.close();
        await gateway.close();
      }
    });
  });
}

async function keysOf(url: string, table: string) {
  const database = await openDatabase<unknown>(url);
  try {
    return await loadSigningKey(database.db, table);
  } finally {
    await database.close();
  }
}

describe('gerbang CLI: usage and operational errors', () => {
  test('an unknown option or an extra argument exits 2 with the reason and the usage line, before anything runs', () => {
    for (const [args, reason, usageLine] of [
      [['restore', '/nowhere', '--forse'], 'unknown option "--forse"', 'restore <dir> [--force]'],
      [['backup', '/a', '/b'], 'unexpected argument "/b"', 'backup <dir>'],
      [['logs', '--verbose'], 'unknown option "--verbose"', 'logs'],
      [['migrate', 'now'], 'unexpected argument "now"', 'migrate'],
      [['rotate-signing-keys', '--prune', '--all'], 'unknown option "--all"', 'rotate-signing-keys [--prune]'],
      [['reset-password', 'a', 'b'], 'unexpected argument "b"', 'reset-password <no_pegawai> [--remove-second-factor]'],
      [['reset-password', 'a', '--remove-2fa'], 'unknown option "--remove-2fa"', 'reset-password <no_pegawai> [--remove-second-factor]'],
      [['help', 'backup', 'restore'], 'unexpected argument "restore"', 'help [command]'],
    ] as const) {
      const result = cli([...args], { DATA_DIR: '/nonexistent/gerbang' });
      assert.equal(result.status, 2, args.join(' '));
      assert.equal(result.stderr, `gerbang ${args[0]}: ${reason}\nusage: gerbang ${usageLine}\n`);
      assert.equal(result.stdout, '');
    }
    assert.ok(!existsSync('/nonexistent/gerbang'), 'nothing ran');
  });

  test('unknown user, non-empty directory, missing manifest, backup on PostgreSQL, a dead database: one line, exit 1, no stack', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gerbang-cli-errors-'));
    try {
      const live = { DATA_DIR: join(dir, 'live') };
      assert.equal(cli(['migrate'], live).status, 0);
      appendFileSync(join(dir, 'occupied'), '');
      appendFileSync(join(dir, 'not-a-database.sqlite'), 'x'.repeat(8192));
      const dead = `postgres://nobody:secret@127.0.0.1:${await closedPort()}/gerbang`;
      for (const [args, env, line] of [
        [['reset-password', 'nobody'], live, /^gerbang reset-password: no user with no_pegawai "nobody"$/],
        [['logs-reset-password', 'nobody'], live, /^gerbang logs-reset-password: no logs user "nobody"$/],
        [['backup', dir], live, /^gerbang backup: \S+ is not empty: back up into a new directory$/],
        [
          ['restore', join(dir, 'live')],
          { DATA_DIR: join(dir, 'other') },
          /^gerbang restore: \S+ holds no manifest\.json: not a complete backup$/,
        ],
        [
          ['backup', join(dir, 'pg')],
          { ...live, LOGS_DATABASE_URL: dead },
          /^gerbang backup: logs: postgres databases are backed up with pg_dump and pg_restore/,
        ],
        [
          ['reset-password', 'admin'],
          { GATEWAY_DATABASE_URL: dead },
          /^gerbang reset-password: the gateway database cannot be used: connect ECONNREFUSED 127\.0\.0\.1:\d+$/,
        ],
        [
          ['logs-reset-password', 'admin'],
          { LOGS_DATABASE_URL: `sqlite:${join(dir, 'not-a-database.sqlite')}` },
          /^gerbang logs-reset-password: the logs database cannot be used: file is not a database$/,
        ],
        [['migrate'], { ...live, LOGS_DATABASE_URL: dead }, /^gerbang migrate: the logs database cannot be used: connect ECONNREFUSED/],
      ] as const) {
        const result = cli([...args], env);
        assert.equal(result.status, 1, `${args.join(' ')}: ${result.stderr}`);
        const lines = result.stderr.split('\n');
        assert.equal(lines.length, 2, `one line: ${result.stderr}`);
        assert.match(lines[0]!, line);
        assert.doesNotMatch(result.stderr, /secret/, 'no password from a URL');
      }
      assert.ok(!existsSync(join(dir, 'pg')), 'a backup that cannot be made leaves nothing behind');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('gerbang CLI: logs and its node options', () => {
  test("started without the service's young generation it says so before listening; with it, or an operator's own, it does not", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gerbang-cli-node-options-'));
    try {
      const warns = (output: string) =>
        output
          .split('\n')
          .some((line) => line.includes("V8's default young generation") && line.includes('"nodeOptions":"--max-semi-space-size=64"'));
      for (const [nodeOptions, expected] of [
        ['', true],
        [LOGS_NODE_OPTIONS.join(' '), false],
        ['--max-semi-space-size=32', false],
      ] as const) {
        const logs = await startLogsProcess(`sqlite:${join(dir, 'logs.sqlite')}`, await closedPort(), { NODE_OPTIONS: nodeOptions });
        await killHard(logs);
        assert.equal(warns(logs.startOutput), expected, `NODE_OPTIONS=${nodeOptions}: ${logs.startOutput}`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('gerbang CLI: backup and restore of the embedded databases', () => {
  const cleanup: (() => Promise<void> | void)[] = [];
  after(async () => {
    for (const step of cleanup.reverse()) await step();
  });

  test('a backup taken under write load restores to a consistent copy; a tampered or partial backup and an occupied target are refused', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gerbang-backup-'));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const live = { DATA_DIR: join(dir, 'live') };
    assert.equal((await cliAsync(['migrate'], live)).status, 0);
    const port = await closedPort();
    const logs = await startLogsProcess(`sqlite:${join(dir, 'live', 'logs.sqlite')}`, port);
    cleanup.push(() => killHard(logs));
    const basic = `Basic ${Buffer.from(`${LOGS_ADMIN}:${LOGS_ADMIN_PASSWORD}`).toString('base64')}`;
    const marker = uniqueName('backup').toLowerCase();

    // Batches of 100 go on while the backup runs.
    let acknowledged = 0;
    let writing = true;
    const writer = (async () => {
      for (let batch = 0; writing; batch += 1) {
        const body = Array.from(
          { length: 100 },
          (_, i) => `{"index":{}}\n${JSON.stringify({ message: `${marker} b${batch} n${i}` })}\n`,
        ).join('');
        const response = await fetch(`http://127.0.0.1:${port}/api/v1/_elastic/_bulk`, {
          method: 'POST',
          headers: { authorization: basic, 'content-type': 'application/x-ndjson' },
          body,
        });
        assert.equal(response.status, 200);
        acknowledged += 100;
      }
    })();
    while (acknowledged < 500) await new Promise((resolve) => setImmediate(resolve));
    const backupDir = join(dir, 'backup');
    const taken = await cliAsync(['backup', backupDir], live);
    writing = false;
    await writer;
    assert.equal(taken.status, 0, taken.stderr);
    assert.match(taken.stdout, /backup complete/);
    const manifest = JSON.parse(readFileSync(join(backupDir, 'manifest.json'), 'utf8')) as {
      databases: { name: string; migrations: string[] }[];
    };
    assert.deepEqual(
      manifest.databases.map((saved) => saved.name),
      ['gateway', 'logs'],
    );
    assert.ok(manifest.databases[1]!.migrations.includes('0010_api_keys'));

    // The live databases are in use: restoring over them is refused.
    const occupied = await cliAsync(['restore', backupDir], live);
    assert.equal(occupied.status, 1);
    assert.match(occupied.stderr, new RegExp(`the logs database \\S+ is in use by pid ${logs.pid} .*: stop it first`));

    const restored = { DATA_DIR: join(dir, 'restored') };
    const put = await cliAsync(['restore', backupDir], restored);
    assert.equal(put.status, 0, put.stderr);
    assert.ok(existsSync(join(dir, 'restored', 'gateway.sqlite')));
    const { default: SQLite } = await import('better-sqlite3');
    const db = new SQLite(join(dir, 'restored', 'logs.sqlite'), { readonly: true });
    try {
      assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
      const { n } = db.prepare('SELECT count(*) AS n FROM log_entries').get() as { n: number };
      // Whole batches only (one transaction each), as many as were acknowledged before the copy at most.
      assert.ok(n >= 500 && n <= acknowledged && n % 100 === 0, `${n} of ${acknowledged}`);
      // The admin writes to the default tenant: its full-text index, an FTS5 table per hour.
      const hours = db.prepare(`SELECT hour FROM log_fts_hours WHERE tenant_id = 'default'`).all() as { hour: number }[];
      let fts = 0;
      for (const { hour } of hours) {
        const table = ftsTableName('default', hour);
        fts += (db.prepare(`SELECT count(*) AS n FROM "${table}" WHERE "${table}" MATCH ?`).get(`body : "${marker}"`) as { n: number }).n;
      }
      assert.equal(fts, n, 'the full-text index is as consistent as the table');
    } finally {
      db.close();
    }

    // A restored service starts and answers from the copy.
    await killHard(logs);
    const restoredLogs = await startLogsProcess(`sqlite:${join(dir, 'restored', 'logs.sqlite')}`, port);
    cleanup.push(() => killHard(restoredLogs));
    const health = await fetch(`http://127.0.0.1:${port}/readyz`);
    assert.equal(health.status, 200);

    // Tampered, partial, PostgreSQL.
    appendFileSync(join(backupDir, 'logs.sqlite'), 'x');
    const tampered = await cliAsync(['restore', backupDir], { DATA_DIR: join(dir, 'other') });
    assert.equal(tampered.status, 1);
    assert.match(tampered.stderr, /does not match the manifest/);
    rmSync(join(backupDir, 'manifest.json'));
    assert.match((await cliAsync(['restore', backupDir], { DATA_DIR: join(dir, 'other') })).stderr, /not a complete backup/);
    const postgres = await cliAsync(['backup', join(dir, 'pg')], { ...live, LOGS_DATABASE_URL: 'postgres://nobody@127.0.0.1:1/x' });
    assert.equal(postgres.status, 1);
    assert.match(postgres.stderr, /pg_dump/);
  });
});
