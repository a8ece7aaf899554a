import { chmodSync, closeSync, constants, existsSync, mkdirSync, openSync } from 'node:fs';

/**
 * The data directory holds both services' token-signing keys, the webhook secrets and every user's
 * password hash, and a backup holds the same: only the account that runs the services may read them
 * (docs/operations.md, "File permissions"). Files are 0600 and the directories we create 0700,
 * whatever the umask. A directory that already exists keeps the mode its operator gave it (it may
 * be a shared mount point); the files in it are still private.
 */
export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_DIRECTORY_MODE = 0o700;

/** Creates the directory and any missing parents, each 0700. */
export function privateDirectory(path: string): void {
  if (existsSync(path)) return;
  mkdirSync(path, { recursive: true, mode: PRIVATE_DIRECTORY_MODE });
}

/**
 * Makes sure the file exists and is 0600: created empty if missing, tightened if looser. SQLite
 * creates a database's `-wal`, `-shm` and `-journal` files with the database file's own mode, so a
 * database file made here keeps all of them private.
 */
export function privateFile(path: string): void {
  try {
    closeSync(openSync(path, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, PRIVATE_FILE_MODE));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  // A file from an older version may be 0644.
  tightenIfPresent(path);
}

/**
 * 0600 for each of the files that exists (a database's companions come and go with its connections).
 * One this account does not own (EPERM) is left as it is: its owner chose its mode.
 */
export function tightenIfPresent(...paths: string[]): void {
  for (const path of paths) {
    try {
      chmodSync(path, PRIVATE_FILE_MODE);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'EPERM') throw error;
    }
  }
}
