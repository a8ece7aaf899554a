import { migrationSequence } from '../../../shared/db/migrator.js';
import * as m0001 from './0001_init.js';
import * as m0003 from './0003_sso.js';
import * as m0004 from './0004_login_failures.js';

/**
 * Every gateway migration (docs/architecture.md, "Migrations"): one file each in this folder, named
 * `NNNN_words`, in the order they run. A new one takes the next number.
 */
export const gatewayMigrations = migrationSequence({
  '0001_init': m0001,
  '0003_sso': m0003,
  '0004_login_failures': m0004,
});
