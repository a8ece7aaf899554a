import { STORAGE_RETRY_AFTER_SECONDS, storageProblemOf } from '../../shared/db/storage-problems.js';
import { AppError } from '../../shared/errors/app-error.js';
import { toAppError } from '../../shared/errors/handler.js';

/**
 * The gateway's reading of what a route threw: a database that is full, read-only or unreachable is
 * a 503 a client retries after Retry-After (its cause logged, never shown), not a 500.
 */
export function gatewayErrorOf(error: unknown): AppError {
  if (error instanceof AppError || storageProblemOf(error) === undefined) return toAppError(error);
  return new AppError('STORAGE_UNAVAILABLE', { headers: { 'retry-after': String(STORAGE_RETRY_AFTER_SECONDS) }, cause: error });
}
