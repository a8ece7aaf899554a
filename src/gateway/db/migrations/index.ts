import type { Migration } from 'kysely';
import * as init from './0001_init.js';
import * as sso from './0003_sso.js';
import * as loginFailures from './0004_login_failures.js';

/** Every gateway migration, by name; names sort in the order they run. */
export const gatewayMigrations: Record<string, Migration> = {
  '0001_init': init,
  '0003_sso': sso,
  '0004_login_failures': loginFailures,
};
