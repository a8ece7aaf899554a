import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, openSync, closeSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { ChildProcess } from 'node:child_process';
import { eventually } from '../helpers/eventually.js';
import { LOGS_ADMIN, LOGS_ADMIN_PASSWORD } from '../helpers/logs.js';
import { killHard, startLogsProcess } from '../helpers/logs-process.js';
import { startOwnPostgres, type OwnPostgres } from '../helpers/own-postgres.js';
import { closedPort, rawRequest, type RawResponse } from '../helpers/upstream.js';

/**
 * The store failing under ingestion, with real processes: PostgreSQL stopped, a full disk (a small
 * tmpfs), a data directory the kernel made read-only (ext4 on a loop device, errors=remount-ro).
 * Each answers 503 with Retry-After in the documented shape, counts in
 * logs_ingest_store_failures_total, makes /readyz 503, and ingestion works again once the storage
 * is back. Mounting needs root (as here and in CI): a test that cannot mount fails, it does not skip.
 */

const BASIC = `Basic ${Buffer.from(`${LOGS_ADMIN}:${LOGS_ADMIN_PASSWORD}`).toString('base64')}`;

function bulk(port: number, marker: string, entries = 50): Promise<RawResponse> {
  const lines = Array.from(
    { length: entries },
    (_, i) => `{"index":{}}\n${JSON.stringify({ message: `${marker} entry ${i} ${'padding '.repeat(40)}`, level: 'info' })}`,
  );
  return rawRequest(port, 'POST', '/api/v1/_elastic/_bulk', {
    headers: { authorization: BASIC, 'content-type': 'application/x-ndjson' },
    body: `${lines.join('\n')}\n`,
  });
}

function otlp(port: number, marker: string): Promise<RawResponse> {
  const body = {
    resourceLogs: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'fault-suite' } }] },
        scopeLogs: [{ logRecords: [{ timeUnixNano: String(Date.now() * 1_000_000), body: { stringValue: `${marker} otlp` } }] }],
      },
    ],
  };
  return rawRequest(port, 'POST', '/v1/logs', {
    headers: { authorization: BASIC, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** The sum of logs_ingest_store_failures_total over its series, from a real scrape. */
async function storeFailures(port: number): Promise<number> {
  const scrape = await rawRequest(port, 'GET', '/metrics');
  assert.equal(scrape.status, 200, 'the scrape answers while the store fails');
  return scrape.body
    .toString()
    .split('\n')
    .filter((line) => line.startsWith('logs_ingest_store_failures_total{'))
    .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
}

async function readiness(port: number): Promise<{ status: number; reasons: Record<string, unknown>[] }> {
  const answer = await rawRequest(port, 'GET', '/readyz');
  const body = JSON.parse(answer.body.toString()) as { reasons?: Record<string, unknown>[] };
  return { status: answer.status, reasons: body.reasons ?? [] };
}

async function count(port: number, word: string): Promise<number> {
  const answer = await rawRequest(port, 'POST', '/api/v1/_elastic/logs/_search', {
    headers: { authorization: BASIC, 'content-type': 'application/json' },
    body: JSON.stringify({ query: { match: { message: word } }, track_total_hits: true, size: 0 }),
  });
  assert.equal(answer.status, 200, answer.body.toString());
  return (JSON.parse(answer.body.toString()) as { hits: { total: { value: number } } }).hits.total.value;
}

/** A refused batch as the Elasticsearch API answers it: 503, Retry-After, Elasticsearch's error shape. */
function assertRefusedBulk(answer: RawResponse, type: string, reason: string): void {
  assert.equal(answer.status, 503, answer.body.toString());
  assert.equal(answer.headers['retry-after'], '30');
  const body = JSON.parse(answer.body.toString()) as { status: number; error: { type: string; reason: string } };
  assert.equal(body.status, 503);
  assert.equal(body.error.type, type);
  assert.equal(body.error.reason, reason);
}

/** A refused OTLP batch: 503, Retry-After, `{"error": message}` (docs/errors.md). */
function assertRefusedOtlp(answer: RawResponse, message: string): void {
  assert.equal(answer.status, 503, answer.body.toString());
  assert.equal(answer.headers['retry-after'], '30');
  assert.deepEqual(JSON.parse(answer.body.toString()), { error: message });
}

async function stopGracefully(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}

describe('logs faults: PostgreSQL stopped in the middle of ingestion', () => {
  let postgres: OwnPostgres;
  let child: ChildProcess;
  let port: number;
  before(async () => {
    postgres = await startOwnPostgres();
    port = await closedPort();
    child = await startLogsProcess(postgres.url, port);
  });
  after(async () => {
    if (child) await killHard(child);
    await postgres?.remove();
  });

  test('batches in flight and after answer 503 with Retry-After (never 500), the failures are counted, /readyz is 503, and ingestion resumes once PostgreSQL is back', async () => {
    assert.equal((await bulk(port, 'beforestop')).status, 200);
    const failuresBefore = await storeFailures(port);

    // A shipper sending batch after batch while the database stops.
    const statuses: number[] = [];
    let sending = true;
    const shipper = (async () => {
      while (sending) statuses.push((await bulk(port, 'duringstop')).status);
    })();
    await eventually(async () => assert.ok(statuses.length >= 3));
    await postgres.stop();
    await eventually(async () => assert.ok(statuses.includes(503), `statuses so far: ${statuses.join(' ')}`));
    sending = false;
    await shipper;
    assert.deepEqual(
      statuses.filter((status) => status !== 200 && status !== 503),
      [],
    );

    assertRefusedBulk(await bulk(port, 'whiledown'), 'unavailable_shards_exception', 'database unavailable: retry later');
    assertRefusedOtlp(await otlp(port, 'whiledown'), 'database unavailable: retry later');
    const failed = statuses.filter((status) => status === 503).length + 2;
    assert.ok((await storeFailures(port)) >= failuresBefore + failed, 'every refused batch is counted');
    const notReady = await readiness(port);
    assert.equal(notReady.status, 503);
    assert.ok(notReady.reasons.some((reason) => reason.reason === 'database'));

    await postgres.start();
    await eventually(async () => assert.equal((await bulk(port, 'afterstart')).status, 200), 60_000, 250);
    assert.equal((await otlp(port, 'afterstart')).status, 200);
    assert.equal((await readiness(port)).status, 200);
    assert.ok((await count(port, 'afterstart')) >= 1);
    assert.ok((await count(port, 'beforestop')) === 50);
  });
});

describe('logs faults: a full disk (the data directory on a small tmpfs)', () => {
  let dir: string;
  let mounted = false;
  let child: ChildProcess;
  let port: number;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gerbang-full-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=24m', 'tmpfs', dir]);
    mounted = true;
    port = await closedPort();
    child = await startLogsProcess(`sqlite:${join(dir, 'logs.sqlite')}`, port, { DATA_DIR: dir });
  });
  after(async () => {
    if (child) await killHard(child);
    if (mounted) execFileSync('umount', [dir]);
    rmSync(dir, { recursive: true, force: true });
  });

  test('503 storage full with Retry-After, counted, /readyz `storage` full; freeing space brings ingestion back without a restart', async () => {
    assert.equal((await bulk(port, 'beforefull')).status, 200);
    const failuresBefore = await storeFailures(port);
    const filler = join(dir, 'filler');
    fillUp(filler);

    // Until the store has used up what it had in hand (free pages, its WAL): every answer is 200 or 503.
    const statuses: number[] = [];
    await eventually(
      async () => {
        const answer = await bulk(port, 'whilefull', 2000);
        statuses.push(answer.status);
        assert.equal(answer.status, 503);
        assertRefusedBulk(answer, 'cluster_block_exception', 'storage full: retry later');
      },
      20_000,
      0,
    );
    assert.deepEqual(
      statuses.filter((status) => status !== 200 && status !== 503),
      [],
    );
    assertRefusedOtlp(await otlp(port, 'whilefull'), 'storage full: retry later');
    assert.ok((await storeFailures(port)) >= failuresBefore + 2);
    const notReady = await readiness(port);
    assert.equal(notReady.status, 503);
    assert.deepEqual(
      notReady.reasons.map(({ reason, problem }) => ({ reason, problem })),
      [{ reason: 'storage', problem: 'full' }],
    );

    rmSync(filler);
    assert.equal((await readiness(port)).status, 200);
    assert.equal((await bulk(port, 'afterfree')).status, 200);
    assert.equal(await count(port, 'afterfree'), 50);
    assert.equal(await count(port, 'beforefull'), 50);
  });
});

describe('logs faults: a data directory the kernel made read-only (ext4, errors=remount-ro)', () => {
  let dir: string;
  let image: string;
  let mounted = false;
  let child: ChildProcess | undefined;
  let port: number;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gerbang-ro-'));
    image = `${dir}.img`;
    writeFileSync(image, '');
    execFileSync('truncate', ['-s', '64M', image]);
    execFileSync('mkfs.ext4', ['-q', '-F', image]);
    execFileSync('mount', ['-o', 'loop,errors=remount-ro', image, dir]);
    mounted = true;
    port = await closedPort();
    child = await startLogsProcess(`sqlite:${join(dir, 'logs.sqlite')}`, port, { DATA_DIR: dir });
  });
  after(async () => {
    if (child) await killHard(child);
    if (mounted) execFileSync('umount', [dir]);
    rmSync(dir, { recursive: true, force: true });
    rmSync(image, { force: true });
  });

  test('503 storage read-only with Retry-After, counted, /readyz `storage` read-only; after the repair the data is all there', async () => {
    assert.equal((await bulk(port, 'beforereadonly')).status, 200);
    const failuresBefore = await storeFailures(port);
    // What a failing disk does: the kernel remounts the file system read-only under the running service.
    const device = execFileSync('findmnt', ['-no', 'SOURCE', dir]).toString().trim();
    writeFileSync(`/sys/fs/ext4/${device.replace('/dev/', '')}/trigger_fs_error`, '1');

    assertRefusedBulk(await bulk(port, 'whilereadonly'), 'cluster_block_exception', 'storage read-only: retry later');
    assertRefusedOtlp(await otlp(port, 'whilereadonly'), 'storage read-only: retry later');
    assert.ok((await storeFailures(port)) >= failuresBefore + 2);
    const notReady = await readiness(port);
    assert.equal(notReady.status, 503);
    assert.deepEqual(
      notReady.reasons.map(({ reason, problem }) => ({ reason, problem })),
      [{ reason: 'storage', problem: 'read-only' }],
    );
    assert.equal((await rawRequest(port, 'GET', '/healthz')).status, 200, 'alive: a restart would not mend the disk');

    // The operator's repair: stop, unmount, fsck, mount read-write, start.
    await stopGracefully(child!);
    child = undefined;
    execFileSync('umount', [dir]);
    mounted = false;
    try {
      execFileSync('e2fsck', ['-f', '-y', image], { stdio: 'ignore' });
    } catch (error) {
      // 1: errors corrected, which is what a repair after an error remount does.
      if ((error as { status?: number }).status !== 1) throw error;
    }
    execFileSync('mount', ['-o', 'loop,errors=remount-ro', image, dir]);
    mounted = true;
    child = await startLogsProcess(`sqlite:${join(dir, 'logs.sqlite')}`, port, { DATA_DIR: dir });
    assert.equal((await readiness(port)).status, 200);
    assert.equal((await bulk(port, 'afterrepair')).status, 200);
    assert.equal(await count(port, 'afterrepair'), 50);
    assert.equal(await count(port, 'beforereadonly'), 50);
  });
});

/** Writes zeros to `path` until the file system is full. */
function fillUp(path: string): void {
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(1_048_576);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
}
