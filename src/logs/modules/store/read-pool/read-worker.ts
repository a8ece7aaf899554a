/**
 * A read-pool worker: its own read-only connection to the log store's SQLite file (WAL lets it read
 * while the main connection writes). Runs one statement at a time; the pool stops the whole thread
 * when a statement outlives its budget (better-sqlite3 cannot interrupt a statement).
 */
import { parentPort, workerData } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import type { ReadJobMessage, ReadReplyMessage } from './protocol.js';

const { path } = workerData as { path: string };
const database = new SQLite(path, { readonly: true, fileMustExist: true });
database.pragma('busy_timeout = 5000');
// The same page cache as the main connection (src/shared/db/database.ts), per worker.
database.pragma('cache_size = -65536');

/** Prepared statements by SQL text: the store issues a handful of shapes over and over. */
const statements = new Map<string, SQLite.Statement>();
const MAX_STATEMENTS = 256;

function prepare(text: string): SQLite.Statement {
  let statement = statements.get(text);
  if (statement === undefined) {
    statement = database.prepare(text);
    if (!statement.reader) throw new Error('the read pool runs only statements that return rows');
    if (statements.size >= MAX_STATEMENTS) statements.clear();
    statements.set(text, statement);
  }
  return statement;
}

parentPort!.on('message', ({ id, sql, parameters }: ReadJobMessage) => {
  let reply: ReadReplyMessage;
  try {
    reply = { id, rows: prepare(sql).all(parameters) };
  } catch (error) {
    const { name, message, code } = error as { name?: string; message?: string; code?: string };
    reply = { id, error: { name: name ?? 'Error', message: message ?? String(error), code } };
  }
  parentPort!.postMessage(reply);
});

// The connection is open: the pool may send statements (their budget no longer pays for the start).
parentPort!.postMessage('ready');
