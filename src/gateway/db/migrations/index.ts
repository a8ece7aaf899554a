import { migrationSequence } from '../../../shared/db/migrator.js';
import * as m0001 from './0001_init.js';
import * as m0003 from './0003_sso.js';
import * as m0004 from './0004_login_failures.js';
import * as m0005 from './0005_session_details.js';
import * as m0006 from './0006_totp.js';
import * as m0007 from './0007_recovery_codes.js';
import * as m0008 from './0008_mfa_challenges.js';

/**
 * Every gateway migration (docs/architecture.md, "Migrations"): one file each in this folder, named
 * `NNNN_words`, in the order they run. A new one takes the next number.
 */
export const gatewayMigrations = migrationSequence({
  '0001_init': m0001,
  '0003_sso': m0003,
  '0004_login_failures': m0004,
  '0005_session_details': m0005,
  '0006_totp': m0006,
  '0007_recovery_codes': m0007,
  '0008_mfa_challenges': m0008,
});
