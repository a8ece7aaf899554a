import { AsyncLocalStorage } from 'node:async_hooks';
import { AppError } from '../../../shared/errors/app-error.js';

/**
 * The time budget of one store read (search, histogram, fields, distinct) and the client it answers:
 * every statement it runs sees the same deadline and client through AsyncLocalStorage, so the read
 * pool and the statement guards need no extra parameter threaded through the store code. One
 * storage for both: each storage in use adds to the cost of every promise of the process
 * (docs/performance-notes.md, "Log store").
 */
const current = new AsyncLocalStorage<{ readonly deadline?: number; readonly client?: WaitingClient }>();

/**
 * What a read knows of the client it answers: whether it left, and a way to learn when it leaves.
 * Nothing is set up per request until a statement asks.
 */
export interface WaitingClient {
  readonly gone: boolean;
  /** Calls `listener` once the client leaves (not if it left already: ask `gone` first); returns what stops listening. */
  onGone(listener: () => void): () => void;
}

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
 * Runs `work` (a request's handler) for a client that may leave: once it is gone, the store's reads
 * start no more statements and the SQLite read pool stops the one running (QueryAbortedError), so
 * a closed browser tab frees the read workers instead of holding them until the read's budget.
 */
export function whileClientWaits<T>(waiting: WaitingClient, work: () => T): T {
  return current.run({ client: waiting }, work);
}

/** The client the current read answers; undefined outside a request. */
export function currentClient(): WaitingClient | undefined {
  return current.getStore()?.client;
}

/**
 * The identity of the read this code runs for (one object per budgeted read, per request outside
 * one): the read replicas keep a read's statements on one server with it. Undefined outside both.
 */
export function currentRead(): object | undefined {
  return current.getStore();
}

/** The deadline (epoch ms) of the read this code runs for; undefined outside a budget. */
export function currentDeadline(): number | undefined {
  return current.getStore()?.deadline;
}

/** Throws when the current read's deadline has passed or its client left (checked before each statement). */
export function checkDeadline(): void {
  const deadline = currentDeadline();
  if (deadline !== undefined && Date.now() >= deadline) throw new QueryTimeoutError();
  if (currentClient()?.gone) throw new QueryAbortedError();
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
  const running = current.run({ deadline, client: currentClient() }, work);
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
