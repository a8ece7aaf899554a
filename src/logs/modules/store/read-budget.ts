import { AsyncLocalStorage } from 'node:async_hooks';
import { AppError } from '../../../shared/errors/app-error.js';

/**
 * The time budget of one store read (search, histogram, fields, distinct): every statement it runs
 * sees the same deadline through AsyncLocalStorage, so the read pool and the statement guards need
 * no extra parameter threaded through the store code.
 */
const current = new AsyncLocalStorage<{ readonly deadline: number }>();
/** The signal of the client a read answers (whileClientWaits), aborted when it leaves. */
const client = new AsyncLocalStorage<AbortSignal>();

/** A read ran past its budget: 503 LOGS_QUERY_TIMEOUT wherever the store was called from. */
export class QueryTimeoutError extends AppError {
  constructor(cause?: unknown) {
    super('LOGS_QUERY_TIMEOUT', { cause });
    this.name = 'QueryTimeoutError';
  }
}

/**
 * The client a read answers left before its answer: nobody waits for it any more. 499, as nginx
 * logs a client that closed its request; no client receives it.
 */
export class QueryAbortedError extends AppError {
  constructor() {
    super('LOGS_CLIENT_GONE');
    this.name = 'QueryAbortedError';
  }
}

/**
 * Runs `work` (a request's handler) for a client that may leave: once `signal` aborts, the store's
 * reads start no more statements and the SQLite read pool stops the one running (QueryAbortedError),
 * so a closed browser tab frees the read workers instead of holding them until the read's budget.
 */
export function whileClientWaits<T>(signal: AbortSignal, work: () => T): T {
  return client.run(signal, work);
}

/** The signal of the client the current read answers; undefined outside a request. */
export function currentSignal(): AbortSignal | undefined {
  return client.getStore();
}

/** The deadline (epoch ms) of the read this code runs for; undefined outside a budget. */
export function currentDeadline(): number | undefined {
  return current.getStore()?.deadline;
}

/** Throws when the current read's deadline has passed or its client left (checked before each statement). */
export function checkDeadline(): void {
  const deadline = currentDeadline();
  if (deadline !== undefined && Date.now() >= deadline) throw new QueryTimeoutError();
  if (currentSignal()?.aborted) throw new QueryAbortedError();
}

/** PostgreSQL's query_canceled (57014): statement_timeout fired. */
function isPostgresCancel(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === '57014';
}

/**
 * Runs `work` with a deadline `timeoutMs` from now and answers QueryTimeoutError at the deadline at
 * the latest, even if a statement is still running (the read pool stops its worker; PostgreSQL
 * cancels it through statement_timeout).
 */
export async function withBudget<T>(timeoutMs: number, work: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new QueryTimeoutError()), timeoutMs);
  });
  const running = current.run({ deadline }, work);
  // The losing side must not surface as an unhandled rejection.
  running.catch(() => undefined);
  try {
    return await Promise.race([running, expired]);
  } catch (error) {
    if (isPostgresCancel(error)) throw new QueryTimeoutError(error);
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
