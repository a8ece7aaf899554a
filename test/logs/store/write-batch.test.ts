/**
 * The JavaScript half of a batch write, which both stores share: the rollup rows a batch adds (counted
 * per minute in one pass, hours added up from the minutes) and SQLite's multi-row inserts from one
 * flat array of values. The store tests check what reads answer; these check the pieces on shapes
 * the generated batches rarely have (entries out of order, before 1970, across hours, a statement's
 * worth of rows and one more).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { openDatabase } from '../../../src/shared/db/database.js';
import { HOUR, MINUTE, mod } from '../../../src/logs/modules/store/minutes.js';
import { rowInserts } from '../../../src/logs/modules/store/sqlite/sqlite-insert.js';
import { runInOrder, sqliteThreadDialect } from '../../../src/logs/modules/store/sqlite/threads/write-thread.js';
import { packValues, setPackedNumber, unpackValues } from '../../../src/logs/modules/store/sqlite/threads/packed-values.js';
import { batchRollups, ROLLUP_BUCKETS, type PreparedEntry } from '../../../src/logs/modules/store/write-batch.js';

const entry = (ts: number, level: string | null, service: string | null, host: string | null): PreparedEntry => ({
  ts,
  level,
  service,
  host,
  trace_id: null,
  span_id: null,
  message: 'm',
  attributes: {},
});

/** The counts as a plain loop makes them: one key per bucket and value. */
function naive(entries: readonly PreparedEntry[], bucketMs: number, keyOf: (entry: PreparedEntry) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const e of entries) {
    const key = `${e.ts - mod(e.ts, bucketMs)}|${keyOf(e)}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

describe('batch rollups', () => {
  // Out of time order, before and after 1970, over two hours; null columns count under ''.
  const levels = ['info', 'error', null];
  const services = ['api', null];
  const hosts = ['h1', 'h2', null];
  const base = -2 * MINUTE + 1;
  const entries = Array.from({ length: 500 }, (_, i) =>
    entry(base + ((i * 7919) % 500) * 13_337, levels[i % 3]!, services[i % 2]!, hosts[(i * 5) % 3]!),
  );

  test('every bucket counts each entry once, by level and service and by host, in lock order', () => {
    const rollups = batchRollups(entries);
    assert.deepEqual(
      rollups.map((r) => [r.table, r.hostTable]),
      ROLLUP_BUCKETS.map(([, table, hostTable]) => [table, hostTable]),
    );
    for (const [index, [bucketMs]] of ROLLUP_BUCKETS.entries()) {
      const { rows, hostRows } = rollups[index]!;
      const got = new Map(rows.map((row) => [`${row.minute}|${row.level}/${row.service}`, row.count]));
      assert.deepEqual(
        got,
        naive(entries, bucketMs, (e) => `${e.level ?? ''}/${e.service ?? ''}`),
      );
      assert.equal(got.size, rows.length, 'one row per bucket, level and service');
      const gotHosts = new Map(hostRows.map((row) => [`${row.minute}|${row.host}`, row.count]));
      assert.deepEqual(
        gotHosts,
        naive(entries, bucketMs, (e) => e.host ?? ''),
      );
      assert.equal(gotHosts.size, hostRows.length);
      // Sorted by bucket, then by value: concurrent upserts lock rows in one order.
      const order = rows.map((row) => [row.minute, row.level, row.service] as const);
      const sorted = [...order].sort(
        (a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0) || (a[2] < b[2] ? -1 : a[2] > b[2] ? 1 : 0),
      );
      assert.deepEqual(order, sorted);
      assert.ok(hostRows.every((row, i) => i === 0 || hostRows[i - 1]!.minute <= row.minute));
    }
    // The entries span more than one hour, so the hourly rows are sums, not copies.
    const hourly = rollups[ROLLUP_BUCKETS.findIndex(([bucketMs]) => bucketMs === HOUR)]!;
    assert.ok(new Set(hourly.rows.map((row) => row.minute)).size >= 2);
    assert.equal(
      hourly.rows.reduce((sum, row) => sum + row.count, 0),
      entries.length,
    );
  });

  test('an empty batch adds no rows', () => {
    assert.ok(batchRollups([]).every((r) => r.rows.length === 0 && r.hostRows.length === 0));
  });
});

// On the event loop's connection, statement by statement; on the SQLite thread, as one message.
for (const where of ['event loop', 'thread'] as const)
  describe(`SQLite multi-row inserts [${where}]`, () => {
    let db: Kysely<any>;
    let close: () => Promise<void>;
    let dir: string;
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'gerbang-inserts-'));
      ({ db, close } =
        where === 'thread'
          ? await openDatabase<any>(`sqlite:${join(dir, 'inserts.sqlite')}`, { sqliteThread: sqliteThreadDialect })
          : await openDatabase<any>('sqlite::memory:'));
      await sql`CREATE TABLE t (a INTEGER, b TEXT, c TEXT)`.execute(db);
    });
    after(async () => {
      await close();
      rmSync(dir, { recursive: true, force: true });
    });

    test('rows from one flat array, over more statements than one, in order and with every value as bound', async () => {
      // 32,766 parameters / 3 columns allows 10,922 rows a statement, capped at 1,000: 2,501 rows are three statements.
      const rows = 2_501;
      const values = Array.from({ length: rows }, (_, i) => [i, `b${i}`, i % 2 === 0 ? null : "it's; DROP TABLE t; --"]).flat();
      await runInOrder(db, [rowInserts('t', ['a', 'b', 'c'], values)]);
      const { rows: stored } = await sql<{ a: number; b: string; c: string | null }>`SELECT a, b, c FROM t ORDER BY rowid`.execute(db);
      assert.equal(stored.length, rows);
      assert.deepEqual(
        stored.flatMap((row) => [row.a, row.b, row.c]),
        values,
      );
    });

    test('columns whose value is SQL take as many values of the row as it has parameters', async () => {
      const columns = ['a', { name: 'b', value: 'upper(?)' }, { name: 'c', value: 'coalesce(?, ?)' }];
      await runInOrder(db, [rowInserts('t', columns, [10_001, 'x', null, 'second', 10_002, 'y', 'first', 'unused'])]);
      const { rows } = await sql<{ a: number; b: string; c: string }>`SELECT a, b, c FROM t WHERE a > 10000 ORDER BY a`.execute(db);
      assert.deepEqual(rows, [
        { a: 10_001, b: 'X', c: 'second' },
        { a: 10_002, b: 'Y', c: 'first' },
      ]);
      assert.throws(() => rowInserts('t', columns, [1, 'x', null]), /do not make rows of 4/);
    });

    test('a failing statement stops the list: what follows it is not run', async () => {
      await assert.rejects(
        runInOrder(db, [
          rowInserts('t', ['a', 'b', 'c'], [-1, 'first', null]),
          sql`INSERT INTO missing (a) VALUES (1)`.compile(db),
          rowInserts('t', ['a', 'b', 'c'], [-2, 'after the failure', null]),
        ]),
        /no such table: missing/,
      );
      const { rows } = await sql<{ b: string }>`SELECT b FROM t WHERE a < 0 ORDER BY a DESC`.execute(db);
      assert.deepEqual(
        rows.map((row) => row.b),
        ['first'],
      );
    });

    test('packed rows (what the SQLite thread is sent) store every value as bound, ids set after packing', async () => {
      await sql`CREATE TABLE packed (a, b, c)`.execute(db);
      const values = [
        [0, 'plain', null],
        [0, '', 'Grüße, 日本語 and 🙂'],
        [0, 2.5, -7],
        [0, 3n, 2n ** 60n + 1n],
        [0, Buffer.from([0, 1, 255]), "it's; DROP TABLE t; --"],
      ].flat();
      const packed = packValues(values);
      assert.deepEqual(unpackValues(packed), values);
      for (let row = 0; row < 5; row += 1) setPackedNumber(packed, row * 3, 100 + row);
      assert.throws(() => setPackedNumber(packed, 1, 1), /not a number/);
      await runInOrder(db, [rowInserts('packed', ['a', 'b', 'c'], packed)]);
      const { rows } = await sql<{ a: number; b: unknown; c: unknown; types: string; text: string }>`SELECT a, b, c,
        typeof(b) || ',' || typeof(c) AS types, CAST(c AS TEXT) AS text FROM packed ORDER BY a`.execute(db);
      assert.deepEqual(
        rows.map((row) => row.a),
        [100, 101, 102, 103, 104],
      );
      assert.deepEqual(
        rows.map((row) => row.types),
        // better-sqlite3 binds every JavaScript number as a REAL, a BigInt as an INTEGER.
        ['text,null', 'text,text', 'real,real', 'integer,integer', 'blob,text'],
      );
      assert.deepEqual(rows[1]!.c, 'Grüße, 日本語 and 🙂');
      assert.equal(rows[3]!.text, String(2n ** 60n + 1n)); // beyond a double: sent as the BigInt itself
      assert.deepEqual(Buffer.from(rows[4]!.b as Uint8Array), Buffer.from([0, 1, 255]));
    });

    test('strings past the packed text cap are sent as they are, and stored the same', async () => {
      await sql`CREATE TABLE capped (a, b)`.execute(db);
      // A cap of 8 characters stands for MAX_PACKED_TEXT (2^28), which a gigabyte body could pass.
      const values = [0, 'short', 0, 'longer than the cap', 0, 'abc', 0, ''];
      const packed = packValues(values, 8);
      assert.equal(packed.text, 'shortabc');
      assert.deepEqual(packed.others, ['longer than the cap']);
      assert.deepEqual(unpackValues(packed), values);
      for (let row = 0; row < 4; row += 1) setPackedNumber(packed, row * 2, row);
      await runInOrder(db, [rowInserts('capped', ['a', 'b'], packed)]);
      const { rows } = await sql<{ b: string }>`SELECT b FROM capped ORDER BY a`.execute(db);
      assert.deepEqual(
        rows.map((row) => row.b),
        ['short', 'longer than the cap', 'abc', ''],
      );
    });

    test('values that do not make whole rows are refused before any statement is made', () => {
      assert.throws(() => rowInserts('t', ['a', 'b', 'c'], [1, 'x']), /do not make rows of 3/);
    });
  });
