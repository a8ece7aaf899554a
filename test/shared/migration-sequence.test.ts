/**
 * One migration sequence per service (docs/architecture.md, "Migrations"): one file each in the
 * service's folder, one order, numbers that cannot collide, no app imports; a fresh database and one
 * upgraded from the oldest data directory end with the same history in the same order; a history
 * with a gap is refused; the names older versions recorded are renamed, an unfinished rewrite too.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, test } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { gatewayMigrations } from '../../src/gateway/db/migrations/index.js';
import { logsMigrations } from '../../src/logs/db/migrations/index.js';
import { openDatabase, type DialectName } from '../../src/shared/db/database.js';
import { migrateToLatest, migrationSequence, pendingMigrations, type MigrationSequence } from '../../src/shared/db/migrator.js';
import { createTestDatabase, DIALECTS } from '../helpers/databases.js';
import { insertOldEvents, migrateAsOlderVersion, OLDEST_GATEWAY_HISTORY, OLDEST_LOGS_HISTORY } from '../helpers/oldest-data.js';

const SERVICES = [
  { table: 'gateway', folder: 'src/gateway/db/migrations', sequence: gatewayMigrations, oldest: OLDEST_GATEWAY_HISTORY },
  { table: 'logs', folder: 'src/logs/db/migrations', sequence: logsMigrations, oldest: OLDEST_LOGS_HISTORY },
] as const;

const importsOf = (file: string) =>
  [...readFileSync(file, 'utf8').matchAll(/^(?:import|export)[^;]*?from '([^']+)'/gms)].map((match) => match[1]!);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

/** The history in the order it was written: by time, the same millisecond by name (names sort in run order). */
async function history(db: Kysely<any>, table: string): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`SELECT name FROM ${sql.table(`${table}_migrations`)} ORDER BY timestamp, name`.execute(db);
  return rows.map((row) => row.name);
}

/** Writes the history and the saved positions under the names older versions gave them. */
async function withOldNames(db: Kysely<any>, { renamed }: MigrationSequence, table: string): Promise<void> {
  for (const [old, current] of renamed) {
    await sql`UPDATE ${sql.table(`${table}_migrations`)} SET name = ${old} WHERE name = ${current}`.execute(db);
    await sql`UPDATE ${sql.table(`${table}_migration_progress`)} SET name = ${old} WHERE name = ${current}`.execute(db);
  }
}

async function withDatabase<T>(dialect: DialectName, work: (db: Kysely<any>) => Promise<T>): Promise<T> {
  const testDb = await createTestDatabase(dialect);
  const database = await openDatabase<any>(testDb.url);
  try {
    return await work(database.db);
  } finally {
    await database.close();
    await testDb.drop();
  }
}

describe('migration sequences', () => {
  for (const { table, folder, sequence } of SERVICES) {
    test(`${table}: one file a migration, named NNNN_words, numbers once each and in the order they run`, () => {
      const names = Object.keys(sequence.migrations);
      const files = readdirSync(folder).filter((name) => name !== 'index.ts' && name.endsWith('.ts'));
      assert.deepEqual(
        files.map((file) => file.replace(/\.ts$/, '')).sort(),
        [...names].sort(),
        'the folder holds every migration, and only them',
      );
      for (const name of names) assert.match(name, /^\d{4}_[a-z0-9_]+$/);
      const numbers = names.map((name) => Number(name.slice(0, 4)));
      assert.equal(new Set(numbers).size, numbers.length, 'no number twice');
      assert.deepEqual(
        numbers,
        [...numbers].sort((a, b) => a - b),
        'declared in number order',
      );
      assert.deepEqual(names, [...names].sort(), 'names sort in the order they run');
    });

    test(`${table}: a migration imports kysely, the migrator's types and its own support/ only; nothing else imports support/`, () => {
      for (const file of readdirSync(folder).filter((name) => /^\d{4}_.*\.ts$/.test(name))) {
        for (const source of importsOf(join(folder, file))) {
          assert.ok(
            source === 'kysely' || source.startsWith('./support/') || source.endsWith('/shared/db/migrator.js'),
            `${file} imports ${source}`,
          );
        }
      }
      for (const file of sourceFiles('src').filter((path) => !path.startsWith(`${folder}/`))) {
        for (const source of importsOf(file)) {
          assert.ok(
            !source.includes('migrations/support/'),
            `${relative('.', file)} imports ${source}: migration helpers are not runtime code`,
          );
        }
      }
    });
  }

  test('the logs service: every name an older version recorded has a current name, and none is reused', () => {
    const current = Object.keys(logsMigrations.migrations);
    for (const [old, now] of logsMigrations.renamed) {
      assert.ok(current.includes(now), `${old} -> ${now}`);
      assert.ok(!current.includes(old), `${old} is also a current name`);
      assert.equal(old.slice(4), now.slice(4), 'only the number changes');
    }
    assert.equal(new Set(logsMigrations.renamed.values()).size, logsMigrations.renamed.size);
    // The oldest data directory, renamed, is the first migrations.
    const oldest = OLDEST_LOGS_HISTORY.map((name) => logsMigrations.renamed.get(name) ?? name);
    assert.deepEqual(oldest, current.slice(0, oldest.length));
  });

  test('a sequence with a number twice, out of order, or an ambiguous rename is refused as it is made', () => {
    const noop = { up: async () => undefined };
    assert.throws(() => migrationSequence({ '0001_a': noop, '0001_b': noop }), /0001_b comes after 0001_a/);
    assert.throws(() => migrationSequence({ '0002_a': noop, '0001_b': noop }), /0001_b comes after 0002_a/);
    assert.throws(() => migrationSequence({ '01_a': noop }), /not NNNN_words/);
    assert.throws(() => migrationSequence({ '0001_a': noop, '0002_b': noop }, { '0002_b': '0001_a' }), /also a current name/);
    assert.throws(() => migrationSequence({ '0001_a': noop }, { '0100_a': '0001_a', '0200_a': '0001_a' }), /two old migration names/);
    assert.throws(() => migrationSequence({ '0001_a': noop }, { '0100_a': '0009_z' }), /does not exist/);
  });
});

for (const dialect of DIALECTS) {
  describe(`one migration order [${dialect}]`, () => {
    for (const { table, sequence, oldest } of SERVICES) {
      test(`${table}: a fresh database and one from the oldest data directory end with the same history, in the same order`, async () => {
        const names = Object.keys(sequence.migrations);
        const fresh = await withDatabase(dialect, async (db) => {
          assert.deepEqual(await migrateToLatest(db, sequence, table), names);
          return history(db, table);
        });
        const upgraded = await withDatabase(dialect, async (db) => {
          await migrateAsOlderVersion(db, sequence, table, oldest);
          if (table === 'logs') await insertOldEvents(db, dialect, 'default', 50);
          assert.deepEqual(await pendingMigrations(db, sequence, table), names.slice(oldest.length));
          assert.deepEqual(await migrateToLatest(db, sequence, table), names.slice(oldest.length));
          assert.deepEqual(await migrateToLatest(db, sequence, table), [], 'nothing left to run');
          return history(db, table);
        });
        assert.deepEqual(fresh, names);
        assert.deepEqual(upgraded, names);
      });
    }

    test('logs: a history with a gap is refused, under current names or old ones, and nothing runs', async () => {
      await withDatabase(dialect, async (db) => {
        await migrateToLatest(db, logsMigrations, 'logs');
        await sql`DELETE FROM logs_migrations WHERE name = '0013_retention_floors'`.execute(db);
        await assert.rejects(
          migrateToLatest(db, logsMigrations, 'logs'),
          /records 0014_apm_span_adjusted_count but not 0013_retention_floors/,
        );
        assert.ok(!(await history(db, 'logs')).includes('0013_retention_floors'));
      });
      await withDatabase(dialect, async (db) => {
        // An older version that ran a later migration before earlier ones (unordered runs).
        await migrateAsOlderVersion(db, logsMigrations, 'logs', OLDEST_LOGS_HISTORY);
        await sql`INSERT INTO logs_migrations (name, timestamp) VALUES ('0200_phrase_pairs', ${new Date().toISOString()})`.execute(db);
        await assert.rejects(migrateToLatest(db, logsMigrations, 'logs'), /records 0020_phrase_pairs but not 0009_document_ids/);
        const { rows } = await sql`SELECT 1 AS found FROM logs_migrations WHERE name = '0009_document_ids'`.execute(db);
        assert.equal(rows.length, 0);
      });
    });

    test('logs: a data rewrite an older version began goes on under its new name', async () => {
      await withDatabase(dialect, async (db) => {
        await migrateAsOlderVersion(db, logsMigrations, 'logs', OLDEST_LOGS_HISTORY);
        await insertOldEvents(db, dialect, 'default', 50);
        const stop = new Error('stopped');
        await assert.rejects(
          migrateToLatest(db, logsMigrations, 'logs', {
            onProgress: ({ migration, done }) => {
              if (migration === '0011_time_ordered_facets' && done > 0) throw stop;
            },
          }),
          /0011_time_ordered_facets failed: stopped/,
        );
        // As the older version would have left it: its names, and its position under its name.
        await withOldNames(db, logsMigrations, 'logs');
        const { rows } = await sql<{ name: string }>`SELECT name FROM logs_migration_progress`.execute(db);
        assert.deepEqual(rows, [{ name: '0120_time_ordered_facets' }]);

        const lines: { msg: string; migration?: string }[] = [];
        const applied = await migrateToLatest(db, logsMigrations, 'logs', {
          log: { info: (fields, msg) => lines.push({ ...fields, msg }) },
        });
        assert.equal(applied[0], '0011_time_ordered_facets');
        assert.ok(lines.some((line) => line.msg === 'migration resumed' && line.migration === '0011_time_ordered_facets'));
        assert.deepEqual(await history(db, 'logs'), Object.keys(logsMigrations.migrations));
        const { rows: left } = await sql`SELECT name FROM logs_migration_progress`.execute(db);
        assert.deepEqual(left, []);
      });
    });
  });
}
