import type { AnyMigration } from '../../../shared/db/migrator.js';
import { logStoreMigrations } from '../../modules/store/migrations.js';
import { apmMigrations } from '../../modules/apm/apm.migrations.js';
import { infraMigrations } from '../../modules/infra/infra.migrations.js';
import * as accounts from './0001_accounts.js';
import * as alerts from './0200_alerts.js';
import * as dashboards from './0400_dashboards.js';
import * as ingestRole from './0500_ingest_role.js';
import * as loginFailures from './0600_login_failures.js';
import * as apiKeys from './0700_api_keys.js';

/**
 * Every logs-service migration, by name; names sort in the order they run. The log store's own
 * migrations (names from `0100_`) run after the account tables.
 */
export const logsMigrations: Record<string, AnyMigration> = {
  '0001_accounts': accounts,
  ...logStoreMigrations,
  '0200_alerts': alerts,
  '0400_dashboards': dashboards,
  ...apmMigrations,
  ...infraMigrations,
  '0500_ingest_role': ingestRole,
  '0600_login_failures': loginFailures,
  '0700_api_keys': apiKeys,
};
