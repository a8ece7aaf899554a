import { sql, type Kysely } from 'kysely';
import type { AppendResult, LogEntry } from './log-store.js';
import { DAY, MINUTE, mod } from './minutes.js';
import { hasText, type Condition } from './query/condition.js';
import { compileSqlite, ftsMatchExpression, sqliteFieldValue, sqliteNumberValue, sqliteSortExpression } from './query/compile-sqlite.js';
import { LogStoreCore, type DocumentIdWindow, type ReadDialect, type ReadPlan } from './store-core.js';
import { ftsBody } from './tokenize.js';
import { documentIdsOf, FieldCatalogueCache, prepareEntries, rollupRows, splitByDocumentId } from './write-batch.js';

/** SQLite's reads: bound values as they are, instr for substrings. */
const sqliteReads: ReadDialect = {
  int: (value) => sql`${value}`,
  text: (value) => sql`${value}`,
  sumOfCounts: sql`sum(count)`,
  fieldValue: sqliteFieldValue,
  sortExpression: sqliteSortExpression,
  containsIgnoringCase: (value, needle) => sql`instr(lower(${value}), ${needle.toLowerCase()}) > 0`,
  fieldNameOrder: sql`name`,
  numberValue: sqliteNumberValue,
  calendarStart: (unit) => {
    const day = sql`date(l.ts / 1000, 'unixepoch')`;
    const start =
      unit === 'week'
        ? sql`date(l.ts / 1000, 'unixepoch', '-6 days', 'weekday 1')`
        : unit === 'month'
          ? sql`date(${day}, 'start of month')`
          : unit === 'year'
            ? sql`date(${day}, 'start of year')`
            : sql`date(${day}, 'start of month', printf('-%d months', (CAST(strftime('%m', ${day}) AS INTEGER) - 1) % 3))`;
    return sql`(CAST(strftime('%s', ${start}) AS INTEGER) * 1000)`;
  },
};

/** Rows deleted per retention transaction, so ingestion is never blocked for long. */
const RETENTION_BATCH = 5_000;

/**
 * The SQLite log store: one table, a contentless FTS5 index of our tokens keyed by the entry id,
 * per-minute rollups and a field catalogue (docs/log-store.md).
 */
export class SqliteLogStore extends LogStoreCore {
  readonly #fields = new FieldCatalogueCache();

  /** See DRIVE_FROM_TEXT_ABOVE; tests lower it to cover both plans. */
  readonly #textFirstAbove: number;

  constructor(
    private readonly db: Kysely<any>,
    options: { textFirstAboveIds?: number | undefined; reads?: Kysely<any> | undefined; documentIds?: DocumentIdWindow | undefined } = {},
  ) {
    super(db, options.reads ?? db, sqliteReads, options.documentIds);
    this.#textFirstAbove = options.textFirstAboveIds ?? DRIVE_FROM_TEXT_ABOVE;
  }

  async append(tenantId: string, entries: readonly LogEntry[]): Promise<AppendResult> {
    if (entries.length === 0) return { duplicates: [] };
    const ids = documentIdsOf(entries);
    let duplicates: number[] = [];
    let newFields: ReturnType<FieldCatalogueCache['newFields']> = [];
    // One IMMEDIATE transaction per batch: the write lock is taken up front (no deadlock on upgrade),
    // and with WAL + synchronous=FULL the COMMIT returns only once the batch is on disk.
    await this.db.connection().execute(async (connection) => {
      await sql`BEGIN IMMEDIATE`.execute(connection);
      try {
        let batch: readonly LogEntry[] = entries;
        if (ids.length > 0) {
          // Under the write lock: no other batch can store one of these ids meanwhile.
          const now = this.documentIds.now();
          const { rows: known } = await sql<{ doc_id: string }>`SELECT doc_id FROM log_document_ids
            WHERE tenant_id = ${tenantId} AND expires_at > ${now} AND doc_id IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`.execute(
            connection,
          );
          const split = splitByDocumentId(entries, new Set(known.map((row) => row.doc_id)));
          ({ kept: batch, duplicates } = split);
          await sql`INSERT INTO log_document_ids (tenant_id, doc_id, expires_at)
            SELECT ${tenantId}, value, ${now + this.documentIds.windowMs} FROM json_each(${JSON.stringify(split.newIds)}) WHERE true
            ON CONFLICT (tenant_id, doc_id) DO UPDATE SET expires_at = excluded.expires_at`.execute(connection);
        }
        if (batch.length > 0) newFields = await this.#insert(connection, tenantId, batch);
        await sql`COMMIT`.execute(connection);
      } catch (error) {
        await sql`ROLLBACK`.execute(connection).catch(() => undefined);
        throw error;
      }
    });
    this.#fields.remember(tenantId, newFields);
    return { duplicates };
  }

  /** Inserts a batch inside the caller's transaction; returns the catalogue fields it added. */
  async #insert(connection: Kysely<any>, tenantId: string, entries: readonly LogEntry[]) {
    const prepared = prepareEntries(entries);
    const rows = JSON.stringify(
      prepared.map((entry) => [
        entry.ts,
        entry.level,
        entry.service,
        entry.host,
        entry.trace_id,
        entry.span_id,
        entry.message,
        entry.attributes,
      ]),
    );
    const bodies = JSON.stringify(prepared.map((entry) => ftsBody(entry.message)));
    const rollups = JSON.stringify(rollupRows(prepared).map((row) => [row.minute, row.level, row.service, row.count]));
    const newFields = this.#fields.newFields(tenantId, prepared);
    const ranges = minuteIndexRanges(prepared);
    const { rows: top } = await sql<{ top: number }>`SELECT coalesce(max(id), 0) AS top FROM log_entries`.execute(connection);
    const base = Number(top[0]?.top ?? 0) + 1;
    // json_each turns one bound JSON array into rows: one statement per table, whatever the batch size.
    await sql`INSERT INTO log_entries (id, tenant_id, ts, level, service, host, trace_id, span_id, message, attributes)
      SELECT ${base} + key, ${tenantId}, value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5, value ->> 6, value -> 7
      FROM json_each(${rows})`.execute(connection);
    await sql`INSERT INTO log_entries_fts (rowid, body) SELECT ${base} + key, value FROM json_each(${bodies})`.execute(connection);
    await sql`INSERT INTO log_id_ranges (tenant_id, minute, min_id, max_id)
      SELECT ${tenantId}, value ->> 0, ${base} + (value ->> 1), ${base} + (value ->> 2) FROM json_each(${ranges}) WHERE true
      ON CONFLICT (tenant_id, minute) DO UPDATE SET min_id = min(min_id, excluded.min_id), max_id = max(max_id, excluded.max_id)`.execute(
      connection,
    );
    await sql`INSERT INTO log_rollups (tenant_id, minute, level, service, count)
      SELECT ${tenantId}, value ->> 0, value ->> 1, value ->> 2, value ->> 3 FROM json_each(${rollups}) WHERE true
      ON CONFLICT (tenant_id, minute, level, service) DO UPDATE SET count = count + excluded.count`.execute(connection);
    if (newFields.length > 0) {
      await sql`INSERT INTO log_fields (tenant_id, name, type)
        SELECT ${tenantId}, value ->> 0, value ->> 1 FROM json_each(${JSON.stringify(newFields.map((field) => [field.name, field.type]))}) WHERE true
        ON CONFLICT (tenant_id, name) DO UPDATE SET type = 'string' WHERE log_fields.type <> excluded.type`.execute(connection);
    }
    return newFields;
  }

  async removeOlderThan(tenantId: string, before: number): Promise<number> {
    const cutoff = before - mod(before, DAY);
    let removed = 0;
    for (;;) {
      const batch = await this.db.connection().execute(async (connection) => {
        await sql`BEGIN IMMEDIATE`.execute(connection);
        try {
          const { rows } = await sql<{
            id: number;
          }>`SELECT id FROM log_entries WHERE tenant_id = ${tenantId} AND ts < ${cutoff} LIMIT ${RETENTION_BATCH}`.execute(connection);
          if (rows.length > 0) {
            const ids = JSON.stringify(rows.map((row) => row.id));
            await sql`DELETE FROM log_entries_fts WHERE rowid IN (SELECT value FROM json_each(${ids}))`.execute(connection);
            await sql`DELETE FROM log_entries WHERE id IN (SELECT value FROM json_each(${ids}))`.execute(connection);
          } else {
            await sql`DELETE FROM log_rollups WHERE tenant_id = ${tenantId} AND minute < ${cutoff}`.execute(connection);
            await sql`DELETE FROM log_id_ranges WHERE tenant_id = ${tenantId} AND minute < ${cutoff}`.execute(connection);
          }
          await sql`COMMIT`.execute(connection);
          return rows.length;
        } catch (error) {
          await sql`ROLLBACK`.execute(connection).catch(() => undefined);
          throw error;
        }
      });
      removed += batch;
      if (batch === 0) return removed;
    }
  }

  /**
   * The WHERE clause of a search over [from, end). With text terms, first find the id window of the
   * tenant's rows in that range, so the FTS5 lookup stays inside it; null when the range is empty.
   */
  protected async planWhere(tenantId: string, from: number, end: number, condition: Condition): Promise<ReadPlan | null> {
    let idWindow = { min: 0, max: 0 };
    if (hasText(condition)) {
      const { rows } = await sql<{ lo: number | null; hi: number | null }>`SELECT min(min_id) AS lo, max(max_id) AS hi FROM log_id_ranges
        WHERE tenant_id = ${tenantId} AND minute >= ${from - mod(from, MINUTE)} AND minute < ${end}`.execute(this.reads);
      const window = rows[0];
      if (!window || window.lo === null || window.hi === null) return null;
      idWindow = { min: Number(window.lo), max: Number(window.hi) };
    }
    const matches = compileSqlite(condition, { idWindow });
    if (idWindow.max - idWindow.min > this.#textFirstAbove && hasRequiredTextLookup(condition)) {
      // A wide range: walking (tenant_id, ts) would visit every entry of it, while every result must
      // be among the full-text matches in the window. The unary + keeps SQLite off that index, so it
      // drives the query from the FTS5 matches and checks tenant and time on each row.
      return { where: sql`+l.tenant_id = ${tenantId} AND +l.ts >= ${from} AND +l.ts < ${end} AND (${matches})`, textFirst: true };
    }
    return { where: sql`l.tenant_id = ${tenantId} AND l.ts >= ${from} AND l.ts < ${end} AND (${matches})`, textFirst: false };
  }
}

/**
 * Above this many ids in the window, a query that requires a full-text match is driven from the
 * FTS5 matches rather than from the time index (measured: docs/benchmarks.md, "Log store").
 */
const DRIVE_FROM_TEXT_ABOVE = 200_000;

/** True when every result must satisfy one FTS5 lookup: a text condition, or AND with one. */
function hasRequiredTextLookup(condition: Condition): boolean {
  if (condition.kind === 'text') return ftsMatchExpression(condition.expr) !== null;
  if (condition.kind === 'and') return condition.children.some(hasRequiredTextLookup);
  return false;
}

/** Per minute of the batch: [minute, first index, last index] (ids are base + index). */
function minuteIndexRanges(entries: readonly { ts: number }[]): string {
  const ranges = new Map<number, [number, number, number]>();
  entries.forEach((entry, index) => {
    const minute = entry.ts - mod(entry.ts, MINUTE);
    const range = ranges.get(minute);
    if (range) range[2] = index;
    else ranges.set(minute, [minute, index, index]);
  });
  return JSON.stringify([...ranges.values()]);
}
