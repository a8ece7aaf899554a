import { AsyncLocalStorage } from 'node:async_hooks';
import { AppError } from '../../../shared/errors/app-error.js';

/**
 * The time budget of one store read (search, histogram, fields, distinct): every statement it runs
 * sees the same deadline through AsyncLocalStorage, so the read pool and the statement guards need
 * no extra parameter threaded through the store code.
 */
const current = new AsyncLocalStorage<{ readonly deadline: number }>();

/** A read ran past its budget: 503 LOGS_QUERY_TIMEOUT wherever the store was called from. */
export class QueryTimeoutError extends AppError {
  constructor(cause?: unknown) {
    super('LOGS_QUERY_TIMEOUT', { cause });
    this.name = 'QueryTimeoutError';
  }
}

/** The deadline (epoch ms) of the read this code runs for; undefined outside a budget. */
export function currentDeadline(): number | undefined {
  return current.getStore()?.deadline;
}

/** Throws QueryTimeoutError when the current read's deadline has passed (checked before each statement). */
export function checkDeadline(): void {
  const deadline = currentDeadline();
  if (deadline !== undefined && Date.now() >= deadline) throw new QueryTimeoutError();
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
