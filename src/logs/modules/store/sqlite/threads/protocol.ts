import type { PackedValues } from './packed-values.js';

/**
 * The one protocol between the event loop and a SQLite worker thread (the writer, or a reader of the
 * read pool): the worker opens its connection, says `'ready'`, then answers each request with a reply
 * of the same id, one request at a time; `'close'` closes its connection and ends it.
 */

/** What a worker is started with. */
export interface WorkerData {
  /** better-sqlite3's entry file, resolved by the event loop (the worker has no module resolution of ours). */
  driver: string;
  path: string;
  /** Run once the connection is open. */
  pragmas: readonly string[];
  /** A read pool's worker: a read-only connection to a file that must exist, which runs only statements that return rows. */
  readonly: boolean;
}

/**
 * A statement of a list: its SQL and parameters, (with `width`) one run per row of packed values
 * (packed-values.ts), or (`ids`) a batch's entries given their ids (IdsStep).
 */
export type ListedStatement =
  | { sql: string; parameters: readonly unknown[]; width?: undefined; ids?: undefined }
  | { sql: string; parameters: PackedValues; width: number; ids?: undefined }
  | { ids: IdsStep; sql?: undefined; width?: undefined };

/**
 * A batch's time-ordered ids (time-ids.ts) given on the SQLite thread, inside the batch's transaction:
 * entry `i` takes the next free id of `seconds[i]`, after the last one stored (read here, under the
 * writer), and each id is written into the packed rows of later statements of the list (`into`: the
 * statement's place in the list, the id's column, the row's width, the entry of its first row). A
 * second without ids left fails the list (code SECOND_FULL): the caller then gives the ids itself.
 */
export interface IdsStep {
  seconds: Float64Array;
  into: readonly { statement: number; column: number; width: number; first: number }[];
}

/** The code of the error of an IdsStep whose second has no id left. */
export const SECOND_FULL = 'GERBANG_SECOND_FULL';

/** One statement, or a list run in order up to the first that fails (the reply holds the rows of the last). */
export type Request = { id: number; sql: string; parameters: readonly unknown[] } | { id: number; list: readonly ListedStatement[] };

/** How an error crosses the thread boundary: what the caller's Error is made from again (replyError). */
export interface ErrorReply {
  name?: string | undefined;
  message: string;
  code?: string | undefined;
}

export interface Reply {
  id: number;
  /** Whether the connection is inside a transaction after the statement (it began one, or one is still open). */
  inTransaction: boolean;
  /** A statement that returns rows: its rows. */
  rows?: unknown[];
  /** Any other statement: what it changed. */
  changes?: number;
  lastInsertRowid?: number | bigint;
  error?: ErrorReply;
}

export type FromWorker = Reply | 'ready';
export type ToWorker = Request | 'close';

/** The error a reply carries, as an Error with SQLite's name and code. */
export function replyError(error: ErrorReply): Error {
  return Object.assign(new Error(error.message), { name: error.name ?? 'Error', code: error.code });
}
