import { rm, statfs, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AppError } from '../../../shared/errors/app-error.js';
import type { ErrorCode } from '../../../shared/errors/catalogue.js';
import type { Readiness } from '../../../shared/http/readiness.js';
import { STORAGE_RETRY_AFTER_SECONDS, storageProblemOf, type StorageProblem } from '../../../shared/db/storage-problems.js';

/** Below this much free space a data directory counts as full (a batch and its indexes need room). */
export const MIN_FREE_BYTES = 4 * 1_048_576;

const CODES: Record<StorageProblem, ErrorCode> = {
  full: 'LOGS_STORAGE_FULL',
  'read-only': 'LOGS_STORAGE_READ_ONLY',
  unavailable: 'LOGS_DATABASE_UNAVAILABLE',
};

/** A 503 with Retry-After for a storage problem; the cause is logged, never shown. */
export function storageAppError(problem: StorageProblem, cause: unknown): AppError {
  return new AppError(CODES[problem], { headers: { 'retry-after': String(STORAGE_RETRY_AFTER_SECONDS) }, cause });
}

/** Errors a StorageWatch looked at and found to be a storage problem (with the directory probed), and their 503. */
const explained = new WeakMap<object, AppError>();

/** The logs service's catalogue error for what a route threw: a storage problem as its 503, else undefined. */
export function storageErrorOf(error: unknown): AppError | undefined {
  if (error instanceof AppError || typeof error !== 'object' || error === null) return undefined;
  const seen = explained.get(error);
  if (seen) return seen;
  const problem = storageProblemOf(error);
  return problem === undefined ? undefined : storageAppError(problem, error);
}

export interface StorageWatchOptions {
  readiness: Readiness;
  /** The directory of the SQLite database; undefined on PostgreSQL (whose disk is the server's). */
  dataDir: string | undefined;
  now?: () => number;
}

/**
 * Watches the store's writes for a full disk or read-only data: a failed write that names one (or,
 * for SQLite's unnamed I/O errors, a data directory found full or read-only) raises the readiness
 * reason `storage`, so `/readyz` says it, and answers 503 with Retry-After. The reason clears by
 * itself: at the next successful write, or when `/readyz` finds the directory writable with free
 * space again (on PostgreSQL, STORAGE_RETRY_AFTER_SECONDS after it was raised: the next failure
 * raises it again), so that an orchestrator sends traffic again without a restart.
 */
export class StorageWatch {
  readonly #readiness: Readiness;
  readonly #dataDir: string | undefined;
  readonly #now: () => number;
  #raisedAt = 0;

  constructor({ readiness, dataDir, now = Date.now }: StorageWatchOptions) {
    this.#readiness = readiness;
    this.#dataDir = dataDir;
    this.#now = now;
  }

  /**
   * Looks at what a request failed with (the service's `onError` hook, before its error handler):
   * a storage problem raises `storage` (full, read-only), and storageErrorOf then answers it as its 503.
   */
  async observe(error: unknown): Promise<void> {
    if (error instanceof AppError || typeof error !== 'object' || error === null || explained.has(error)) return;
    const problem = storageProblemOf(error) ?? (isIoError(error) ? await this.#directoryProblem() : undefined);
    if (problem === undefined) return;
    explained.set(error, storageAppError(problem, error));
    if (problem !== 'unavailable') {
      this.#readiness.set('storage', { problem });
      this.#raisedAt = this.#now();
    }
  }

  /** What a failed write becomes: its 503 for a storage problem, else the error itself. */
  async explain(error: unknown): Promise<unknown> {
    await this.observe(error);
    return storageErrorOf(error) ?? error;
  }

  /** A write went through: the storage takes writes again. */
  succeeded(): void {
    this.#readiness.clear('storage');
  }

  /** Clears `storage` when the cause is gone (called by `/readyz`). */
  async recheck(): Promise<void> {
    if (!this.#readiness.has('storage')) return;
    const gone =
      this.#dataDir === undefined
        ? this.#now() - this.#raisedAt >= STORAGE_RETRY_AFTER_SECONDS * 1000
        : (await this.#directoryProblem()) === undefined;
    if (gone) this.#readiness.clear('storage');
  }

  /**
   * `full` or `read-only` when the data directory is, else undefined (also on PostgreSQL). A file
   * is written and removed to find out: a file system the kernel made read-only after an error
   * still says "rw" to access(2) and statfs(2).
   */
  async #directoryProblem(): Promise<StorageProblem | undefined> {
    if (this.#dataDir === undefined) return undefined;
    try {
      const { bavail, bsize } = await statfs(this.#dataDir);
      if (bavail * bsize < MIN_FREE_BYTES) return 'full';
    } catch {
      return undefined;
    }
    const probe = join(this.#dataDir, `.write-check-${process.pid}`);
    try {
      await writeFile(probe, 'ok', { flush: true, mode: 0o600 });
      return undefined;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOSPC' || code === 'EDQUOT') return 'full';
      if (code === 'EROFS' || code === 'EACCES' || code === 'EPERM') return 'read-only';
      return undefined;
    } finally {
      await rm(probe, { force: true }).catch(() => undefined);
    }
  }
}

function isIoError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_IOERR') || code === 'SQLITE_CANTOPEN');
}
