import { sql, type CompiledQuery, type Kysely, type RawBuilder } from 'kysely';
import { AttributeCodes, storeAttributeCodes, type AttributeCodeRow } from '../attribute-codes.js';
import { facetDictionaryWrites, loadFacetDictionary } from '../facet-dictionary.js';
import { FacetDictionary, type FacetDictionaryRow } from '../facets.js';
import type { AppendResult, LogEntry } from '../log-store.js';
import type { DocumentIdWindow } from '../store-core.js';
import { ftsBody } from '../indexed-text.js';
import {
  batchRollups,
  documentIdsOf,
  FieldCatalogueCache,
  nextTurn,
  PREPARE_CHUNK,
  prepareEntriesInTurns,
  splitByDocumentId,
  type BatchRollups,
  type PreparedEntry,
} from '../write-batch.js';
import { ftsTableName, hourOfId } from './fts-hours.js';
import { rowInserts, rowWidth } from './sqlite-insert.js';
import { ATTRIBUTES_VALUE, ENTRY_INSERT_COLUMNS, ID_VALUE, isHexId, levelCode, TS_OFFSET_VALUE } from './sqlite-rows.js';
import { packValues, setPackedNumber, type PackedValues } from './threads/packed-values.js';
import type { IdsStep } from './threads/protocol.js';
import { runInOrder, writerThreadOf, type IdsStatement, type RowsStatement } from './threads/write-thread.js';
import { assignIds, firstIdOf, idSecond, idSecondOf, IDS_PER_SECOND, lastIdOf, secondOf } from './time-ids.js';
import { Gate } from '../../../../shared/gate.js';

/**
 * SQLite's write path (docs/log-store.md, "The SQLite thread"): a batch is prepared on the event
 * loop, in turns, before it takes the writer (its rows packed, its facets and index rows as the
 * tenant's dictionary stands). Then, one batch at a time, it is written in one message to the SQLite
 * thread: BEGIN, its time-ordered ids given there (time-ids.ts, protocol.ts IdsStep), its rows, index
 * rows (fts-hours.ts), rollups and catalogue additions, COMMIT. A batch that needs the writer's state
 * on the event loop first (repeated document ids, new attribute names, a changed facet dictionary, a
 * time outside the ids' range, a full second) takes two messages: BEGIN with that state, then the
 * writes given their ids here, with the COMMIT.
 */

/**
 * Appends a batch of one tenant (LogStore.append): prepared on the event loop first, then written in one
 * IMMEDIATE transaction, where repeated document ids are looked up under the writer. The caches learn
 * what it added before the next batch is written.
 */
export async function appendBatch(
  db: Kysely<any>,
  caches: WriterCaches,
  documentIds: DocumentIdWindow,
  tenantId: string,
  entries: readonly LogEntry[],
  prepared?: () => void,
): Promise<AppendResult> {
  if (entries.length === 0) {
    prepared?.();
    return { duplicates: [] };
  }
  const ids = documentIdsOf(entries);
  // Before the writer is ours: while another batch's statements run on the SQLite thread.
  const ready = await prepareBatch(tenantId, entries, caches);
  prepared?.();
  // One batch at a time from here: what it checks of the caches holds until it has committed and
  // the caches learned what it added.
  return caches.writes.run(async () => {
    if (ids.length === 0 && (await writeInOneMessage(db, ready, caches))) return { duplicates: [] };
    let duplicates: number[] = [];
    let written: Written | undefined;
    // One IMMEDIATE transaction per batch: the write lock is taken up front (no deadlock on upgrade),
    // and with WAL + synchronous=FULL the COMMIT returns only once the batch is on disk.
    await inWriteTransaction(
      db,
      async ({ connection, opened, commitWith }) => {
        let batch = ready;
        if (ids.length > 0) {
          // Under the write lock: no other batch can store one of these ids meanwhile.
          const now = documentIds.now();
          const { rows: known } = await sql<{ doc_id: string }>`SELECT doc_id FROM log_document_ids
          WHERE tenant_id = ${tenantId} AND expires_at > ${now} AND doc_id IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`.execute(
            connection,
          );
          const split = splitByDocumentId(entries, new Set(known.map((row) => row.doc_id)));
          duplicates = split.duplicates;
          batch = await withoutPlaces(ready, new Set(duplicates), caches);
          await sql`INSERT INTO log_document_ids (tenant_id, doc_id, expires_at)
          SELECT ${tenantId}, value, ${now + documentIds.windowMs} FROM json_each(${JSON.stringify(split.newIds)}) WHERE true
          ON CONFLICT (tenant_id, doc_id) DO UPDATE SET expires_at = excluded.expires_at`.execute(connection);
        }
        if (batch.entries.length > 0) written = await writePrepared(connection, batch, caches, opened[0] as BatchState, commitWith);
      },
      () => {
        if (written) learnWritten(caches, tenantId, written);
      },
      // Read with the BEGIN, in one message: for the batch as prepared, which holds every second and
      // hour of what is written (fewer when repeated document ids leave the batch).
      batchStateQuery(tenantId, ready.entries).compile(db),
    );
    return { duplicates };
  });
}

/** What the caches learn once a batch committed, before the next batch is written. */
export function learnWritten(caches: WriterCaches, tenantId: string, written: Written): void {
  caches.fields.remember(tenantId, written.newFields);
  caches.codes.remember(tenantId, written.newCodes);
  caches.facets.remember(tenantId, written.newValues, written.newlyUnfaceted);
  caches.hours.remember(tenantId, written.hours);
}

/**
 * Writes a prepared batch in one message to the SQLite thread, its ids given there: true once
 * committed. False, having changed nothing, when the batch needs the writer's state on the event loop
 * first (the module comment), or when the thread refused the list: a second without ids left, an
 * hour's index table dropped meanwhile (retention): the caller then writes it the other way.
 */
async function writeInOneMessage(db: Kysely<any>, batch: PreparedBatch, caches: WriterCaches): Promise<boolean> {
  const { tenantId } = batch;
  const thread = writerThreadOf(db);
  if (!thread || !batch.packed || !batch.indexed || !batch.inIdRange) return false;
  if (batch.facetsAt !== caches.facets.stateOf(tenantId)) return false;
  const { writes, written, idsInto } = batchWrites(db, batch, {
    rows: batch.packed,
    indexed: batch.indexed,
    knownHour: (hour) => caches.hours.has(tenantId, hour),
    displaced: [],
    newCodes: [],
    newValues: batch.facets!.newValues,
    newlyUnfaceted: batch.facets!.newlyUnfaceted,
  });
  // The list: BEGIN, the ids, the writes (whose places in the list are 2 on), COMMIT.
  const ids: IdsStatement = {
    ids: {
      seconds: Float64Array.from(batch.entries, (entry) => secondOf(entry.ts)),
      into: idsInto.map((target) => ({ ...target, statement: target.statement + 2 })),
    },
  };
  try {
    await db.connection().execute(async (connection) => {
      try {
        await runInOrder(connection, [sql`BEGIN IMMEDIATE`.compile(connection), ids, ...writes, sql`COMMIT`.compile(connection)]);
      } catch (error) {
        await sql`ROLLBACK`.execute(connection).catch(() => undefined);
        throw error;
      }
    });
  } catch (error) {
    // Rolled back: the other way reads the writer's state first (and fails alike if the thread stopped).
    if (thread.stopped()) throw error;
    return false;
  }
  learnWritten(caches, tenantId, written);
  return true;
}

/**
 * Runs `work` in an IMMEDIATE transaction on the writer's connection; `committed` before another may
 * start. Each message to the SQLite thread is a hop that the batch after this one waits behind, so
 * the `opening` query (if any) goes with the BEGIN, and `work` may end with its writes and the COMMIT
 * in one list (WriteTransaction).
 */
export async function inWriteTransaction<T>(
  db: Kysely<any>,
  work: (transaction: WriteTransaction) => Promise<T>,
  committed?: () => void,
  opening?: CompiledQuery,
): Promise<T> {
  return db.connection().execute(async (connection) => {
    let open = true;
    const commitWith = async (writes: readonly (CompiledQuery | RowsStatement)[]): Promise<void> => {
      await runInOrder(connection, [...writes, sql`COMMIT`.compile(connection)]);
      open = false;
    };
    try {
      const opened = await runInOrder(connection, [sql`BEGIN IMMEDIATE`.compile(connection), ...(opening ? [opening] : [])]);
      const result = await work({ connection, opened, commitWith });
      if (open) await sql`COMMIT`.execute(connection);
      committed?.();
      return result;
    } catch (error) {
      await sql`ROLLBACK`.execute(connection).catch(() => undefined);
      throw error;
    }
  });
}

const ENTRY_WIDTH = rowWidth(ENTRY_INSERT_COLUMNS);
const FTS_INSERT_COLUMNS = ['rowid', 'body', 'facets'];
const FTS_WIDTH = FTS_INSERT_COLUMNS.length;

/** What inWriteTransaction hands its work. */
interface WriteTransaction {
  connection: Kysely<any>;
  /** The rows of the `opening` query, read in the same message as the BEGIN. */
  opened: readonly unknown[];
  /** Runs `writes`, then the COMMIT, in one message to the SQLite thread: the transaction ends there. */
  commitWith: (writes: readonly (CompiledQuery | RowsStatement)[]) => Promise<void>;
}

/** What a batch's write added that the caches learn once it is committed. */
interface Written {
  newFields: ReturnType<FieldCatalogueCache['newFields']>;
  newCodes: AttributeCodeRow[];
  newValues: FacetDictionaryRow[];
  newlyUnfaceted: string[];
  /** The hours of its index rows: their tables exist. */
  hours: number[];
}

/**
 * Writes a batch of one tenant inside the caller's transaction: entries under time-ordered ids,
 * their words and facets, displaced ids, rollups, new catalogue fields and fields that stop being
 * faceted. Also what the migration to time-ordered ids re-stores every entry with.
 */
export async function writeEntries(
  connection: Kysely<any>,
  tenantId: string,
  entries: readonly LogEntry[],
  caches: WriterCaches,
): Promise<Written> {
  return writePrepared(connection, await prepareBatch(tenantId, entries, caches), caches);
}

/** What a writer keeps between batches: read while a batch is prepared, updated only under `writes`, once a batch committed. */
export interface WriterCaches {
  fields: FieldCatalogueCache;
  facets: FacetDictionary;
  codes: AttributeCodes;
  hours: KnownHours;
  /** One batch at a time from its check of the caches to their update once it committed (appendBatch). */
  writes: Gate;
}

export function writerCaches(): WriterCaches {
  return {
    fields: new FieldCatalogueCache(),
    facets: new FacetDictionary(),
    codes: new AttributeCodes(),
    hours: new KnownHours(),
    writes: new Gate(1),
  };
}

/**
 * The hours whose index table (fts-hours.ts) a committed batch wrote to, by tenant: a batch of them
 * sends no statements that make the table. Retention forgets a tenant's (it drops tables); a table
 * dropped otherwise fails the batch's list on the SQLite thread, which is then written the other way.
 */
export class KnownHours {
  readonly #byTenant = new Map<string, Set<number>>();

  has(tenantId: string, hour: number): boolean {
    return this.#byTenant.get(tenantId)?.has(hour) ?? false;
  }

  remember(tenantId: string, hours: readonly number[]): void {
    let known = this.#byTenant.get(tenantId);
    if (!known) this.#byTenant.set(tenantId, (known = new Set()));
    for (const hour of hours) known.add(hour);
  }

  forget(tenantId: string): void {
    this.#byTenant.delete(tenantId);
  }
}

/**
 * What a batch's write can compute before it takes the writer, so that with batches in flight it
 * runs beside another batch's statements: the entries cleaned and in time order (one second's ids
 * then follow the order of their times where they can), each with its place in the batch; the
 * values of their rows but the ids; their words for the index; rollups and new catalogue fields;
 * and their facets, as the tenant's dictionary stood (`facetsAt`): taken again under the writer
 * when the dictionary changed meanwhile.
 */
interface PreparedBatch {
  tenantId: string;
  entries: PreparedEntry[];
  places: number[];
  /** ENTRY_INSERT_COLUMNS' values of each entry, its id and time offset (0 here) filled in under the writer. */
  entryValues: unknown[];
  /**
   * The same packed for the SQLite thread (packed-values.ts), made here rather than under the writer;
   * undefined when a name had no number yet: the writer gives it one, then encodes and packs.
   */
  packed: PackedValues | undefined;
  bodies: string[];
  rollups: BatchRollups[];
  newFields: ReturnType<FieldCatalogueCache['newFields']>;
  facets: ReturnType<FacetDictionary['facetsOf']> | undefined;
  facetsAt: string | undefined;
  /** The index rows with these facets, by the hour of each entry's second (its id's, unless displaced), their ids 0. */
  indexed: IndexRows | undefined;
  /** Every entry's second has ids (time-ids.ts): none is displaced unless its second is full. */
  inIdRange: boolean;
}

/** A batch's index rows (FTS_INSERT_COLUMNS) by hour of their ids, packed; the rows of each hour hold consecutive entries from `first`. */
type IndexRows = Map<number, { first: number; rows: PackedValues }>;

function indexRows(
  bodies: readonly string[],
  facets: readonly (readonly string[])[],
  hourOf: (index: number) => number,
  idOf: (index: number) => number,
): IndexRows {
  const byHour = new Map<number, { first: number; values: unknown[] }>();
  for (let index = 0; index < bodies.length; index += 1) {
    const hour = hourOf(index);
    let group = byHour.get(hour);
    if (!group) byHour.set(hour, (group = { first: index, values: [] }));
    group.values.push(idOf(index), bodies[index], facets[index]!.join(' '));
  }
  return new Map([...byHour].map(([hour, { first, values }]) => [hour, { first, rows: packValues(values) }]));
}

async function prepareBatch(tenantId: string, entries: readonly LogEntry[], caches: WriterCaches): Promise<PreparedBatch> {
  const cleaned = await prepareEntriesInTurns(entries);
  const places = cleaned.map((_, place) => place).sort((a, b) => cleaned[a]!.ts - cleaned[b]!.ts);
  return preparedOf(
    tenantId,
    places.map((place) => cleaned[place]!),
    places,
    caches,
  );
}

async function preparedOf(tenantId: string, sorted: PreparedEntry[], places: number[], caches: WriterCaches): Promise<PreparedBatch> {
  const entryValues = new Array<unknown>(sorted.length * ENTRY_WIDTH);
  const bodies = new Array<string>(sorted.length);
  let encoded = true;
  let at = 0;
  for (let index = 0; index < sorted.length; index += 1) {
    if (index > 0 && index % PREPARE_CHUNK === 0) await nextTurn();
    const entry = sorted[index]!;
    entryValues[at++] = 0;
    entryValues[at++] = tenantId;
    // The time less its id's second: right unless the entry is displaced (writePrepared sets it then).
    entryValues[at++] = entry.ts - idSecondOf(entry.ts) * 1000;
    entryValues[at++] = levelCode(entry.level);
    entryValues[at++] = entry.service;
    entryValues[at++] = entry.host;
    // Each id's hex (made bytes by the insert) or its text.
    const { trace_id: trace, span_id: span } = entry;
    const traceHex = isHexId(trace);
    const spanHex = isHexId(span);
    entryValues[at++] = traceHex ? trace : null;
    entryValues[at++] = traceHex ? null : trace;
    entryValues[at++] = spanHex ? span : null;
    entryValues[at++] = spanHex ? null : span;
    entryValues[at++] = entry.message;
    const attributes = encoded ? caches.codes.encode(tenantId, entry.attributes) : undefined;
    if (attributes === undefined) encoded = false;
    entryValues[at++] = attributes;
    bodies[index] = ftsBody(entry.message);
  }
  await nextTurn();
  // Each of the steps below takes milliseconds for a batch of thousands: a turn of the event loop
  // between them, so that the SQLite writer's reply to another batch is not held behind them all.
  const packed = encoded ? packValues(entryValues) : undefined;
  await nextTurn();
  const rollups = batchRollups(sorted);
  // The catalogue only grows: fields it learns meanwhile are stored again, which changes nothing.
  const newFields = caches.fields.newFields(tenantId, sorted);
  await nextTurn();
  // Taken last: the dictionary may have changed while this batch waited for turns of the event loop
  // (and if it changes from here on, the writer takes the facets again: writePrepared).
  const facetsAt = caches.facets.stateOf(tenantId);
  const facets = facetsAt === undefined ? undefined : caches.facets.facetsOf(tenantId, sorted);
  if (facets) await nextTurn();
  return {
    tenantId,
    entries: sorted,
    places,
    entryValues,
    packed,
    bodies,
    rollups,
    newFields,
    facets,
    facetsAt,
    // In time order, so each hour's entries are consecutive.
    indexed:
      facets &&
      indexRows(
        bodies,
        facets.facets,
        (index) => hourOfSecond(idSecondOf(sorted[index]!.ts)),
        () => 0,
      ),
    inIdRange: sorted.every((entry) => idSecondOf(entry.ts) === secondOf(entry.ts)),
  };
}

/** The batch without the entries at `places` (repeated document ids), prepared again: rare. */
function withoutPlaces(batch: PreparedBatch, places: ReadonlySet<number>, caches: WriterCaches): Promise<PreparedBatch> {
  if (places.size === 0) return Promise.resolve(batch);
  const kept = batch.places.flatMap((place, index) => (places.has(place) ? [] : [index]));
  return preparedOf(
    batch.tenantId,
    kept.map((index) => batch.entries[index]!),
    kept.map((index) => batch.places[index]!),
    caches,
  );
}

/** The hour (its index table's, fts-hours.ts) of a second's ids. */
const hourOfSecond = (second: number): number => hourOfId(firstIdOf(second));

/** What the writer reads before a batch's writes (batchStateQuery): as JSON, one row. */
interface BatchState {
  /** How many attribute numbers the tenant has (attribute-codes.ts). */
  codes: number;
  /** [second, the last id used in it or null] for each second of the batch. */
  used: string;
  /** Which of the batch's hours have their index table (an entry displaced into another hour finds out below). */
  known: string;
}

/** The writer's one read before a batch's writes (under the writer: no other batch writes meanwhile). */
function batchStateQuery(tenantId: string, entries: readonly PreparedEntry[]): RawBuilder<BatchState> {
  const seconds = [...new Set(entries.map((entry) => idSecondOf(entry.ts)))];
  const hours = [...new Set(seconds.map(hourOfSecond))];
  return sql<BatchState>`SELECT
      (SELECT count(*) FROM log_attribute_codes WHERE tenant_id = ${tenantId}) AS codes,
      (SELECT json_group_array(json_array(value, (SELECT max(id) FROM log_entries
        WHERE id BETWEEN value * ${IDS_PER_SECOND} AND value * ${IDS_PER_SECOND} + ${IDS_PER_SECOND - 1}))) FROM json_each(${JSON.stringify(seconds)})) AS used,
      (SELECT json_group_array(hour) FROM log_fts_hours
        WHERE tenant_id = ${tenantId} AND hour IN (SELECT value FROM json_each(${JSON.stringify(hours)}))) AS known`;
}

/**
 * Writes a prepared batch under the writer: `opened` is its state if read already (with the BEGIN), and
 * `finish` runs the batch's list of writes (with the COMMIT, from append).
 */
async function writePrepared(
  connection: Kysely<any>,
  batch: PreparedBatch,
  caches: WriterCaches,
  opened?: BatchState,
  finish: (writes: readonly (CompiledQuery | RowsStatement)[]) => Promise<unknown> = (writes) => runInOrder(connection, writes),
): Promise<Written> {
  const { tenantId, entries: prepared, entryValues } = batch;
  await loadFacetDictionary(connection, tenantId, caches.facets);
  const facetsHeld = batch.facets !== undefined && batch.facetsAt === caches.facets.stateOf(tenantId);
  const { facets, newValues, newlyUnfaceted } = facetsHeld ? batch.facets! : caches.facets.facetsOf(tenantId, prepared);
  const state = opened ?? (await batchStateQuery(tenantId, prepared).execute(connection)).rows[0]!;
  const used = JSON.parse(state.used) as [number, number | null][];
  await caches.codes.sync(connection, tenantId, Number(state.codes));
  // Names without a number (rare: a tenant's first batches, new fields) are numbered here, then every
  // entry's attributes encoded with them. An encoding made before stays right: numbers never change.
  let newCodes: AttributeCodeRow[] = [];
  let rows = batch.packed;
  if (!rows) {
    const numbered = caches.codes.numbered(
      tenantId,
      prepared.map((entry) => entry.attributes),
    );
    newCodes = numbered.rows;
    prepared.forEach((entry, index) => (entryValues[index * ENTRY_WIDTH + ATTRIBUTES_VALUE] = numbered.encode(entry.attributes)));
    rows = packValues(entryValues);
  }
  const known = new Set(JSON.parse(state.known) as number[]);
  const lastUsed = new Map(used.map(([second, top]) => [second, top ?? undefined]));
  const ids = await assignIds(
    prepared.map((entry) => entry.ts),
    async (second) => {
      if (lastUsed.has(second)) return lastUsed.get(second);
      // A second this batch spilled into (more than 2^21 entries in one second): rare.
      const { rows } = await sql<{ top: number | null }>`SELECT max(id) AS top FROM log_entries
        WHERE id BETWEEN ${firstIdOf(second)} AND ${lastIdOf(second)}`.execute(connection);
      return rows[0]?.top === null || rows[0]?.top === undefined ? undefined : Number(rows[0].top);
    },
  );
  const displaced = prepared.flatMap((entry, index) => (ids[index]!.displaced ? [[ids[index]!.id, entry.ts]] : []));
  for (let index = 0; index < prepared.length; index += 1) {
    const { id, displaced } = ids[index]!;
    setPackedNumber(rows, index * ENTRY_WIDTH + ID_VALUE, id);
    // Prepared as the time less its own second: another second's id, another offset.
    if (displaced) setPackedNumber(rows, index * ENTRY_WIDTH + TS_OFFSET_VALUE, prepared[index]!.ts - idSecond(id) * 1000);
  }
  // The index rows as prepared, given their ids, unless the facets changed or an entry was displaced
  // (its id then lies in another second, perhaps another hour).
  let indexed = facetsHeld && displaced.length === 0 ? batch.indexed : undefined;
  if (indexed) {
    for (const { first, rows: hourRows } of indexed.values()) {
      for (let row = 0; row * FTS_WIDTH < hourRows.kinds.length; row += 1) setPackedNumber(hourRows, row * FTS_WIDTH, ids[first + row]!.id);
    }
  } else {
    indexed = indexRows(
      batch.bodies,
      facets,
      (index) => hourOfId(ids[index]!.id),
      (index) => ids[index]!.id,
    );
  }
  const { writes, written } = batchWrites(connection, batch, {
    rows,
    indexed,
    knownHour: (hour) => known.has(hour),
    displaced,
    newCodes,
    newValues,
    newlyUnfaceted,
  });
  await finish(writes);
  return written;
}

/** What a batch writes besides its prepared parts: its rows and index rows (their ids given or to be given), and what the writer found. */
interface BatchParts {
  rows: PackedValues;
  indexed: IndexRows;
  /** Whether an hour's index table exists. */
  knownHour: (hour: number) => boolean;
  /** [id, time] of each displaced entry. */
  displaced: number[][];
  newCodes: AttributeCodeRow[];
  newValues: FacetDictionaryRow[];
  newlyUnfaceted: string[];
}

/**
 * A batch's writes in order, for one message to the SQLite thread (threads/write-thread.ts,
 * runInOrder), and where its ids go in them (`idsInto`, for an IdsStep: the entries' rows first, then
 * each hour's index rows).
 */
function batchWrites(
  compiler: Kysely<any>,
  batch: PreparedBatch,
  parts: BatchParts,
): { writes: (CompiledQuery | RowsStatement)[]; written: Written; idsInto: IdsStep['into'] } {
  const { tenantId, newFields } = batch;
  const { rows, indexed, displaced, newCodes, newValues, newlyUnfaceted } = parts;
  const writes: (CompiledQuery | RowsStatement)[] = [rowInserts('log_entries', ENTRY_INSERT_COLUMNS, rows)];
  const idsInto: { statement: number; column: number; width: number; first: number }[] = [
    { statement: 0, column: ID_VALUE, width: ENTRY_WIDTH, first: 0 },
  ];
  if (newCodes.length > 0) writes.push(storeAttributeCodes(compiler, tenantId, newCodes).compile());
  // Each hour of ids has its table (fts-hours.ts), made at its first entry. Contentless: the text lives
  // once, in log_entries; the index holds our own tokens (query/tokenize.ts) and the entry's facets. No
  // deletes (retention drops whole tables), so no per-entry sizes are kept (columnsize=0).
  for (const [hour, { first, rows: hourRows }] of indexed) {
    const table = sql.table(ftsTableName(tenantId, hour));
    if (!parts.knownHour(hour)) {
      writes.push(
        sql`INSERT INTO log_fts_hours (tenant_id, hour) VALUES (${tenantId}, ${hour}) ON CONFLICT DO NOTHING`.compile(compiler),
        sql`CREATE VIRTUAL TABLE IF NOT EXISTS ${table} USING fts5(body, facets, content='', columnsize=0)`.compile(compiler),
        // FTS5 merges a level's segments once it holds `automerge` of them (default 4): an hour of
        // large batches rewrites each posting too often; 8 nearly halves that, and lookups cost the
        // same (docs/performance-notes.md, "SQLite store").
        sql`INSERT INTO ${table} (${table}, rank) VALUES ('automerge', 8)`.compile(compiler),
      );
    }
    idsInto.push({ statement: writes.length, column: 0, width: FTS_WIDTH, first });
    writes.push(rowInserts(ftsTableName(tenantId, hour), FTS_INSERT_COLUMNS, hourRows));
  }
  if (displaced.length > 0) {
    writes.push(
      sql`INSERT INTO log_displaced (id, tenant_id, ts) SELECT value ->> 0, ${tenantId}, value ->> 1
      FROM json_each(${JSON.stringify(displaced)})`.compile(compiler),
    );
  }
  // Per minute and per hour (the hourly tables answer counts over days).
  for (const { table, hostTable, indexTable, rows, hostRows, indexRows } of batch.rollups) {
    const rollups = JSON.stringify(rows.map((row) => [row.minute, row.level, row.service, row.count]));
    const hostRollups = JSON.stringify(hostRows.map((row) => [row.minute, row.host, row.count]));
    const indexRollups = JSON.stringify(indexRows.map((row) => [row.minute, row.idx, row.count]));
    writes.push(
      sql`INSERT INTO ${sql.table(table)} (tenant_id, minute, level, service, count)
      SELECT ${tenantId}, value ->> 0, value ->> 1, value ->> 2, value ->> 3 FROM json_each(${rollups}) WHERE true
      ON CONFLICT (tenant_id, minute, level, service) DO UPDATE SET count = count + excluded.count`.compile(compiler),
      sql`INSERT INTO ${sql.table(hostTable)} (tenant_id, minute, host, count)
      SELECT ${tenantId}, value ->> 0, value ->> 1, value ->> 2 FROM json_each(${hostRollups}) WHERE true
      ON CONFLICT (tenant_id, minute, host) DO UPDATE SET count = count + excluded.count`.compile(compiler),
      sql`INSERT INTO ${sql.table(indexTable)} (tenant_id, minute, idx, count)
      SELECT ${tenantId}, value ->> 0, value ->> 1, value ->> 2 FROM json_each(${indexRollups}) WHERE true
      ON CONFLICT (tenant_id, minute, idx) DO UPDATE SET count = count + excluded.count`.compile(compiler),
    );
  }
  if (newFields.length > 0) {
    writes.push(
      sql`INSERT INTO log_fields (tenant_id, name, type)
      SELECT ${tenantId}, value ->> 0, value ->> 1 FROM json_each(${JSON.stringify(newFields.map((field) => [field.name, field.type]))}) WHERE true
      ON CONFLICT (tenant_id, name) DO UPDATE SET type = 'string' WHERE log_fields.type <> excluded.type`.compile(compiler),
    );
  }
  writes.push(...facetDictionaryWrites(compiler, tenantId, newValues, newlyUnfaceted));
  return { writes, written: { newFields, newCodes, newValues, newlyUnfaceted, hours: [...indexed.keys()] }, idsInto };
}
