/**
 * Why a database write failed, when the reason is the storage rather than the request: the disk is
 * full, the data is read-only, or the database cannot be reached. Each is temporary from a client's
 * point of view (retry later), unlike a bug.
 */
export type StorageProblem = 'full' | 'read-only' | 'unavailable';

/** What a client is told to wait (Retry-After) before sending a request that met a storage problem again. */
export const STORAGE_RETRY_AFTER_SECONDS = 30;

/** Node's socket errors when the database server is down, restarting or unreachable. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * The problem an error of either database names by its code (SQLite's extended codes, PostgreSQL's
 * SQLSTATE, Node's socket errors); undefined for any other error. A SQLite I/O error names no cause:
 * the log store's StorageWatch looks at the data directory for it.
 */
export function storageProblemOf(error: unknown, depth = 0): StorageProblem | undefined {
  if (typeof error !== 'object' || error === null || depth > 4) return undefined;
  const code = (error as { code?: unknown }).code;
  const message = (error as { message?: unknown }).message;
  if (typeof code === 'string') {
    if (code === 'SQLITE_FULL' || code === '53100') return 'full';
    // SQLite: the file or its directory cannot be written; PostgreSQL: a read-only transaction (a standby, default_transaction_read_only).
    if (code.startsWith('SQLITE_READONLY') || code === '25006') return 'read-only';
    // PostgreSQL: connection exceptions (08), the server shutting down or starting (57P01-57P03).
    if (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || UNREACHABLE.has(code)) return 'unavailable';
    // A read replica cancelled the statement for WAL replay ("conflict with recovery"), or a
    // serialization failure: the same statement succeeds when tried again.
    if (code === '40001') return 'unavailable';
  }
  // pg's own words when the server goes away mid-query, a client broken by it is used, or no connection comes in time.
  if (
    typeof message === 'string' &&
    /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed)/.test(
      message,
    )
  )
    return 'unavailable';
  // A refused connection to every address of a name (`localhost`: ::1 and 127.0.0.1).
  if (error instanceof AggregateError) {
    const inner = error.errors.map((each) => storageProblemOf(each, depth + 1));
    if (inner.length > 0 && inner.every((problem) => problem === 'unavailable')) return 'unavailable';
  }
  const cause = (error as { cause?: unknown }).cause;
  return cause === undefined || cause === error ? undefined : storageProblemOf(cause, depth + 1);
}
