import { UNPACK_ROWS_SOURCE } from './packed-values.js';
import { PATTERN_FUNCTION, PATTERN_MATCH_SOURCE } from '../../../query/pattern-match-source.js';
import { IDS_PER_SECOND } from '../time-ids.js';
import { SECOND_FULL } from './protocol.js';

/**
 * The code of every SQLite worker thread (protocol.ts), the writer's and the read pool's. Plain
 * JavaScript, started with `eval`, so a worker starts without a TypeScript loader (several times
 * faster than a .ts file's under tsx, and the tests open many databases). It runs
 * nothing but better-sqlite3 calls, each in a `try`.
 */
export const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const SQLite = require(workerData.driver);
const { path, pragmas, readonly } = workerData;
const database = readonly ? new SQLite(path, { readonly: true, fileMustExist: true }) : new SQLite(path);
for (const pragma of pragmas) database.pragma(pragma);
${PATTERN_MATCH_SOURCE}
database.function('${PATTERN_FUNCTION}', { deterministic: true }, gerbangMatch);
// Statements reused by their text (the stores issue a few dozen shapes over and over).
const statements = new Map();
function prepare(text) {
  let statement = statements.get(text);
  if (statement === undefined) {
    statement = database.prepare(text);
    if (readonly && !statement.reader) throw new Error('the read pool runs only statements that return rows');
    if (statements.size >= 256) statements.clear();
    statements.set(text, statement);
  }
  return statement;
}
// A Uint8Array is what a Buffer parameter becomes in the clone; better-sqlite3 binds only Buffers.
const bindable = (value) => (value instanceof Uint8Array && !Buffer.isBuffer(value) ? Buffer.from(value.buffer, value.byteOffset, value.byteLength) : value);
function execute(sql, parameters) {
  const statement = prepare(sql);
  const values = parameters.some((value) => value instanceof Uint8Array) ? parameters.map(bindable) : parameters;
  if (statement.reader) return { rows: statement.all(values) };
  const { changes, lastInsertRowid } = statement.run(values);
  return { changes, lastInsertRowid };
}
// Rows of width values each (packed-values.ts), one run of the statement a row.
function executeRows(sql, packed, width) {
  const statement = prepare(sql);
  unpackRows(packed, width, (values) => statement.run(packed.others.length > 0 ? values.map(bindable) : values));
}
${UNPACK_ROWS_SOURCE}
// A batch's ids (protocol.ts, IdsStep): each entry the next free id of its second, after the last
// stored one, written as a number into the packed rows of the list's later statements.
function giveIds({ seconds, into }, list) {
  const top = prepare('SELECT max(id) AS top FROM log_entries WHERE id BETWEEN ? AND ?');
  const next = new Map();
  const ids = new Float64Array(seconds.length);
  for (let index = 0; index < seconds.length; index += 1) {
    const second = seconds[index];
    const first = second * ${IDS_PER_SECOND};
    let id = next.get(second);
    if (id === undefined) {
      const used = top.get(first, first + ${IDS_PER_SECOND - 1}).top;
      id = used === null ? first : used + 1;
    }
    if (id > first + ${IDS_PER_SECOND - 1}) throw Object.assign(new Error('a second of the batch has no id left'), { code: '${SECOND_FULL}' });
    ids[index] = id;
    next.set(second, id + 1);
  }
  for (const { statement, column, width, first } of into) {
    const { kinds, numbers } = list[statement].parameters;
    for (let at = column, entry = first; at < kinds.length; at += width, entry += 1) numbers[(-2 - kinds[at]) / 3] = ids[entry];
  }
}
parentPort.on('message', (message) => {
  if (message === 'close') {
    database.close();
    parentPort.close();
    return;
  }
  const { id, sql, parameters, list } = message;
  try {
    // A list: its statements in order, up to the first that fails (the caller's transaction then rolls
    // back); the reply holds the rows of the last.
    const run = (statement) =>
      statement.ids ? (giveIds(statement.ids, list), {})
      : statement.width ? (executeRows(statement.sql, statement.parameters, statement.width), {})
      : execute(statement.sql, statement.parameters);
    const result = list ? { rows: list.map(run).at(-1).rows ?? [] } : execute(sql, parameters);
    parentPort.postMessage({ id, ...result, inTransaction: database.inTransaction });
  } catch (error) {
    const { name, message, code } = error ?? {};
    parentPort.postMessage({ id, error: { name, message: message ?? String(error), code }, inTransaction: database.inTransaction });
  }
});
// The connection is open: requests may come (a read's budget no longer pays for the start).
parentPort.postMessage('ready');
`;
