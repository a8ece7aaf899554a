/**
 * What a row stores comes back as it was sent, and is found by every kind of condition, whatever
 * the layout (SQLite since migration 0190: attribute names by number, JSONB, ids as bytes, levels as
 * numbers; sqlite-rows.ts, attribute-codes.ts; PostgreSQL since 0210: names by number), and the upgrade of rows stored before them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { openDatabase } from '../../../src/shared/db/database.js';
import { migrateToLatest } from '../../../src/shared/db/migrator.js';
import { MAX_ATTRIBUTE_CODES } from '../../../src/logs/modules/store/attribute-codes.js';
import { createLogStore, type LogEntry, type LogStore } from '../../../src/logs/modules/store/index.js';
import { logsMigrations } from '../../../src/logs/db/migrations/index.js';
import { createTestDatabase, DIALECTS } from '../../helpers/databases.js';
import { HOUR, MINUTE, T0, openTestStore, openTestStoreAt, type TestStore } from './helpers.js';
import { plain } from '../../helpers/prototypes.js';
import { searchCondition } from '../../../src/logs/modules/query/condition.js';

const SENT: LogEntry[] = [
  {
    timestamp: T0 + MINUTE,
    level: 'error',
    message: 'lower-case hex ids',
    trace_id: '4bf92f3577b34da6a3ce929d0e0e4736',
    span_id: '00f067aa0ba902b7',
    attributes: { 'http.status_code': 503, ok: false, ratio: 1.5, '0': 'a name like a number', '~tilde': 'first' },
  },
  {
    timestamp: T0 + 2 * MINUTE,
    level: 'custom',
    message: 'upper-case and odd ids',
    trace_id: '4BF92F3577B34DA6A3CE929D0E0E4736',
    span_id: 'abc',
    attributes: { 'http.status_code': '503', 'we"ird\\name': 'v"q', '10': 10, ok: true },
  },
  {
    timestamp: T0 + 3 * MINUTE + 999,
    level: 'info',
    message: 'ids that are no hex',
    trace_id: 'trace-1',
    span_id: 'ab12zz',
    attributes: { '~tilde': 'second', ünï: 'ç' },
  },
  { timestamp: T0 + 4 * MINUTE, message: 'nothing else' },
];

for (const dialect of DIALECTS) {
  describe(`log store rows [${dialect}]`, () => {
    let handle: TestStore;
    let store: LogStore;

    before(async () => {
      handle = await openTestStore(dialect);
      store = handle.store;
      await store.append('acme', SENT);
    });
    after(async () => handle.close());

    const find = async (query: string) =>
      (
        await store.search({
          tenantId: 'acme',
          condition: searchCondition(query),
          from: T0,
          to: T0 + HOUR,
          page: 1,
          limit: 10,
          sort: { field: '@timestamp', order: 'asc' },
        })
      ).entries;
    const messages = async (query: string) => (await find(query)).map((entry) => entry.message);

    test('every column and attribute comes back as it was sent', async () => {
      const entries = await find('');
      assert.equal(entries.length, SENT.length);
      entries.forEach((entry, index) => {
        const sent = SENT[index]!;
        assert.equal(entry.timestamp, sent.timestamp);
        assert.equal(entry.level, sent.level);
        assert.equal(entry.trace_id, sent.trace_id);
        assert.equal(entry.span_id, sent.span_id);
        assert.deepEqual(plain(entry.attributes), sent.attributes ?? {});
      });
    });

    test('conditions on ids, levels and attributes of every name find exactly their entries', async () => {
      assert.deepEqual(await messages('trace_id:4bf92f3577b34da6a3ce929d0e0e4736'), ['lower-case hex ids']);
      assert.deepEqual(await messages('trace_id:4BF92F3577B34DA6A3CE929D0E0E4736'), ['upper-case and odd ids']);
      assert.deepEqual(await messages('span_id:abc OR span_id:ab12zz'), ['upper-case and odd ids', 'ids that are no hex']);
      assert.deepEqual(await messages('span_id:00f0*'), ['lower-case hex ids']);
      assert.deepEqual(await messages('_exists_:trace_id'), ['lower-case hex ids', 'upper-case and odd ids', 'ids that are no hex']);
      assert.deepEqual(await messages('level:custom'), ['upper-case and odd ids']);
      assert.deepEqual(await messages('level:error OR level:info'), ['lower-case hex ids', 'ids that are no hex']);
      assert.deepEqual(await messages('http.status_code:503'), ['lower-case hex ids', 'upper-case and odd ids']);
      assert.deepEqual(await messages('ratio:>1'), ['lower-case hex ids']);
      assert.deepEqual(await messages('ok:true'), ['upper-case and odd ids']);
      // Names that look like the numbers names are stored under (attribute-codes.ts) are names like any other.
      assert.deepEqual(await messages('10:10'), ['upper-case and odd ids']);
      assert.deepEqual(await messages('0:"a name like a number"'), ['lower-case hex ids']);
      assert.deepEqual(await messages('_exists_:0'), ['lower-case hex ids']);
      assert.deepEqual(await messages('ünï:ç'), ['ids that are no hex']);
      assert.deepEqual(await messages('never.sent:x'), []);
      assert.deepEqual(
        await messages('-_exists_:never.sent'),
        SENT.map((entry) => entry.message),
      );
    });

    test('sorts, groups and distinct values of attributes read them by their names', async () => {
      const sorted = await store.search({
        tenantId: 'acme',
        condition: searchCondition('_exists_:ok'),
        from: T0,
        to: T0 + HOUR,
        page: 1,
        limit: 10,
        sort: { field: 'ok', order: 'desc' },
      });
      assert.deepEqual(
        sorted.entries.map((entry) => entry.attributes['ok']),
        [true, false],
      );
      assert.deepEqual(await store.distinct({ tenantId: 'acme', field: 'ünï', limit: 10 }), [{ value: 'ç', count: 1 }]);
      assert.deepEqual(await store.distinct({ tenantId: 'acme', field: '10', limit: 10 }), [{ value: '10', count: 1 }]);
      const buckets = await store.histogram({
        tenantId: 'acme',
        from: T0,
        to: T0 + 5 * MINUTE - 1,
        intervalMs: 5 * MINUTE,
        groupBy: 'http.status_code',
      });
      assert.deepEqual(plain(buckets.map((bucket) => bucket.groups)), [{ '503': 2, '': 2 }]);
    });
  });
}

/** Rows as they are stored on SQLite, read with SQL alone. */
async function storedLayout(handle: TestStore) {
  const { rows } = await sql<{
    attributes: string;
    kind: string;
    trace: string | null;
    level: unknown;
  }>`SELECT json(attributes) AS attributes,
    typeof(attributes) AS kind, typeof(trace_bin) AS trace, typeof(level_code) || ' ' || level_code AS level FROM log_entries ORDER BY tenant_id, id`.execute(
    handle.database.db,
  );
  return rows;
}

describe('log store rows: the SQLite layout', () => {
  test('names are numbered once per tenant, ids that are lower-case hex are bytes, known levels are numbers', async () => {
    const handle = await openTestStore('sqlite');
    try {
      await handle.store.append('acme', SENT);
      await handle.store.append('other', [{ timestamp: T0, level: 'warn', message: 'x', attributes: { b: 1, a: 2 } }]);
      const rows = await storedLayout(handle);
      assert.deepEqual(
        rows.map((row) => [row.kind, row.trace, row.level]),
        [
          ['blob', 'blob', 'integer 2'],
          ['blob', 'text', 'text custom'],
          ['blob', 'text', 'integer 0'],
          ['blob', 'null', null],
          ['blob', 'null', 'integer 1'],
        ],
      );
      // (JavaScript lists a name like "0" first.)
      assert.equal(rows[0]!.attributes, '{"0":"a name like a number","1":503,"2":false,"3":1.5,"4":"first"}');
      assert.equal(rows[4]!.attributes, '{"0":1,"1":2}', "another tenant's names have their own numbers");
    } finally {
      await handle.close();
    }
  });
});

/** Each row's attributes as stored (keys by number), read with SQL alone, in the order they were stored. */
async function storedAttributes(handle: TestStore): Promise<Record<string, unknown>[]> {
  const { rows } =
    handle.database.dialect === 'sqlite'
      ? await sql<{ attributes: string }>`SELECT json(attributes) AS attributes FROM log_entries ORDER BY tenant_id, id`.execute(
          handle.database.db,
        )
      : await sql<{ attributes: string }>`SELECT a::text AS attributes FROM log_blocks b
          CROSS JOIN LATERAL unnest(b.attributes) WITH ORDINALITY AS e(a, n) ORDER BY b.tenant_id, b.first_id, e.n`.execute(
          handle.database.db,
        );
  return rows.map((row) => JSON.parse(row.attributes) as Record<string, unknown>);
}

for (const dialect of DIALECTS) {
  describe(`log store rows: attribute names by number [${dialect}]`, () => {
    test('names are numbered once per tenant, in the order they arrive', async () => {
      const handle = await openTestStore(dialect);
      try {
        await handle.store.append('acme', SENT);
        await handle.store.append('other', [{ timestamp: T0, level: 'warn', message: 'x', attributes: { b: 1, a: 2 } }]);
        const rows = await storedAttributes(handle);
        // (JavaScript lists a name like "0" first.)
        assert.deepEqual(rows[0], { '0': 'a name like a number', '1': 503, '2': false, '3': 1.5, '4': 'first' });
        assert.deepEqual(rows[1], { '5': 10, '1': '503', '6': 'v"q', '2': true }, 'known names keep their numbers');
        assert.deepEqual(rows[4], { '0': 1, '1': 2 }, "another tenant's names have their own numbers");
      } finally {
        await handle.close();
      }
    });

    test('past the last number a tenant has, new names are stored by name, and found', async () => {
      const handle = await openTestStore(dialect);
      try {
        const many = Object.fromEntries(Array.from({ length: MAX_ATTRIBUTE_CODES + 3 }, (_, index) => [`k${index}`, index]));
        await handle.store.append('acme', [{ timestamp: T0, message: 'many names', attributes: many }]);
        await handle.store.append('acme', [{ timestamp: T0 + 1, message: 'a late name', attributes: { late: 'yes', k5: 5 } }]);
        const rows = await storedAttributes(handle);
        assert.equal(rows[0]!['zz'], MAX_ATTRIBUTE_CODES - 1, 'the last number, "zz", is the last name that got one');
        assert.equal(rows[0]![`~k${MAX_ATTRIBUTE_CODES}`], MAX_ATTRIBUTE_CODES);
        assert.deepEqual(rows[1], { '~late': 'yes', '5': 5 });
        const found = async (query: string) =>
          (
            await handle.store.search({ tenantId: 'acme', condition: searchCondition(query), from: T0, to: T0 + 1000, page: 1, limit: 5 })
          ).entries.map((entry) => entry.message);
        assert.deepEqual(await found(`k${MAX_ATTRIBUTE_CODES + 2}:${MAX_ATTRIBUTE_CODES + 2}`), ['many names']);
        assert.deepEqual(await found('k5:5'), ['a late name', 'many names']);
        assert.deepEqual(await found('late:yes'), ['a late name']);
        const [entry] = (
          await handle.store.search({ tenantId: 'acme', condition: searchCondition('many'), from: T0, to: T0 + 1000, page: 1, limit: 1 })
        ).entries;
        assert.deepEqual(plain(entry!.attributes), many);
      } finally {
        await handle.close();
      }
    });

    test('a store learns the numbers another store on the same database gave, for its reads and its writes', async () => {
      const testDb = await createTestDatabase(dialect);
      const first = await openTestStoreAt(testDb.url);
      const second = await openTestStoreAt(testDb.url);
      try {
        await first.store.append('acme', [{ timestamp: T0, message: 'one', attributes: { a: 1 } }]);
        // `second` has loaded the tenant's numbers ({a}) before `first` gives another ({b}).
        assert.equal(
          (await second.store.search({ tenantId: 'acme', condition: searchCondition('a:1'), from: T0, to: T0 + HOUR, page: 1, limit: 5 }))
            .total,
          1,
        );
        await first.store.append('acme', [{ timestamp: T0 + 1, message: 'two', attributes: { b: 2 } }]);
        // A range is checked on the rows, by the name's number (an equality would be a facet lookup).
        const read = await second.store.search({
          tenantId: 'acme',
          condition: searchCondition('b:>1'),
          from: T0,
          to: T0 + HOUR,
          page: 1,
          limit: 5,
        });
        assert.deepEqual(plain(read.entries.map((entry) => entry.attributes)), [{ b: 2 }]);
        await second.store.append('acme', [{ timestamp: T0 + 2, message: 'three', attributes: { c: 3, b: 3 } }]);
        // Both give numbers at once: none is given twice, and each store reads the other's names.
        await Promise.all([
          first.store.append('acme', [{ timestamp: T0 + 3, message: 'four', attributes: { d: 4, e: 4 } }]),
          second.store.append('acme', [{ timestamp: T0 + 4, message: 'five', attributes: { f: 5, e: 5 } }]),
        ]);
        for (const reader of [first, second]) {
          const all = await reader.store.search({
            tenantId: 'acme',
            condition: searchCondition(''),
            from: T0,
            to: T0 + HOUR,
            page: 1,
            limit: 10,
            sort: { field: '@timestamp', order: 'asc' },
          });
          assert.deepEqual(plain(all.entries.map((entry) => entry.attributes)), [
            { a: 1 },
            { b: 2 },
            { c: 3, b: 3 },
            { d: 4, e: 4 },
            { f: 5, e: 5 },
          ]);
          const e = await reader.store.search({
            tenantId: 'acme',
            condition: searchCondition('e:>=4'),
            from: T0,
            to: T0 + HOUR,
            page: 1,
            limit: 10,
          });
          assert.equal(e.total, 2);
        }
      } finally {
        await first.close();
        await second.close();
        await testDb.drop();
      }
    });
  });
}

/**
 * The rows each dialect's last row migration rewrites, made again as the store wrote them before it:
 * SQLite's before 0019_compact_rows (names, JSON text, hex text, level text, times), PostgreSQL's before 0021
 * (attributes under their names). `stored` is how a row of tenant `other` holds its attributes after.
 */
const UPGRADES = {
  sqlite: {
    migration: '0019_compact_rows',
    async rewind(db: Kysely<any>): Promise<void> {
      const names = sql`(SELECT json_group_object(coalesce((SELECT name FROM log_attribute_codes c WHERE c.tenant_id = o.tenant_id
          AND (CASE WHEN length(j.key) = 1 THEN instr('0123456789abcdefghijklmnopqrstuvwxyz', j.key) - 1 END) = c.code), substr(j.key, 2)),
          CASE j.type WHEN 'true' THEN json('true') WHEN 'false' THEN json('false') ELSE j.value END) FROM json_each(o.attributes) j)`;
      await sql`ALTER TABLE log_entries RENAME TO log_entries_compact`.execute(db);
      await sql`CREATE TABLE log_entries (id INTEGER PRIMARY KEY, tenant_id TEXT NOT NULL, ts INTEGER NOT NULL, level TEXT, service TEXT,
        host TEXT, trace_id TEXT, span_id TEXT, message TEXT NOT NULL, attributes TEXT NOT NULL DEFAULT '{}')`.execute(db);
      await sql`INSERT INTO log_entries SELECT id, tenant_id, ts, level, service, host, trace_id, span_id, message, ${names}
        FROM log_entries_compact o`.execute(db);
      await sql`DROP TABLE log_entries_compact`.execute(db);
    },
    stored: { before: '{"http.status_code":1}', after: 'blob' },
    storedQuery: sql<{
      attributes: string;
    }>`SELECT CASE typeof(attributes) WHEN 'text' THEN attributes ELSE typeof(attributes) END AS attributes
      FROM log_entries WHERE tenant_id = 'other'`,
  },
  postgres: {
    migration: '0021_postgres_attribute_numbers',
    /** 0022_postgres_blocks comes after it: the rows go back into log_entries, as before both. */
    async rewind(db: Kysely<any>): Promise<void> {
      await sql`CREATE TABLE log_entries (id bigserial NOT NULL, tenant_id text NOT NULL, ts bigint NOT NULL, level text, service text,
        host text, trace_id text, span_id text, message text NOT NULL, attributes jsonb NOT NULL DEFAULT '{}', words text) PARTITION BY RANGE (ts)`.execute(
        db,
      );
      await sql`CREATE INDEX log_entries_tenant_ts ON log_entries (tenant_id, ts, id)`.execute(db);
      await sql`CREATE TABLE log_entries_p2026112000 PARTITION OF log_entries FOR VALUES FROM (${sql.lit(T0)}) TO (${sql.lit(T0 + HOUR)})`.execute(
        db,
      );
      await sql`INSERT INTO log_entries (tenant_id, ts, level, service, host, trace_id, span_id, message, attributes, words)
        SELECT b.tenant_id, e.ts, e.level, e.service, e.host, e.trace_id, e.span_id, e.message, e.attributes, e.words FROM log_blocks b
          CROSS JOIN LATERAL unnest(b.ts, b.level, b.service, b.host, b.trace_id, b.span_id, b.message, b.attributes, b.words) WITH ORDINALITY
            AS e(ts, level, service, host, trace_id, span_id, message, attributes, words, n)
        ORDER BY b.tenant_id, b.first_id, e.n`.execute(db);
      await sql`DROP TABLE log_blocks`.execute(db);
      await sql`UPDATE log_entries l SET attributes = (SELECT jsonb_object_agg(c.name, j.value) FROM jsonb_each(l.attributes) j
          JOIN log_attribute_codes c ON c.tenant_id = l.tenant_id AND c.code = (CASE WHEN length(j.key) = 1
            THEN strpos('0123456789abcdefghijklmnopqrstuvwxyz', j.key) - 1
            ELSE (strpos('0123456789abcdefghijklmnopqrstuvwxyz', left(j.key, 1)) - 1) * 36 + strpos('0123456789abcdefghijklmnopqrstuvwxyz', right(j.key, 1)) - 1 END))
        WHERE l.attributes <> '{}'::jsonb`.execute(db);
    },
    stored: { before: '{"http.status_code": 1}', after: '{"0": 1}' },
    storedQuery: sql<{ attributes: string }>`SELECT a::text AS attributes FROM log_blocks b CROSS JOIN LATERAL unnest(b.attributes) AS a
      WHERE b.tenant_id = 'other'`,
    beforeQuery: sql<{ attributes: string }>`SELECT attributes::text AS attributes FROM log_entries WHERE tenant_id = 'other'`,
  },
} as const;

/** The last migration that rewrites the store's tables. */
const LAST_STORE_MIGRATION = '0022_postgres_blocks';

for (const dialect of DIALECTS) {
  const upgrade = UPGRADES[dialect];
  describe(`log store rows: upgrade of ${dialect} rows stored before migration ${upgrade.migration}`, () => {
    const testDb = createTestDatabase(dialect);
    let store: LogStore;
    let database: Awaited<ReturnType<typeof openDatabase<any>>>;
    let beforeUpgrade: Awaited<ReturnType<LogStore['search']>>['entries'];

    before(async () => {
      const { url } = await testDb;
      database = await openDatabase<any>(url);
      const { db } = database;
      await migrateToLatest(db, logsMigrations, 'logs');
      const current = createLogStore(db, dialect);
      await current.append('acme', SENT);
      await current.append('other', [{ timestamp: T0, level: 'warn', message: 'x', attributes: { 'http.status_code': 1 } }]);
      beforeUpgrade = (
        await current.search({ tenantId: 'acme', condition: searchCondition(''), from: T0, to: T0 + HOUR, page: 1, limit: 10 })
      ).entries;
      await upgrade.rewind(db);
      await sql`DROP TABLE log_attribute_codes`.execute(db);
      // It and every later one run again: the store's later rewrites have nothing to do on SQLite;
      // the migrations after them (accounts, saved searches) are undone first, as their own.
      for (const name of Object.keys(logsMigrations.migrations)
        .filter((name) => name > LAST_STORE_MIGRATION)
        .reverse()) {
        const migration = logsMigrations.migrations[name]!;
        if (!('down' in migration) || !migration.down) throw new Error(`${name} cannot be undone`);
        await migration.down(db);
      }
      await sql`DELETE FROM logs_migrations WHERE name >= ${upgrade.migration}`.execute(db);
      const { rows } = await ('beforeQuery' in upgrade ? upgrade.beforeQuery : upgrade.storedQuery).execute(db);
      assert.deepEqual(rows, [{ attributes: upgrade.stored.before }], 'the rows hold names before the upgrade');
      await migrateToLatest(db, logsMigrations, 'logs');
      store = createLogStore(db, dialect);
    });
    after(async () => {
      await database.close();
      await (await testDb).drop();
    });

    test('every entry reads as before, its attributes under numbers', async () => {
      const { rows } = await upgrade.storedQuery.execute(database.db);
      assert.deepEqual(rows, [{ attributes: upgrade.stored.after }]);
      const afterUpgrade = (
        await store.search({ tenantId: 'acme', condition: searchCondition(''), from: T0, to: T0 + HOUR, page: 1, limit: 10 })
      ).entries;
      // PostgreSQL's entries have new ids in their blocks (0220); SQLite's keep theirs.
      const comparable = (entries: typeof afterUpgrade) => (dialect === 'postgres' ? entries.map(({ id: _, ...entry }) => entry) : entries);
      assert.deepEqual(comparable(afterUpgrade), comparable(beforeUpgrade));
    });

    test('conditions on the upgraded rows, and names numbered per tenant from its field catalogue', async () => {
      const find = async (tenantId: string, query: string) =>
        (await store.search({ tenantId, condition: searchCondition(query), from: T0, to: T0 + HOUR, page: 1, limit: 10 })).entries.map(
          (entry) => entry.message,
        );
      assert.deepEqual(await find('acme', 'http.status_code:503 trace_id:4bf92f3577b34da6a3ce929d0e0e4736'), ['lower-case hex ids']);
      assert.deepEqual(await find('acme', 'http.status_code:>=503 ratio:>1'), ['lower-case hex ids']);
      assert.deepEqual(await find('acme', '10:10 level:custom'), ['upper-case and odd ids']);
      assert.deepEqual(await find('other', 'http.status_code:1'), ['x']);
      await store.append('acme', [{ timestamp: T0 + 10 * MINUTE, message: 'after the upgrade', attributes: { ok: true, fresh: 1 } }]);
      assert.deepEqual(await find('acme', 'ok:true'), ['after the upgrade', 'upper-case and odd ids']);
      assert.deepEqual(await find('acme', 'fresh:1'), ['after the upgrade']);
      assert.deepEqual(await find('acme', 'fresh:>0'), ['after the upgrade']);
    });
  });
}
